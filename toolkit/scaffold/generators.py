"""The generator of a blog `toolkit init` runs in, read from the generator's own files.

- Hugo: `hugo.toml`/`hugo.yaml`/`config.toml`/`config.yaml` (or `config/_default/`) with a
  `baseURL`; its `contentDir` (`content/`), `staticDir` (`static/`), `timeZone` and
  `[permalinks]`;
- Jekyll: `_config.yml` with `url`, `baseurl`, `permalink` and `timezone`, and `_posts/`;
- Astro: `astro.config.*` with `site` and `trailingSlash`, a collection of
  `src/content/<collection>/`, the page that serves it (`src/pages/<route>/[...slug].astro`)
  and `public/`;
- Eleventy: `eleventy.config.*` or `.eleventy.js` (its `dir.input`), the site's `url` in
  `_data/metadata.*`;
- Next: a `package.json` naming `next`, with `src/posts/`, `posts/` or `_posts/` and
  `public/` (the site's address: the package's `homepage`).

What is read becomes `[source]` in `toolkit.toml` (`source_toml`), with the id key the
posts use (`devtoId`, `devto_id`, `dev_to`, `id`), a month/day/year `date_format` when the
posts' dates show it, and `adopted`: the day of the init, before which a post without an
article is not sent. Every value is the writer's to change.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from toolkit import localfiles
from toolkit.config.templates import toml_value
from toolkit.content.front_matter import load_front_matter
from toolkit.content.sources import article_of
from toolkit.content.sources.dates import slashed_order, zone
from toolkit.content.sources.tables import ID_KEYS
from toolkit.scaffold.files import SAFE_NAME

MAX_CONFIG_BYTES = 256 * 1024  # a generator's configuration file; larger ones are not read
POST_SUFFIXES = (".md", ".mdx", ".markdown")
NAMES = {
    "hugo": "Hugo",
    "jekyll": "Jekyll",
    "astro": "Astro",
    "eleventy": "Eleventy",
    "next": "Next",
}


@dataclass(frozen=True)
class Detected:
    generator: str
    content_dir: str  # relative, POSIX
    source: dict[str, Any] = field(default_factory=dict)  # [source] keys -> values
    read_from: str = ""  # the generator's file it was read from
    title: str | None = None  # the site's title there: `[site] title`

    def describe(self) -> str:
        values = ", ".join(
            f"{key} = {toml_value(value)}"
            for key, value in self.source.items()
            if key != "generator"
        )
        name = NAMES[self.generator]
        article = "an" if name[0] in "AEIOU" else "a"
        return (
            f"{article} {name} blog ({self.read_from}): content_dir = "
            f"{toml_value(self.content_dir)}; [source] {values} written to toolkit.toml"
        )


def _read(root: Path, path: Path) -> str | None:
    """The text of a generator's file, when it is a regular file of the project (one a
    symlink leads out of `root` to is not its)."""
    if localfiles.leads_out(root, path):
        return None
    try:
        if not path.is_file() or path.stat().st_size > MAX_CONFIG_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _yaml(text: str) -> dict[str, Any]:
    try:
        data = load_front_matter(text)
    except (yaml.YAMLError, RecursionError):  # a broken configuration gives nothing to read
        return {}
    return data if isinstance(data, dict) else {}


def _toml(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except (ValueError, RecursionError):
        return {}


def _js_string(text: str, name: str) -> str | None:
    match = re.search(rf"""\b{name}\s*:\s*(['"`])([^'"`\n]+)\1""", text)
    return match.group(2).strip() if match else None


def _title(value: Any) -> str | None:
    """A site's title as its generator's file gives it, when it is one line of text."""
    if not isinstance(value, str):
        return None
    title = " ".join(value.split())
    if not title or len(title) > 200 or any(ord(c) < 32 or ord(c) == 127 for c in title):
        return None
    return title


def _folder(value: Any, default: str) -> str:
    """A folder a generator's configuration names, when it is a plain one inside the
    project; else `default`."""
    if not isinstance(value, str):
        return default
    parts = PurePosixPath(value.strip().strip("/")).parts
    if parts and all(SAFE_NAME.fullmatch(part) and part != ".." for part in parts):
        return "/".join(parts)
    return default


def _url(value: Any) -> str | None:
    if isinstance(value, str) and value.strip().startswith(("http://", "https://")):
        return value.strip().rstrip("/")
    return None


def _posts_under(folder: Path, limit: int = 5000) -> list[Path]:
    found: list[Path] = []
    if not folder.is_dir():
        return found
    for path in sorted(folder.rglob("*")):
        if len(found) >= limit:
            break
        if path.suffix in POST_SUFFIXES and path.is_file() and not path.is_symlink():
            if not any(part.startswith((".", "_")) for part in path.relative_to(folder).parts[:-1]):
                found.append(path)
    return found


def _front(root: Path, path: Path) -> dict[str, Any]:
    text = _read(root, path) or ""
    if text.startswith("+++"):  # Hugo's TOML front matter
        end = text.find("\n+++", 3)
        return _toml(text[3:end]) if end > 0 else {}
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    return _yaml(text[3:end]) if end > 0 else {}


def read_posts_keys(folder: Path, detected: dict[str, Any]) -> None:
    """The id key the posts use and a month/day/year form their dates show, into
    `detected` (the [source] values)."""
    ids: Counter[str] = Counter()
    slashed: list[str] = []
    for path in _posts_under(folder, 500):
        meta = _front(folder, path)
        for key in ID_KEYS:
            number, ref = article_of(meta.get(key))
            if number is not None or ref is not None or key in meta and key != "id":
                ids[key] += 1
        slashed += [v for v in meta.values() if isinstance(v, str) and "/" in v and len(v) <= 10]
    if ids:
        detected["id_key"] = ids.most_common(1)[0][0]
    order = slashed_order(slashed)
    if order:
        detected["date_format"] = order


def _hugo(folder: Path) -> Detected | None:
    for name in (
        "hugo.toml",
        "hugo.yaml",
        "hugo.yml",
        "hugo.json",
        "config.toml",
        "config.yaml",
        "config.yml",
        "config/_default/hugo.toml",
        "config/_default/config.toml",
        "config/_default/hugo.yaml",
    ):
        text = _read(folder, folder / name)
        if text is None:
            continue
        if name.endswith(".toml"):
            data = _toml(text)
        elif name.endswith(".json"):
            try:
                data = json.loads(text)
            except ValueError:
                data = {}
        else:
            data = _yaml(text)
        if not isinstance(data, dict) or "baseURL" not in data and "baseurl" not in data:
            continue
        content = _folder(data.get("contentDir"), "content")
        static = _folder(data.get("staticDir"), "static")
        source: dict[str, Any] = {"generator": "hugo"}
        if url := _url(data.get("baseURL", data.get("baseurl"))):
            source["url"] = url
        if (folder / static).is_dir():
            source["static_dir"] = static
        content_dir = content
        sections = (
            [p.name for p in (folder / content).iterdir()] if (folder / content).is_dir() else []
        )
        permalinks = data.get("permalinks")
        if isinstance(permalinks, dict) and isinstance(permalinks.get("page"), dict):
            permalinks = permalinks["page"]
        for section in ("posts", "post", "blog"):
            if section in sections and (folder / content / section).is_dir():
                content_dir = f"{content}/{section}"
                pattern = permalinks.get(section) if isinstance(permalinks, dict) else None
                if isinstance(pattern, str):
                    source["permalink"] = pattern
                else:
                    source["permalink"] = f"/{section}/:path/"
                break
        if isinstance(data.get("timeZone"), str):
            source["timezone"] = data["timeZone"]
        return Detected("hugo", content_dir, source, name, _title(data.get("title")))
    return None


def _jekyll(folder: Path) -> Detected | None:
    text = _read(folder, folder / "_config.yml") or _read(folder, folder / "_config.yaml")
    if text is None or not (folder / "_posts").is_dir():
        return None
    data = _yaml(text)
    source: dict[str, Any] = {"generator": "jekyll"}
    url = _url(data.get("url"))
    baseurl = data.get("baseurl")
    baseurl = baseurl if isinstance(baseurl, str) else ""
    if url:
        source["url"] = url + ("/" + baseurl.strip("/") if baseurl.strip("/") else "")
    source["static_dir"] = "."
    permalink = data.get("permalink")
    source["permalink"] = permalink if isinstance(permalink, str) and permalink else "date"
    if isinstance(data.get("timezone"), str):
        source["timezone"] = data["timezone"]
    return Detected("jekyll", "_posts", source, "_config.yml", _title(data.get("title")))


def _astro(folder: Path) -> Detected | None:
    for name in (
        "astro.config.mjs",
        "astro.config.js",
        "astro.config.ts",
        "astro.config.mts",
        "astro.config.cjs",
    ):
        text = _read(folder, folder / name)
        if text is not None:
            break
    else:
        return None
    source: dict[str, Any] = {"generator": "astro"}
    if url := _url(_js_string(text, "site")):
        source["url"] = url
    if (folder / "public").is_dir():
        source["static_dir"] = "public"
    collections = folder / "src" / "content"
    best, count = None, 0
    if collections.is_dir():
        for entry in sorted(collections.iterdir()):
            if entry.is_dir() and not entry.name.startswith((".", "_")):
                found = len(_posts_under(entry))
                if found > count:
                    best, count = entry.name, found
    content_dir = f"src/content/{best}" if best else "src/content"
    route = best or ""
    pages = folder / "src" / "pages"
    if pages.is_dir():
        routes = sorted(
            p.parent.relative_to(pages).as_posix()
            for p in pages.rglob("*.astro")
            if p.name in ("[...slug].astro", "[slug].astro", "[...id].astro", "[id].astro")
        )
        if routes:
            route = best if best in routes else routes[0]
    trailing = _js_string(text, "trailingSlash")
    slash = trailing != "never"
    source["permalink"] = f"/{route}/:path" if route and route != "." else "/:path"
    source["trailing_slash"] = slash
    return Detected("astro", content_dir, source, name)


def _eleventy(folder: Path) -> Detected | None:
    for name in (
        "eleventy.config.js",
        "eleventy.config.mjs",
        "eleventy.config.cjs",
        ".eleventy.js",
        ".eleventy.cjs",
    ):
        text = _read(folder, folder / name)
        if text is not None:
            break
    else:
        return None
    source: dict[str, Any] = {"generator": "eleventy"}
    title = None
    input_dir = _folder(_js_string(text, "input"), ".")
    data_dir = _folder((_js_string(text, "data") or "").removeprefix("../"), "_data")
    for candidate in (f"{input_dir}/{data_dir}", "_data", data_dir):
        for data_name in ("metadata.js", "metadata.json", "metadata.mjs", "site.json", "site.js"):
            data_text = _read(folder, folder / candidate / data_name)
            if data_text and (
                url := _url(_js_string(data_text, "url") or _js_string(data_text, '"url"'))
            ):
                source["url"] = url
                title = _title(_js_string(data_text, "title") or _js_string(data_text, '"title"'))
                break
        if "url" in source:
            break
    base = folder / input_dir
    content_dir, sub = input_dir, ""
    for name_ in ("blog", "posts", "post"):
        if (base / name_).is_dir():
            content_dir = name_ if input_dir == "." else f"{input_dir}/{name_}"
            sub = name_
            break
    if (folder / "public").is_dir():
        source["static_dir"] = "public"
    source["permalink"] = f"/{sub}/:path/" if sub else "/:path/"
    return Detected("eleventy", content_dir, source, name, title)


def _next(folder: Path) -> Detected | None:
    text = _read(folder, folder / "package.json")
    if text is None:
        return None
    try:
        package = json.loads(text)
    except ValueError:
        return None
    if not isinstance(package, dict):
        return None
    deps = {**(package.get("dependencies") or {}), **(package.get("devDependencies") or {})}
    if "next" not in deps:
        return None
    posts = next(
        (
            name
            for name in ("src/posts", "posts", "_posts", "content/posts", "data/blog", "content")
            if (folder / name).is_dir()
        ),
        None,
    )
    if posts is None:
        return None
    source: dict[str, Any] = {"generator": "next"}
    if url := _url(package.get("homepage")):
        source["url"] = url
    if (folder / "public").is_dir():
        source["static_dir"] = "public"
    route = "posts"
    for pages in (
        folder / "pages",
        folder / "src" / "pages",
        folder / "app",
        folder / "src" / "app",
    ):
        if pages.is_dir():
            dynamic = sorted(p for p in pages.rglob("[[]*[]]*") if p.parent != pages or p.is_dir())
            if dynamic:
                route = dynamic[0].parent.relative_to(pages).as_posix()
                break
    config = (
        _read(folder, folder / "next.config.js") or _read(folder, folder / "next.config.mjs") or ""
    )
    source["permalink"] = f"/{route}/:path" if route not in ("", ".") else "/:path"
    source["trailing_slash"] = bool(re.search(r"trailingSlash\s*:\s*true", config))
    return Detected("next", posts, source, "package.json")


def detect(folder: Path, today: dt.date | None = None) -> Detected | None:
    """The generator of the blog in `folder`, when its own files say which (module doc)."""
    if not folder.is_dir():
        return None
    for reader in (_hugo, _jekyll, _astro, _eleventy, _next):
        found = reader(folder)
        if found is not None:
            posts = folder / found.content_dir
            if not localfiles.leads_out(folder, posts):  # a link out: not the project's
                read_posts_keys(posts, found.source)
            if today is None:  # the day in the site's time zone, as its dates are read
                today = dt.datetime.now(zone(found.source.get("timezone"))).date()
            found.source["adopted"] = today.isoformat()
            return found
    return None


def source_toml(detected: Detected) -> str:
    """The `[source]` section `toolkit init` writes for `detected`."""
    lines = [
        "",
        f"# Posts written for {NAMES[detected.generator]}: read as the generator means them, "
        "sent to dev.to as",
        "# it takes them. A post dated before `adopted` without an article is not sent "
        "(crosspost: true sends it).",
        "[source]",
    ]
    lines += [f"{key} = {toml_value(value)}" for key, value in detected.source.items()]
    return "\n".join(lines) + "\n"
