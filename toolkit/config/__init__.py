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

- `keys`: what a key is: the rules a value follows, its declaration, and `Secret`;
- `sections`: the sections, every key declared once, and the `Config` they make;
- `loading`: `load_config`, reading `toolkit.toml`, `.env` and the environment;
- `templates`: the commented `toolkit.toml` and `.env.example` that `toolkit init` writes.

This package gives the three names the rest of toolkit uses (`Config`, `Secret`,
`load_config`); the declarations are imported from their own modules.
"""

from toolkit.config.keys import Secret
from toolkit.config.loading import load_config
from toolkit.config.sections import Config

__all__ = ["Config", "Secret", "load_config"]
