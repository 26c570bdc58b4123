"""The static site built from the posts: `SiteBuilder(config).build()`.

Importing this package is cheap on purpose: markdown-it, Pygments and Jinja2 are imported
only when a page has to be rendered, so a build with nothing to do never loads them.
"""

from toolkit.site.builder import BuildReport, SiteBuilder

__all__ = ["BuildReport", "SiteBuilder"]
