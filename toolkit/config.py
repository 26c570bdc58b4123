"""Configuration: `toolkit.toml` plus environment overrides, validated once at load.

Everything but secrets lives in `toolkit.toml`; paths in it are relative to its own
folder. Each `base_url` can be overridden by an environment variable, and secrets come
from the environment only (a `.env` file beside `toolkit.toml` is read when present;
the real environment wins over it). Every problem is collected and reported together
as `toolkit.toml: key: problem`, then loading stops with one `ConfigError`.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolkit.errors import ConfigError
from toolkit.redact import redact_url

DEFAULT_CONFIG_NAME = "toolkit.toml"


class Secret:
    """A credential that never shows itself in output, logs or exception text."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


# --- the schema --------------------------------------------------------------------

Check = Callable[[Any], str | None]  # returns a problem, or None when the value is fine


def _string(value: Any) -> str | None:
    return None if isinstance(value, str) else "must be a string"


def _nonempty_string(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "must be a non-empty string"
    return None


def _http_url(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a string"
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"must be an absolute http(s) URL, not {redact_url(value)!r}"
    if parts.query or parts.fragment:
        return "must not carry a query or fragment"
    return None


def _base_url(value: Any) -> str | None:
    problem = _http_url(value)
    if problem is None and urlsplit(value).path.rstrip("/").endswith("/api"):
        return "must not include the /api prefix (toolkit adds it)"
    return problem


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _port(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 65536:
        return "must be a port number between 1 and 65535"
    return None


def _positive_int(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return "must be a positive integer"
    return None


def _positive_number(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return "must be a positive number"
    return None


def _archive_format(value: Any) -> str | None:
    formats = ("zip", "rar", "7z", "tar", "tar.gz", "tar.bz2")
    if value not in formats:
        return f"must be one of {', '.join(formats)}"
    return None


@dataclass(frozen=True)
class Option:
    check: Check
    default: Any = None


SCHEMA: dict[str, dict[str, Option]] = {
    "site": {
        "title": Option(_nonempty_string, "My posts"),
        "url": Option(_http_url),
        "content_dir": Option(_nonempty_string, "content"),
        "templates_dir": Option(_nonempty_string, "templates"),
        "output_dir": Option(_nonempty_string, "site"),
        "assets_base_url": Option(_http_url),
        "description": Option(_string, ""),
        "author": Option(_string, ""),
        "per_page": Option(_positive_int, 10),
        # Keep the raw HTML of posts as written; by default it is cleaned like comments.
        "allow_raw_html": Option(_boolean, False),
    },
    "forem": {
        "base_url": Option(_base_url, "https://dev.to"),
        "organization_id": Option(_positive_int),
        # The API's rate-limit window in seconds (30 on dev.to); the sandbox can shorten it.
        "rate_window": Option(_positive_number, 30),
        # Seconds to wait for an answer before a request counts as failed.
        "timeout": Option(_positive_number, 30),
    },
    "archive": {
        "base_url": Option(_base_url, "https://api.cloudconvert.com"),
        "format": Option(_archive_format, "zip"),
    },
    "license": {
        "base_url": Option(_base_url, "https://appsmarket.googleapis.com"),
        "application_id": Option(_nonempty_string),
        "customer_id": Option(_nonempty_string),
        "user_id": Option(_nonempty_string),
    },
    "logs": {
        "base_url": Option(_base_url),
        "stream": Option(_nonempty_string, "toolkit"),
    },
    "mcp": {
        "host": Option(_nonempty_string, "127.0.0.1"),
        "port": Option(_port, 8765),
        "issuer_url": Option(_http_url),
    },
}

# Environment variables that override a key of the file.
ENV_OVERRIDES = {
    "FOREM_BASE_URL": ("forem", "base_url"),
    "CLOUDCONVERT_BASE_URL": ("archive", "base_url"),
    "LICENSE_BASE_URL": ("license", "base_url"),
    "LOGS_BASE_URL": ("logs", "base_url"),
}

SECRET_NAMES = (
    "FOREM_API_KEY",
    "CLOUDCONVERT_API_KEY",
    "LICENSE_API_TOKEN",
    "LOGS_USERNAME",
    "LOGS_PASSWORD",
)


# --- the typed result -----------------------------------------------------------------


@dataclass(frozen=True)
class SiteConfig:
    title: str
    url: str | None
    content_dir: Path
    templates_dir: Path
    output_dir: Path
    assets_base_url: str | None
    description: str
    author: str
    per_page: int
    allow_raw_html: bool = False


@dataclass(frozen=True)
class ForemConfig:
    base_url: str
    organization_id: int | None
    rate_window: float
    api_key: Secret | None
    timeout: float = 30.0


@dataclass(frozen=True)
class ArchiveConfig:
    base_url: str
    format: str
    api_key: Secret | None


@dataclass(frozen=True)
class LicenseConfig:
    base_url: str
    application_id: str | None
    customer_id: str | None
    user_id: str | None
    token: Secret | None


@dataclass(frozen=True)
class LogsConfig:
    base_url: str | None
    stream: str
    username: Secret | None
    password: Secret | None


@dataclass(frozen=True)
class McpConfig:
    host: str
    port: int
    issuer_url: str | None


@dataclass(frozen=True)
class Config:
    path: Path  # the toolkit.toml that was read
    root: Path  # its folder: every relative path is resolved against it
    site: SiteConfig
    forem: ForemConfig
    archive: ArchiveConfig
    license: LicenseConfig
    logs: LogsConfig
    mcp: McpConfig
    # Problems that do not stop loading (a `.env` open to other users); the CLI shows them.
    warnings: tuple[str, ...] = ()

    @property
    def state_dir(self) -> Path:
        """Where toolkit keeps its own files (build manifest, event log); not committed."""
        return self.root / ".toolkit"

    @property
    def lock_path(self) -> Path:
        return self.root / "toolkit.lock"

    def relative(self, path: Path) -> str:
        """A path as shown to the user and used as a key: relative to the project, POSIX."""
        if path.is_absolute() and path.is_relative_to(self.root):
            return path.relative_to(self.root).as_posix()  # no resolve(): it costs syscalls
        resolved = path.resolve()
        if resolved.is_relative_to(self.root):
            return resolved.relative_to(self.root).as_posix()
        return path.as_posix()


# --- loading -------------------------------------------------------------------------


def read_dotenv(path: Path) -> dict[str, str]:
    """KEY=VALUE pairs of a `.env` file, without touching `os.environ`.

    The file is decoded here rather than by python-dotenv, so that bytes that are not
    UTF-8 are a `ConfigError` naming the line instead of a traceback.
    """
    if not path.is_file():
        return {}
    import io

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


def load_config(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Read, override and validate the configuration; raise `ConfigError` with every problem."""
    path = Path(path) if path is not None else Path(DEFAULT_CONFIG_NAME)
    name = path.name
    if not path.is_file():
        raise ConfigError(
            [f"{name}: file not found at {path} (run toolkit in the project folder or pass --config)"]
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{name}: not valid TOML: {exc}"]) from None
    root = path.resolve().parent
    dotenv = root / ".env"
    environment = {**read_dotenv(dotenv), **(os.environ if env is None else env)}
    config = _build(name, root, path.resolve(), data, environment)
    warnings = dotenv_warnings(dotenv)
    return replace(config, warnings=tuple(warnings)) if warnings else config


def _build(name: str, root: Path, path: Path, data: dict, env: Mapping[str, str]) -> Config:
    problems: list[str] = []
    values: dict[str, dict[str, Any]] = {}
    for section, value in data.items():
        if section not in SCHEMA:
            problems.append(f"{name}: {section}: unknown section")
        elif not isinstance(value, dict):
            problems.append(f"{name}: {section}: must be a table ([{section}])")
    for section, options in SCHEMA.items():
        given = data.get(section) if isinstance(data.get(section), dict) else {}
        for key in given:
            if key not in options:
                problems.append(f"{name}: {section}.{key}: unknown key")
        resolved: dict[str, Any] = {}
        for key, option in options.items():
            if key in given:
                problem = option.check(given[key])
                if problem:
                    problems.append(f"{name}: {section}.{key}: {problem}")
                resolved[key] = given[key]
            else:
                resolved[key] = option.default
        values[section] = resolved
    for variable, (section, key) in ENV_OVERRIDES.items():
        if env.get(variable):
            problem = SCHEMA[section][key].check(env[variable])
            if problem:
                problems.append(f"{variable}: {problem}")
            values[section][key] = env[variable]
    if problems:
        raise ConfigError(problems)

    def secret(variable: str) -> Secret | None:
        value = env.get(variable, "")
        return Secret(value) if value else None

    def strip(url: str | None) -> str | None:
        return url.rstrip("/") if url else url

    site = values["site"]
    return Config(
        path=path,
        root=root,
        site=SiteConfig(
            title=site["title"],
            url=strip(site["url"]),
            content_dir=(root / site["content_dir"]).resolve(),
            templates_dir=(root / site["templates_dir"]).resolve(),
            output_dir=(root / site["output_dir"]).resolve(),
            assets_base_url=strip(site["assets_base_url"] or site["url"]),
            description=site["description"],
            author=site["author"],
            per_page=site["per_page"],
            allow_raw_html=site["allow_raw_html"],
        ),
        forem=ForemConfig(
            base_url=strip(values["forem"]["base_url"]),
            organization_id=values["forem"]["organization_id"],
            rate_window=float(values["forem"]["rate_window"]),
            api_key=secret("FOREM_API_KEY"),
            timeout=float(values["forem"]["timeout"]),
        ),
        archive=ArchiveConfig(
            base_url=strip(values["archive"]["base_url"]),
            format=values["archive"]["format"],
            api_key=secret("CLOUDCONVERT_API_KEY"),
        ),
        license=LicenseConfig(
            base_url=strip(values["license"]["base_url"]),
            application_id=values["license"]["application_id"],
            customer_id=values["license"]["customer_id"],
            user_id=values["license"]["user_id"],
            token=secret("LICENSE_API_TOKEN"),
        ),
        logs=LogsConfig(
            base_url=strip(values["logs"]["base_url"]),
            stream=values["logs"]["stream"],
            username=secret("LOGS_USERNAME"),
            password=secret("LOGS_PASSWORD"),
        ),
        mcp=McpConfig(
            host=values["mcp"]["host"],
            port=values["mcp"]["port"],
            issuer_url=values["mcp"]["issuer_url"],
        ),
    )
