"""Configuration: `toolkit.toml` plus environment overrides, validated once at load.

Everything but secrets lives in `toolkit.toml`; paths in it are relative to its own
folder. Each `base_url` can be overridden by an environment variable, and secrets come
from the environment only (a `.env` file beside `toolkit.toml` is read when present;
the real environment wins over it). Every problem is collected and reported together
as `toolkit.toml: key: problem`, then loading stops with one `ConfigError`.

Each key is declared once, as a field of its section's dataclass (`SiteConfig`, ...):
`option(rule, default=..., env=..., help=...)` or `secret(env, help=...)`. The loader,
`toolkit config` and the README's table all come from those declarations: a key is
added in one place.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolkit.errors import ConfigError
from toolkit.redact import redact_url

DEFAULT_CONFIG_NAME = "toolkit.toml"
KEY = "toolkit.key"  # field metadata: the key's declaration
SECTION = "toolkit.section"  # field metadata of `Config`: the section's dataclass


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


# --- rules: what a value may be, and what it becomes -----------------------------------

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


ARCHIVE_FORMATS = ("zip", "rar", "7z", "tar", "tar.gz", "tar.bz2")


def _archive_format(value: Any) -> str | None:
    if value not in ARCHIVE_FORMATS:
        return f"must be one of {', '.join(ARCHIVE_FORMATS)}"
    return None


EXPORT_SOURCES = ("site", "content")


def _export_source(value: Any) -> str | None:
    if value not in EXPORT_SOURCES:
        return f"must be one of {', '.join(EXPORT_SOURCES)}"
    return None


def _as_is(value: Any, root: Path) -> Any:
    return value


def _no_final_slash(value: str, root: Path) -> str:
    return value.rstrip("/")


def _path(value: str, root: Path) -> Path:
    return (root / value).resolve()


def _seconds(value: float, root: Path) -> float:
    return float(value)


def _secret(value: str, root: Path) -> Secret:
    return Secret(value)


@dataclass(frozen=True)
class Rule:
    """What a key's value may be (`kind`, shown by `toolkit config`; `check`), and what a
    valid value becomes (`resolve`: paths against the project's folder, and so on)."""

    kind: str
    check: Check
    resolve: Callable[[Any, Path], Any] = _as_is


STRING = Rule("string", _string)
TEXT = Rule("non-empty string", _nonempty_string)
PATH = Rule("path", _nonempty_string, _path)
URL = Rule("http(s) URL", _http_url, _no_final_slash)
ISSUER = Rule("http(s) URL", _http_url)
BASE_URL = Rule("http(s) URL without /api", _base_url, _no_final_slash)
BOOLEAN = Rule("true or false", _boolean)
POSITIVE_INT = Rule("integer >= 1", _positive_int)
PORT = Rule("port", _port)
SECONDS = Rule("seconds > 0", _positive_number, _seconds)
ARCHIVE_FORMAT = Rule(" | ".join(ARCHIVE_FORMATS), _archive_format)
EXPORT_SOURCE = Rule(" | ".join(EXPORT_SOURCES), _export_source)
SECRET = Rule("secret", _nonempty_string, _secret)


@dataclass(frozen=True)
class Key:
    """The declaration of one key."""

    rule: Rule
    help: str
    default: Any = None  # as written in toolkit.toml; None: unset
    env: str | None = None  # the environment variable that overrides it (a secret's only source)
    secret: bool = False
    default_from: str | None = None  # a key of the same section whose value is the default


def option(
    rule: Rule,
    *,
    help: str,
    default: Any = None,
    env: str | None = None,
    default_from: str | None = None,
) -> Any:
    """Declare a key of `toolkit.toml` (a field of a section's dataclass)."""
    return field(metadata={KEY: Key(rule, help, default, env, False, default_from)})


def secret(env: str, *, help: str) -> Any:
    """Declare a secret: read from the environment variable `env` only, never the file."""
    return field(metadata={KEY: Key(SECRET, help, None, env, True)})


# --- the sections: every key, declared once ------------------------------------------------


@dataclass(frozen=True)
class SiteConfig:
    """[site]: the posts and the static site built from them."""

    title: str = option(TEXT, default="My posts", help="Title of the site.")
    url: str | None = option(
        URL,
        help="Canonical base of the site, e.g. https://example.com/blog; a post's "
        "canonical_url defaults to it.",
    )
    content_dir: Path = option(PATH, default="content", help="Folder of the posts.")
    templates_dir: Path = option(
        PATH,
        default="templates",
        help="The project's templates; each file overrides the default theme's.",
    )
    output_dir: Path = option(PATH, default="site", help="Where `toolkit build` writes the site.")
    premium_output_dir: Path = option(
        PATH,
        default="site-premium",
        help="Where `toolkit build --premium` writes the premium site; never the public one.",
    )
    assets_base_url: str | None = option(
        URL,
        default_from="url",
        help="Absolute base under which relative images are served, for what is sent to the API.",
    )
    description: str = option(STRING, default="", help="Description of the site (feed, meta tags).")
    author: str = option(STRING, default="", help="Author named in the feed and meta tags.")
    per_page: int = option(POSITIVE_INT, default=10, help="Posts per index page.")
    allow_raw_html: bool = option(
        BOOLEAN,
        default=False,
        help="Keep raw HTML in posts as written; by default it is cleaned like comments.",
    )
    search: bool = option(
        BOOLEAN,
        default=True,
        help="Full-text search: a search page, and its index made by Pagefind after each "
        "build that changed a page.",
    )
    feed_full_content: bool = option(
        BOOLEAN,
        default=False,
        help="Put whole posts in the Atom feed; by default it holds their summaries.",
    )


@dataclass(frozen=True)
class ForemConfig:
    """[forem]: the publishing API (interface A)."""

    base_url: str = option(
        BASE_URL,
        default="https://dev.to",
        env="FOREM_BASE_URL",
        help="Origin of the publishing API, without /api.",
    )
    organization_id: int | None = option(
        POSITIVE_INT, help="Publish the articles under this organisation."
    )
    rate_window: float = option(
        SECONDS,
        default=30,
        help="The API's rate-limit window in seconds (30 on dev.to); the sandbox can shorten it.",
    )
    timeout: float = option(
        SECONDS, default=30, help="Seconds to wait for an answer before a request fails."
    )
    api_key: Secret | None = secret(
        "FOREM_API_KEY", help="API key (dev.to: Settings, Extensions, DEV API Keys)."
    )


@dataclass(frozen=True)
class ArchiveConfig:
    """[archive]: the archive-task API (interface C) behind `toolkit export`."""

    base_url: str = option(
        BASE_URL,
        default="https://api.cloudconvert.com",
        env="CLOUDCONVERT_BASE_URL",
        help="Origin of the archive-task API.",
    )
    format: str = option(ARCHIVE_FORMAT, default="zip", help="Format of the archive.")
    source: str = option(
        EXPORT_SOURCE,
        default="site",
        help="What `toolkit export` bundles: the built site or content/.",
    )
    output: Path | None = option(
        PATH, help="Where `toolkit export` writes the archive; unset: <source>.<format> here."
    )
    task_timeout: int = option(
        POSITIVE_INT,
        default=18000,
        help="Seconds after which the service cancels the archive task (its `timeout`).",
    )
    deadline: float = option(
        SECONDS, default=600, help="Seconds toolkit waits for the archive once the files are up."
    )
    uploads: int = option(POSITIVE_INT, default=4, help="Files uploaded at the same time.")
    timeout: float = option(
        SECONDS, default=30, help="Seconds to wait for an answer before a request fails."
    )
    api_key: Secret | None = secret("CLOUDCONVERT_API_KEY", help="API key of the archive tasks.")


@dataclass(frozen=True)
class LicenseConfig:
    """[license]: the marketplace licensing API (interface D) behind premium builds."""

    base_url: str = option(
        BASE_URL,
        default="https://appsmarket.googleapis.com",
        env="LICENSE_BASE_URL",
        help="Origin of the licensing API.",
    )
    application_id: str | None = option(TEXT, help="The marketplace application's id.")
    customer_id: str | None = option(TEXT, help="The customer whose licence is asked for.")
    user_id: str | None = option(TEXT, help="A user whose own licence is asked for too.")
    timeout: float = option(
        SECONDS, default=10, help="Seconds to wait for an answer before a request fails."
    )
    token: Secret | None = secret("LICENSE_API_TOKEN", help="Bearer token of the licensing API.")


@dataclass(frozen=True)
class LogsConfig:
    """[logs]: the log-stream service (interface E) the run log is shipped to."""

    base_url: str | None = option(
        BASE_URL, env="LOGS_BASE_URL", help="Origin of the log service; unset keeps the log local."
    )
    stream: str = option(TEXT, default="toolkit", help="Name of the log stream.")
    username: Secret | None = secret("LOGS_USERNAME", help="User of the log service.")
    password: Secret | None = secret("LOGS_PASSWORD", help="Password of the log service.")


@dataclass(frozen=True)
class McpConfig:
    """[mcp]: the MCP server."""

    host: str = option(TEXT, default="127.0.0.1", help="Address the HTTP transport listens on.")
    port: int = option(PORT, default=8765, help="Port the HTTP transport listens on.")
    issuer_url: str | None = option(
        ISSUER,
        help="Public origin of the HTTP transport and its OAuth authorization server "
        "(default: http://host:port, https:// with TLS).",
    )
    access_token_lifetime: float = option(
        SECONDS, default=3600, help="Seconds an access token of the HTTP transport is accepted."
    )
    refresh_token_lifetime: float = option(
        SECONDS,
        default=2592000,
        help="Seconds a refresh token can be exchanged (each exchange gives a new one).",
    )
    tls_cert: Path | None = option(
        PATH,
        help="TLS certificate (PEM) of the HTTP transport; with tls_key, needed to listen "
        "on an address other than loopback.",
    )
    tls_key: Path | None = option(PATH, help="Private key (PEM) of tls_cert.")
    operator_secret: Secret | None = secret(
        "TOOLKIT_MCP_OPERATOR_SECRET",
        help="What the writer types on the authorization screen to let an assistant in "
        "over HTTP (at least 12 characters).",
    )


def section(cls: type) -> Any:
    return field(metadata={SECTION: cls})


@dataclass(frozen=True)
class Config:
    path: Path  # the toolkit.toml that was read
    root: Path  # its folder: every relative path is resolved against it
    site: SiteConfig = section(SiteConfig)
    forem: ForemConfig = section(ForemConfig)
    archive: ArchiveConfig = section(ArchiveConfig)
    license: LicenseConfig = section(LicenseConfig)
    logs: LogsConfig = section(LogsConfig)
    mcp: McpConfig = section(McpConfig)
    # Problems that do not stop loading (a `.env` open to other users); the CLI shows them.
    warnings: tuple[str, ...] = ()
    # Where each key's value came from: "default", the file's name, an environment variable,
    # or "VARIABLE in .env" when the variable was read from the .env file.
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

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


SECTIONS: dict[str, type] = {
    f.name: f.metadata[SECTION] for f in fields(Config) if SECTION in f.metadata
}


def declared_keys() -> Iterator[tuple[str, str, Key]]:
    """`(section, key, declaration)` of every key, in declaration order."""
    for name, cls in SECTIONS.items():
        for item in fields(cls):
            yield name, item.name, item.metadata[KEY]


def toml_value(value: Any) -> str:
    """A value as it is written in toolkit.toml."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        import json

        return json.dumps(value, ensure_ascii=False)
    return str(value)


# What an unset key's commented line shows, by the kind of its value (uncommented, it is
# a valid value to edit, not its default).
EXAMPLES: dict[str, Any] = {
    URL.kind: "https://example.com/blog",
    BASE_URL.kind: "https://example.com",
    TEXT.kind: "...",
    PATH.kind: "path/to/file",
    POSITIVE_INT.kind: 1,
}


def commented_toml() -> str:
    """A `toolkit.toml` with every key commented out at its default, each with a line on
    what it does: what `toolkit init` writes. Made from the declarations, so it never
    drifts from them; loading it gives the defaults."""
    import textwrap

    def comment(text: str) -> list[str]:
        return textwrap.wrap(text, width=88, initial_indent="# ", subsequent_indent="# ")

    lines = [
        f"# {DEFAULT_CONFIG_NAME}: the configuration of this toolkit project.",
        "# Every key is shown commented out at its default: remove the leading `# ` of a",
        "# key's line to change it. Paths are relative to this file. Secrets never go here:",
        "# they come from the environment or from .env beside this file (see .env.example).",
        "# `toolkit config` lists every key with its value here and where it came from.",
    ]
    for section_name, cls in SECTIONS.items():
        lines += ["", *comment((cls.__doc__ or f"[{section_name}]").strip()), f"[{section_name}]"]
        for item in fields(cls):
            key: Key = item.metadata[KEY]
            lines.append("")
            if key.secret:
                lines += comment(
                    f"{item.name}: {key.help} Never here: set {key.env} in the "
                    "environment or in .env."
                )
                continue
            notes = [key.help]
            if key.env:
                notes.append(f"{key.env} overrides it.")
            if key.default_from:
                notes.append(f"Default: the value of {section_name}.{key.default_from}.")
            elif key.default is None:
                notes.append("Unset by default.")
            lines += comment(" ".join(notes))
            value = key.default if key.default is not None else EXAMPLES.get(key.rule.kind, "")
            lines.append(f"# {item.name} = {toml_value(value)}")
    return "\n".join(lines) + "\n"


def dotenv_example() -> str:
    """`.env.example`: every secret toolkit reads, and the variables that point it at
    other servers; what `toolkit init` writes."""
    lines = [
        "# The secrets toolkit reads from the environment, or from a file named .env beside",
        "# toolkit.toml (the environment wins). Copy this file to .env, fill in what you use,",
        "# keep .env to yourself (chmod 600 .env; it is git-ignored). In CI, set them as",
        "# secrets of the repository instead.",
    ]
    import textwrap

    overrides = []
    for section_name, key_name, key in declared_keys():
        if key.secret and key.env:
            lines += [
                "",
                *textwrap.wrap(
                    f"{section_name}.{key_name}: {key.help}",
                    width=88,
                    initial_indent="# ",
                    subsequent_indent="# ",
                ),
                f"{key.env}=",
            ]
        elif key.env:
            overrides.append(f"# {key.env}=  # overrides {section_name}.{key_name}")
    lines += [
        "",
        "# Not secrets: each points toolkit at another server than toolkit.toml's.",
        *overrides,
    ]
    return "\n".join(lines) + "\n"


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


NO_CONFIG = f"no {DEFAULT_CONFIG_NAME} here: run toolkit init (or pass --config)"


def load_config(
    path: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    *,
    missing_ok: bool = False,
) -> Config:
    """Read, override and validate the configuration; raise `ConfigError` with every problem.

    Without a file (`./toolkit.toml` when `path` is None): `ConfigError` saying to run
    `toolkit init`, or, with `missing_ok`, the defaults (and the environment's overrides)
    for a project in that folder."""
    given = path is not None
    path = Path(path) if path is not None else Path(DEFAULT_CONFIG_NAME)
    name = path.name
    if not path.is_file():
        if path.exists():
            raise ConfigError([f"{path}: not a file"])
        if not missing_ok:
            raise ConfigError(
                [
                    f"{path}: file not found (run toolkit init {path.parent}, or check --config)"
                    if given
                    else NO_CONFIG
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
    return replace(config, warnings=tuple(warnings)) if warnings else config


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
    for section_name, value in data.items():
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
    return Config(path=path, root=root, origins=origins, **sections)
