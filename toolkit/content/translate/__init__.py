"""Bodies as dev.to reads them: a post written for another generator, translated.

A blog kept with Hugo, Jekyll, Eleventy, Astro or Next holds its generator's syntax in
its posts; dev.to would show it as text (or refuse a Liquid tag it does not know). What
`translate` does, outside fenced code and code spans (code shows syntax as written):

- Hugo shortcodes, `{{< name ... >}}` and `{{% name ... %}}`, named or positional
  parameters, closing `{{< /name >}}`: `youtube`, `vimeo` become dev.to's tags of the same
  name, `x`/`tweet`/`twitter` its `{% twitter id %}`, `gist` its `{% gist URL %}`,
  `figure` an image with its caption, `highlight` a fenced block, `ref`/`relref` the
  absolute address of the page named, `details` dev.to's `{% details %}`; `comment` is
  removed with what it holds; `{{</* name */>}}` (Hugo's way to show one) becomes a code
  span. Hugo's `{{ .Site.BaseURL }}` becomes the site's address.
- Liquid (Jekyll, Eleventy): `{% highlight lang %}...{% endhighlight %}` a fenced block,
  `{% post_url NAME %}` and `{% link PATH %}` the page's address, `{% comment %}` removed,
  `{% raw %}` kept (dev.to reads it); `{{ site.baseurl }}`, `{{ site.url }}` and the
  `relative_url`/`absolute_url`/`url` filters expanded; dev.to's own tags kept.
- MDX (`.mdx` files): `import`/`export` statements and `{/* comments */}` removed;
  components (a capitalised element) translated when dev.to has the embed (`<YouTube>`,
  `<Tweet>`, `<Vimeo>`, `<Gist>`, `<Image>`/`<Picture>` as an image), else removed with
  their children kept.

Anything else of the generator's (an unknown shortcode, tag or component) is removed and
named in a `Note`: the post is still sent. Every scanner here is linear in the body's size:
delimiters are found with `str.find` and each search resumes where the last one stopped.
"""

from __future__ import annotations

from toolkit.content.translate.hugo import Hugo
from toolkit.content.translate.liquid import Liquid
from toolkit.content.translate.mdx import Mdx
from toolkit.content.translate.rewriter import Note, Site, Translation, identity

__all__ = ["Note", "Site", "Translation", "translate", "translates"]


def translates(generator: str, *, mdx: bool = False) -> bool:
    """Whether a post of `generator` (an `.mdx` file when `mdx`) is translated at all."""
    return mdx or generator in ("hugo", "jekyll", "eleventy")


def translate(
    body: str, generator: str, site: Site | None = None, *, mdx: bool = False
) -> Translation:
    """`body` as dev.to reads it (module doc); a dev.to-style post is returned unchanged."""
    if not translates(generator, mdx=mdx):
        return identity(body)
    kind = Mdx if mdx else Hugo if generator == "hugo" else Liquid
    rewriter = kind(body, site or Site())
    rewriter.run()
    return rewriter.finish()
