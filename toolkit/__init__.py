"""toolkit: docs-as-code publishing for Forem-compatible APIs, with a static site."""

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/toolkit-docs/toolkit"
USER_AGENT = f"toolkit/{__version__} (+{PROJECT_URL})"
