"""Loading: `toolkit.toml`, `.env` and the environment, checked against the declarations.

Paths in the file are relative to its own folder. Each `base_url` can be overridden by an
environment variable, and secrets come from the environment only (a `.env` file beside
`toolkit.toml` is read when present; the real environment wins over it). Every problem
is collected and reported together as `toolkit.toml: key: problem`, then loading stops
with one `ConfigError`.
"""

from __future__ import annotations

import io
import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from toolkit.config.keys import KEY
from toolkit.config.sections import DEFAULT_CONFIG_NAME, SECTIONS, Config
from toolkit.config.writers import parse_writers
from toolkit.errors import ConfigError
from toolkit.mirror_layout import MIRROR, PODCASTS
from toolkit.redact import quoted


def read_dotenv(path: Path) -> dict[str, str]:
    """KEY=VALUE pairs of a `.env` file, without touching `os.environ`.

    The file is decoded here rather than by python-dotenv, so that bytes that are not
    UTF-8 are a `ConfigError` naming the line instead of a traceback.
    """
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError([f"{path.name}: not valid UTF-8 text (line {line})"]) from None
    values = dotenv_values(stream=io.StringIO(text))
    return {k: v for k, v in values.items() if v is not None}


def dotenv_warnings(path: Path) -> list[str]:
    """A `.env` holds secrets: say so when users other than its owner may read or change
    it (any group or other permission bit; POSIX only)."""
    if os.name != "posix" or not path.is_file():
        return []
    mode = path.stat().st_mode & 0o777
    if not mode & 0o077:
        return []
    what = "readable" if mode & 0o044 else "writable"
    return [f"{path.name} is {what} by other users (mode {mode:o}); chmod 600 {path.name}"]


def find_config(start: Path | None = None) -> tuple[Path | None, list[Path]]:
    """The project's `toolkit.toml`, found the way git finds `.git`: in `start` (default:
    the working folder), then each parent, stopping after the repository's root (the
    folder holding `.git`) or the file system's root. Returns it (None: not found) and
    the folders looked in, in order."""
    try:
        folder = (start or Path.cwd()).absolute()
    except OSError:  # the working folder is gone
        return None, [Path(".")]
    looked: list[Path] = []
    for candidate in (folder, *folder.parents):
        looked.append(candidate)
        if os.path.lexists(candidate / DEFAULT_CONFIG_NAME):
            return candidate / DEFAULT_CONFIG_NAME, looked
        if os.path.lexists(candidate / ".git"):
            break
    return None, looked


def not_found_message(looked: list[Path]) -> str:
    """What a command says when no `toolkit.toml` was found: where it looked."""
    first, last = looked[0], looked[-1]
    stop = "the repository root" if os.path.lexists(last / ".git") else "the file system root"
    where = f"{first}" if first == last else f"{first} or its parents up to {last}"
    return f"no {DEFAULT_CONFIG_NAME} in {where} ({stop}): run toolkit init (or pass --config)"


def load_config(
    path: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    *,
    missing_ok: bool = False,
) -> Config:
    """Read, override and validate the configuration; raise `ConfigError` with every problem.

    `path` None: the `toolkit.toml` of the working folder or of its nearest parent
    (`find_config`). Without a file: `ConfigError` saying where it looked and to run
    `toolkit init`, or, with `missing_ok`, the defaults (and the environment's overrides)
    for a project in the working folder."""
    given = path is not None
    looked: list[Path] = []
    if path is None:
        found, looked = find_config()
        path = found if found is not None else Path(DEFAULT_CONFIG_NAME)
    else:
        path = Path(path)
    name = path.name
    if not path.is_file():
        if path.exists():
            raise ConfigError([f"{path}: not a file"])
        if not missing_ok:
            raise ConfigError(
                [
                    f"{path}: file not found (run toolkit init {path.parent}, or check --config)"
                    if given
                    else not_found_message(looked)
                ]
            )
        data: dict[str, Any] = {}
    else:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError([f"{name}: not valid TOML: {exc}"]) from None
    root = path.resolve().parent
    dotenv = root / ".env"
    given_env = os.environ if env is None else env
    from_file = read_dotenv(dotenv)
    environment = {**from_file, **given_env}
    in_dotenv = {k for k in from_file if not given_env.get(k)}
    config = _build(name, root, path.resolve(), data, environment, in_dotenv)
    warnings = dotenv_warnings(dotenv)
    if config.forem.organization is not None and config.forem.organization_id is not None:
        warnings.append(
            f"{name}: forem.organization_id is ignored: forem.organization is set (it takes "
            "a username or an id; keep one of the two)"
        )
    return replace(config, warnings=tuple(warnings)) if warnings else config


# The project's folders: none named inside the project may lead out of it through a
# symlink, which a repository can commit; the posts' must lie in it (toolkit.lock names
# each post by its path there, never an absolute one).
PROJECT_FOLDERS = (
    ("site", "content_dir"),
    ("site", "templates_dir"),
    ("site", "output_dir"),
    ("site", "premium_output_dir"),
    ("source", "static_dir"),
)
IN_PROJECT = ("site", "content_dir")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _link_on_the_way(root: str, named: str) -> bool:
    """Whether a folder of `named` (a normalised path under `root`), or `named` itself, is
    a symlink: one `lstat` per part, where a real path would cost one per part of `root`
    too, on every run."""
    path = root
    for part in named[len(root) :].split(os.sep):
        if not part:
            continue
        path = os.path.join(path, part)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return True
        except OSError:  # not there (yet): nothing further on is followed
            return False
    return False


def _folders_leading_out(name: str, root: Path, raw: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The problems of the folders named that leave the project (`root`, a real path)."""
    problems = []
    top = str(root)
    for section, key in PROJECT_FOLDERS:
        value = raw.get(section, {}).get(key)
        dotted = f"{section}.{key}"
        if not isinstance(value, str) or not value.strip():
            continue  # its own rule said so
        named = os.path.normpath(os.path.join(top, value))
        if _inside(named, top):
            if not _link_on_the_way(top, named):
                continue
            real = os.path.realpath(named)
            if _inside(real, top):
                continue  # a link that stays in the project
            problems.append(
                f"{name}: {dotted}: {quoted(value, 100)} leads out of the project through "
                f"a symlink (to {quoted(real, 200)}), which toolkit never follows; "
                + (
                    "the posts must be in the project: make it a folder there"
                    if (section, key) == IN_PROJECT
                    else "make it a folder, or give the folder it leads to as the value"
                )
            )
        elif (section, key) == IN_PROJECT and not _inside(os.path.realpath(named), top):
            problems.append(
                f"{name}: {dotted}: must be a folder in the project (toolkit.lock names "
                f"each post by its path there), not {quoted(value, 100)}"
            )
    return problems


# Where toolkit keeps its own files: `.toolkit/` (`Config.state_dir`) with its `build/`,
# and the mirror's folder with its `podcasts/`. A repository can commit a symlink in any of
# them; none is ever followed: the folder itself and each entry directly in it is checked.
STATE = ".toolkit"
STATE_SUBFOLDERS = ("build",)
MIRROR_SUBFOLDERS = (PODCASTS,)


def _own_folders(root: Path, content_dir: Path) -> list[Path]:
    """The folders toolkit keeps its own files in (see `STATE`)."""
    state, mirror = root / STATE, content_dir / MIRROR
    return [
        state,
        *(state / name for name in STATE_SUBFOLDERS),
        mirror,
        *(mirror / name for name in MIRROR_SUBFOLDERS),
    ]


def _own_folders_with_links(root: Path, content_dir: Path) -> list[str]:
    """One problem per symlink where toolkit keeps its own files (see `STATE`)."""
    links: list[str] = []
    for folder in _own_folders(root, content_dir):
        if any(str(folder).startswith(link + os.sep) for link in links):
            continue  # under a link already said
        try:
            if os.path.islink(folder):
                links.append(str(folder))
                continue
            with os.scandir(folder) as entries:
                links += [entry.path for entry in entries if entry.is_symlink()]
        except OSError:  # not there yet, or not a folder: nothing of it is followed
            continue
    return [
        f"{quoted(os.path.relpath(link, root), 200, marks=False)}: a symlink (to "
        f"{quoted(os.path.realpath(link), 200)}) where toolkit keeps its own files, which "
        "it never follows; remove the link"
        for link in sorted(set(links))
    ]


def _build(
    name: str,
    root: Path,
    path: Path,
    data: dict[str, Any],
    env: Mapping[str, str],
    in_dotenv: set[str] | frozenset[str] = frozenset(),
) -> Config:
    problems: list[str] = []
    env_problems: list[str] = []  # reported after the file's
    writers, writer_problems = parse_writers(name, data.get("writers"), env, in_dotenv)
    problems += writer_problems
    for section_name, value in data.items():
        if section_name == "writers":
            continue
        if section_name not in SECTIONS:
            problems.append(f"{name}: {section_name}: unknown section")
        elif not isinstance(value, dict):
            problems.append(f"{name}: {section_name}: must be a table ([{section_name}])")
    raw: dict[str, dict[str, Any]] = {}
    origins: dict[str, str] = {}
    for section_name, cls in SECTIONS.items():
        given = data.get(section_name)
        given = given if isinstance(given, dict) else {}
        keys = {item.name: item.metadata[KEY] for item in fields(cls)}
        for key in given:
            if key not in keys:
                problems.append(f"{name}: {section_name}.{key}: unknown key")
            elif keys[key].secret:
                problems.append(
                    f"{name}: {section_name}.{key}: a secret is never kept in "
                    f"{name}; set {keys[key].env} in the environment or in .env"
                )
        values: dict[str, Any] = {}
        for key, declared in keys.items():
            dotted, value, origin = f"{section_name}.{key}", declared.default, "default"
            if key in given and not declared.secret:
                value, origin = given[key], name
                problem = declared.rule.check(value)
                if problem:
                    problems.append(f"{name}: {dotted}: {problem}")
            if declared.env and env.get(declared.env):
                value, origin = env[declared.env], declared.env
                if declared.env in in_dotenv:
                    origin = f"{declared.env} in .env"
                problem = declared.rule.check(value)
                if problem:
                    env_problems.append(f"{declared.env}: {problem}")
            values[key], origins[dotted] = value, origin
        for key, declared in keys.items():
            if values[key] is None and declared.default_from:
                values[key] = values[declared.default_from]
                origins[f"{section_name}.{key}"] = f"{section_name}.{declared.default_from}"
        raw[section_name] = values
    if raw["forem"]["canonical"] == "site" and not raw["site"]["url"]:
        problems.append(f'{name}: forem.canonical: "site" needs [site] url (the site\'s address)')
    if raw["site"]["images_from_site"] is True and not raw["site"]["url"]:
        problems.append(f"{name}: site.images_from_site: needs [site] url (the site's address)")
    problems += _folders_leading_out(name, root, raw)
    if problems or env_problems:
        raise ConfigError(problems + env_problems)
    sections = {
        section_name: cls(
            **{
                item.name: (
                    None
                    if raw[section_name][item.name] is None
                    else item.metadata[KEY].rule.resolve(raw[section_name][item.name], root)
                )
                for item in fields(cls)
            }
        )
        for section_name, cls in SECTIONS.items()
    }
    links = _own_folders_with_links(root, sections["site"].content_dir)
    if links:
        raise ConfigError(links)
    return Config(path=path, root=root, origins=origins, writers=writers, **sections)
