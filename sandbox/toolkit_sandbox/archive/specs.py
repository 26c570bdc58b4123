"""The tasks of interface C as requested: the operations, formats and limits, and the
validation of one task (`spec`) or of a job's tasks as a whole (`job_specs`) into a
`Spec`, or a 422 naming each field at fault.

Nothing here touches the store: `tasks` creates what a `Spec` describes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from toolkit_sandbox.archive.http import invalid
from toolkit_sandbox.interface import ErrorAnswer

UPLOAD, ARCHIVE, EXPORT = "import/upload", "archive", "export/url"
OPERATIONS = (UPLOAD, ARCHIVE, EXPORT)
FORMATS = ("zip", "rar", "7z", "tar", "tar.gz", "tar.bz2")
ENGINE, ENGINE_VERSION = "archivetool", "2.1"
# Engine versions as the docs write them ("2016", "2.1"); any such version is accepted
# and echoed (which versions the real engine has is not documented).
ENGINE_VERSION_FORM = re.compile(r"[0-9]{1,6}(\.[0-9]{1,6}){0,3}")
# Task names in a job: "only alphanumeric characters, - and _" (the jobs docs).
TASK_NAME = re.compile(r"[A-Za-z0-9_-]+")
DEFAULT_TIMEOUT = 5 * 3600  # the seed's default: 5 hours
MAX_TIMEOUT = 7 * 24 * 3600
MAX_TASKS = 10_000  # tasks in one job
MAX_UPLOAD = 5 * 1024**3  # bytes of one uploaded file
MAX_NAME = 255  # characters of a task name or an archive's file name


@dataclass
class Spec:
    """One task as requested, validated."""

    operation: str
    payload: dict[str, Any]
    inputs: list[str]  # as given: task names in a job, task ids otherwise
    timeout: float
    name: str | None = None
    output_format: str | None = None
    filename: str | None = None
    engine_version: str = ENGINE_VERSION


def _inputs(value: Any) -> list[str] | None:
    if isinstance(value, str) and value:
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return list(value)
    return None


def safe_filename(name: Any) -> bool:
    """A file name the sandbox keeps as it is: a non-empty string, no separators, no
    control characters, not `.` or `..`."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= MAX_NAME
        and name not in (".", "..")
        and not any(c in "/\\" or ord(c) < 32 or ord(c) == 127 for c in name)
    )


def spec(raw: Any, where: str, operation: str | None = None, name: str | None = None) -> Spec:
    """Validate one task (`operation` given by the endpoint, or read from a job's task);
    `where` prefixes the fields named in a 422 (`tasks.archive.`)."""
    if not isinstance(raw, dict):
        raise invalid({where.rstrip(".") or "body": ["The task must be a JSON object."]})
    errors: dict[str, list[str]] = {}
    operation = operation or raw.get("operation")
    if operation not in OPERATIONS:
        errors[f"{where}operation"] = [
            f"The operation must be one of {', '.join(OPERATIONS)} in this sandbox."
        ]
        raise invalid(errors)
    timeout = raw.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 1 <= timeout <= MAX_TIMEOUT:
        errors[f"{where}timeout"] = [f"The timeout must be an integer from 1 to {MAX_TIMEOUT}."]
    result = Spec(str(operation), dict(raw), [], float(timeout) if not errors else 0.0, name)
    if operation in (ARCHIVE, EXPORT):
        inputs = _inputs(raw.get("input"))
        if inputs is None:
            errors[f"{where}input"] = ["The input must be a task name or id, or a list of them."]
        else:
            result.inputs = inputs
    if operation == UPLOAD and "redirect" in raw:
        target = raw["redirect"]
        if (
            not isinstance(target, str)
            or not re.match(r"https?://[^\s/]", target)
            or len(target) > 2048
        ):
            errors[f"{where}redirect"] = ["The redirect must be an http or https URL."]
    if operation == EXPORT:
        for flag in ("inline", "archive_multiple_files"):
            if not isinstance(raw.get(flag, False), bool):
                errors[f"{where}{flag}"] = [f"The {flag} field must be true or false."]
        if raw.get("archive_multiple_files") is True:
            errors[f"{where}archive_multiple_files"] = [
                "This sandbox exports each file on its own: archive them with an archive task."
            ]
    if operation == ARCHIVE:
        output_format = raw.get("output_format")
        if output_format not in FORMATS:
            errors[f"{where}output_format"] = [
                f"The output format must be one of {', '.join(FORMATS)}."
            ]
        result.output_format = output_format if isinstance(output_format, str) else None
        filename = raw.get("filename")
        if filename is not None and not safe_filename(filename):
            errors[f"{where}filename"] = [
                "The filename must be a file name without separators or control characters."
            ]
        result.filename = filename
        if raw.get("engine", ENGINE) != ENGINE:
            errors[f"{where}engine"] = [f"The engine must be {ENGINE}."]
        version = raw.get("engine_version", ENGINE_VERSION)
        if not isinstance(version, str) or not ENGINE_VERSION_FORM.fullmatch(version):
            errors[f"{where}engine_version"] = [
                "The engine version must be a version such as 2.1 or 2016."
            ]
        result.engine_version = version if isinstance(version, str) else ENGINE_VERSION
    if errors:
        raise invalid(errors)
    return result


def job_specs(body: dict[str, Any]) -> list[Spec]:
    """The tasks of a job body `{"tasks": {name: task}, "tag"?}`, validated as a whole:
    every input names another task of the job, and no task depends on itself."""
    tasks = body.get("tasks")
    if not isinstance(tasks, dict) or not tasks:
        raise invalid({"tasks": ["The tasks must be an object of named tasks."]})
    if len(tasks) > MAX_TASKS:
        raise invalid({"tasks": [f"A job has at most {MAX_TASKS} tasks."]})
    tag = body.get("tag")
    if tag is not None and not isinstance(tag, str):
        raise invalid({"tag": ["The tag must be a string."]})
    specs: list[Spec] = []
    errors: dict[str, list[str]] = {}
    for name, raw in tasks.items():
        if not 0 < len(name) <= MAX_NAME or not TASK_NAME.fullmatch(name):
            errors["tasks"] = [
                f"A task name has 1 to {MAX_NAME} characters, each a letter, a digit, - or _."
            ]
            continue
        try:
            specs.append(spec(raw, f"tasks.{name}.", name=name))
        except ErrorAnswer as exc:
            errors.update(exc.extra.get("errors", {}))
    for item in specs:
        for given in item.inputs:
            if given not in tasks:
                errors.setdefault(f"tasks.{item.name}.input", []).append(
                    f"The input task {given!r} does not exist in this job."
                )
            elif given == item.name:
                errors.setdefault(f"tasks.{item.name}.input", []).append(
                    "A task cannot be its own input."
                )
            elif item.operation == ARCHIVE and tasks[given].get("operation") == EXPORT:
                errors.setdefault(f"tasks.{item.name}.input", []).append(
                    f"The input task {given!r} produces no files to archive."
                )
    if errors:
        raise invalid(errors)
    cycle = _cycle({item.name or "": item.inputs for item in specs})
    if cycle:
        raise invalid({f"tasks.{cycle}.input": ["The tasks depend on each other in a circle."]})
    return specs


def _cycle(graph: dict[str, list[str]]) -> str | None:
    """A task on a dependency cycle, or None (an iterative depth-first search)."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    for root in graph:
        if state.get(root):
            continue
        stack: list[tuple[str, Iterable[str]]] = [(root, iter(graph[root]))]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(iter(children), None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                return child
            elif not state.get(child):
                state[child] = 1
                stack.append((child, iter(graph.get(child, ()))))
    return None
