"""The sections of `toolkit.toml`: every key, declared once, and the `Config` they make.

Each section is a frozen dataclass (`SiteConfig`, ...) whose fields are the keys
(`option(...)` / `secret(...)` of `toolkit.config.keys`); `Config` holds one of each,
with the project's folder and where each value came from. `SECTIONS` and
`declared_keys()` walk the declarations, for the loader, `toolkit config` and
`toolkit init`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from toolkit.config.keys import (
    ARCHIVE_FORMAT,
    BASE_URL,
    BOOLEAN,
    CANONICAL_HOME,
    EXPORT_SOURCE,
    GENERATOR,
    ISO_DATE,
    ISSUER,
    KEY,
    ORGANIZATION,
    PATH,
    PATTERNS,
    PORT,
    POSITIVE_INT,
    SECONDS,
    STRING,
    TAG_MAP,
    TEXT,
    TIME_ZONE,
    URL,
    Key,
    Secret,
    option,
    secret,
)

# The rules of a writer's folder and variable live with the `[writers]` table; init's
# detection of a team's layout reads them from here too.
from toolkit.config.writers import ENV_NAME as ENV_NAME
from toolkit.config.writers import WRITER_FOLDER as WRITER_FOLDER
from toolkit.config.writers import WRITER_VARIABLE_PREFIX as WRITER_VARIABLE_PREFIX
from toolkit.config.writers import Writers
from toolkit.config.writers import writer_variable as writer_variable

DEFAULT_CONFIG_NAME = "toolkit.toml"
SECTION = "toolkit.section"  # field metadata of `Config`: the section's dataclass


@dataclass(frozen=True)
class SiteConfig:
    """[site]: the posts and the static site built from them."""

    title: str = option(TEXT, default="My posts", help="Title of the site.")
    url: str | None = option(
        URL,
        help="Where the site is served, e.g. https://example.com/blog (its links, feed "
        'and sitemap); sent to the API only when [forem] canonical = "site" says so.',
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
        help="Absolute base under which the content folder's files are served: relative "
        "images are sent to the API as URLs under it (an http(s) URL of plain characters: "
        "no user:password@, quote, bracket or space).",
    )
    images_from_site: bool = option(
        BOOLEAN,
        default=False,
        help="The site is deployed at [site] url: relative images are sent to the API as "
        "URLs of the site (when assets_base_url is unset and not publishing from CI).",
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
    enabled: bool | None = option(
        BOOLEAN,
        help="Build the site with toolkit; unset: yes for dev.to-style posts, no when "
        "[source] names another generator (whose own site it is).",
    )
    feed_full_content: bool = option(
        BOOLEAN,
        default=False,
        help="Put whole posts in the Atom feed; by default it holds their summaries.",
    )


@dataclass(frozen=True)
class ContentConfig:
    """[content]: which files of the content folder are posts."""

    exclude: tuple[str, ...] | None = option(
        PATTERNS,
        help="Files and folders of the content folder that are not posts, as gitignore "
        'patterns relative to it, e.g. ["examples/", "**/README.md"].',
    )


@dataclass(frozen=True)
class SourceConfig:
    """[source]: the generator the posts are written for (the blog a writer already keeps).

    `toolkit init` fills it from the generator's own files; every key can be set by hand.
    The posts folder is `[site] content_dir`.
    """

    generator: str = option(
        GENERATOR,
        default="devto",
        help='Whose front matter and body syntax the posts are written in: "devto" (dev.to\'s '
        "own keys), hugo, jekyll, astro, eleventy or next.",
    )
    url: str | None = option(
        URL,
        help="Where the writer's own site serves the posts, e.g. https://example.com: the "
        "base of each post's canonical_url and of its images.",
    )
    static_dir: Path | None = option(
        PATH,
        help="The generator's folder of files served as they are at the site's root "
        "(Hugo static/, Astro and Next public/): root-relative images are found there.",
    )
    permalink: str | None = option(
        TEXT,
        help="The path of a post's page on the writer's site, with :year, :month, :day, "
        ":title (the file's name) and :slug placeholders, e.g. /:year/:month/:title/.",
    )
    trailing_slash: bool = option(
        BOOLEAN, default=True, help="The writer's site serves a post's page with a final /."
    )
    timezone: str | None = option(
        TIME_ZONE,
        help="The site's time zone (IANA, e.g. America/New_York): the date in a permalink "
        "and a date written without an offset are read in it.",
    )
    date_format: str | None = option(
        TEXT,
        help='How a date the posts write ambiguously is read (strptime), e.g. "%m/%d/%Y".',
    )
    id_key: str | None = option(
        TEXT,
        help="The front-matter key holding each post's dev.to article (id, devtoId, "
        "devto_id, or dev_to with the article's slug or URL).",
    )
    skip_key: str | None = option(
        TEXT,
        help="A front-matter key that, when true, keeps a post off dev.to (devtoSkip is "
        "always read).",
    )
    adopted: str | None = option(
        ISO_DATE,
        help="When toolkit was adopted (an ISO date): a post dated before it without an "
        "article is not sent unless opted in.",
    )


@dataclass(frozen=True)
class ForemConfig:
    """[forem]: the publishing API: dev.to, or another Forem."""

    base_url: str = option(
        BASE_URL,
        default="https://dev.to",
        env="FOREM_BASE_URL",
        help="Origin of the publishing API, without /api.",
    )
    organization: str | int | None = option(
        ORGANIZATION,
        help='Publish every article into this organisation: its username (e.g. "acme") or '
        "its numeric id; for a writer who is a member of it (the API leaves a "
        "non-member's article outside it). Unset, an article already in an organisation "
        "stays there.",
    )
    organization_id: int | None = option(
        POSITIVE_INT,
        help="The numeric spelling of organization (organization = <id>), sent as it is, "
        "nothing looked up; ignored when organization is set.",
    )
    canonical: str = option(
        CANONICAL_HOME,
        default="post",
        help='Which canonical_url the API receives: "post", only a post\'s own canonical_url; '
        '"site", the post\'s page at [site] url when it has none (the site is its home).',
    )
    rate_window: float = option(
        SECONDS,
        default=30,
        help="The API's rate-limit window in seconds (30 on dev.to); the sandbox can shorten it.",
    )
    timeout: float = option(
        SECONDS, default=30, help="Seconds to wait for an answer before a request fails."
    )
    tags: tuple[tuple[str, str], ...] | None = option(
        TAG_MAP,
        help="[forem.tags]: the writer's tags as written -> the dev.to tag sent, e.g. "
        '"GitHub Copilot" = "githubcopilot" (others are lower-cased, letters and digits kept).',
    )
    api_key: Secret | None = secret(
        "FOREM_API_KEY", help="API key (dev.to: Settings, Extensions, DEV API Keys)."
    )

    @property
    def organization_ref(self) -> str | int | None:
        """The organisation to publish into, as written: a username or an id."""
        return self.organization if self.organization is not None else self.organization_id


@dataclass(frozen=True)
class ArchiveConfig:
    """[archive]: the archive service (CloudConvert) behind `toolkit export`."""

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
    """[license]: the licensing API (Google Workspace Marketplace) behind premium builds."""

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
    """[logs]: the log service (Parseable) the run log is shipped to."""

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
    content: ContentConfig = section(ContentConfig)
    source: SourceConfig = section(SourceConfig)
    forem: ForemConfig = section(ForemConfig)
    archive: ArchiveConfig = section(ArchiveConfig)
    license: LicenseConfig = section(LicenseConfig)
    logs: LogsConfig = section(LogsConfig)
    mcp: McpConfig = section(McpConfig)
    # Problems that do not stop loading (a `.env` open to other users); the CLI shows them.
    warnings: tuple[str, ...] = ()
    # The `[writers]` table of a team's repository (None: one account, FOREM_API_KEY).
    writers: Writers | None = field(default=None, compare=False, repr=False)
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
        # No resolve() for a path under the root: it costs syscalls; and plain strings,
        # which pathlib's relative_to costs ten times over (every post of `check`).
        text, root = str(path), str(self.root)
        if text.startswith(root) and path.is_absolute():
            rest = text[len(root) :]
            if not rest:
                return "."
            if rest[0] == os.sep or root.endswith(os.sep):
                rest = rest.lstrip(os.sep)
                return rest.replace(os.sep, "/") if os.sep != "/" else rest
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
