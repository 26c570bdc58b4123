"""Steering interface C of the sandbox from a test, and the files an export sends."""

from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path
from typing import Any, Literal

import httpx

from tests.support.forem_sandbox import sandbox_client

# A project for exports: the site and the posts are in their default folders.
EXPORT_CONFIG = """
[site]
title = "Export site"
url = "https://example.com/blog"
"""


class Archive:
    """Interface C of the session's sandbox: its API as the demo account, its control API.
    Its clients hand their requests to the sandbox's application without a socket (the
    same answers and records), or with `in_process=False` go over loopback HTTP."""

    def __init__(self, sandbox: Any, *, in_process: bool = True):
        self.sandbox = sandbox
        self.base_url: str = sandbox.base_url
        self._in_process = in_process
        self._control = self._client({})
        self.api_key: str = self.control("GET", "/accounts")[0]["api_key"]

    def _client(self, headers: dict[str, str]) -> httpx.Client:
        return sandbox_client(self.sandbox, headers, in_process=self._in_process)

    def close(self) -> None:
        self._control.close()

    @property
    def env(self) -> dict[str, str | None]:
        """The environment that points toolkit at the sandbox's archive tasks."""
        return {"CLOUDCONVERT_BASE_URL": self.base_url, "CLOUDCONVERT_API_KEY": self.api_key}

    def control(self, method: str, path: str, body: Any = None) -> Any:
        response = self._control.request(method, f"/__sandbox/archive{path}", json=body)
        response.raise_for_status()
        return response.json() if response.content else None

    def fault(self, kind: str, **spec: Any) -> Any:
        return self.control("POST", "/task-faults", {"kind": kind, **spec})

    def settings(self, **values: Any) -> Any:
        return self.control("POST", "/settings", values)

    def credits(self, value: int | None = None) -> int:
        if value is None:
            return int(self.control("GET", "/credits")["credits"])
        return int(self.control("POST", "/credits", {"credits": value})["credits"])

    def files(self) -> list[dict[str, Any]]:
        return list(self.control("GET", "/files")["files"])

    def last_seq(self) -> int:
        """The sequence number of the sandbox's last request record (any interface)."""
        answer = self._control.get("/__sandbox/requests", params={"limit": 1})
        return int(answer.raise_for_status().json()["last_seq"])

    def served(self, after: int) -> list[dict[str, Any]]:
        """Interface C's request records after `after`."""
        return [
            record for record in self.sandbox.requests(after) if record["interface"] == "archive"
        ]

    def client(self, key: str | None = "demo") -> httpx.Client:
        """An httpx client on the sandbox with the demo account's key (None: without)."""
        headers = (
            {}
            if key is None
            else {"Authorization": f"Bearer {self.api_key if key == 'demo' else key}"}
        )
        return self._client(headers)

    def upload(
        self, client: httpx.Client, task: dict[str, Any], name: str, data: bytes, **extra: Any
    ) -> httpx.Response:
        """POST a file through an upload task's form, as a browser or an SDK does."""
        form = task["result"]["form"]
        fields = {key: str(value) for key, value in form["parameters"].items()}
        fields.update(extra)
        return client.post(form["url"], data=fields, files={"file": (name, data)})


def last_run(root: Path, command: str = "export") -> list[dict[str, Any]]:
    """The events of the last run of `command` in a project's run log, oldest first."""
    events = [
        json.loads(line)
        for line in (root / ".toolkit" / "events.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    runs = [event["run_id"] for event in events if event["command"] == command]
    assert runs, f"no run of {command}"
    return [event for event in events if event["run_id"] == runs[-1]]


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` by its relative POSIX path, with its bytes."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def unpack(path: Path, fmt: str, scratch: Path) -> dict[str, bytes]:
    """Every file entry of an archive, with its bytes (`scratch`: an empty folder, for 7z)."""
    if fmt == "zip":
        with zipfile.ZipFile(path) as archive:
            return {
                info.filename: archive.read(info)
                for info in archive.infolist()
                if not info.is_dir()
            }
    if fmt == "7z":
        import py7zr

        with py7zr.SevenZipFile(path) as archive:
            archive.extractall(path=scratch)
        return tree(scratch)
    modes: dict[str, Literal["r:", "r:gz", "r:bz2"]] = {
        "tar": "r:",
        "tar.gz": "r:gz",
        "tar.bz2": "r:bz2",
    }
    with tarfile.open(path, modes[fmt]) as archive:
        return {
            member.name: archive.extractfile(member).read()  # type: ignore[union-attr]
            for member in archive
            if member.isreg()
        }
