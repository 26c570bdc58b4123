"""Translation benchmark: bodies written for Hugo, Jekyll and MDX (`content/translate.py`).

Printed: the time to translate (and map the lines of) a body of real-shaped prose with
shortcodes, Liquid and MDX, at 200 KB and 800 KB (the API's largest body), and the same
for hostile bodies made of one construct repeated (openers never closed, unclosed
components, endless statements): each time grows with the size, never with its square.
"""

from __future__ import annotations

import time

from toolkit.content.translate import translate

PROSE = (
    "Some text with a [link](https://example.org) and `{{< code >}}`.\n\n"
    "{{< youtube 0RKpf3rK57I >}}\n\n![a](/images/a.png)\n\n"
    "{% highlight go %}\nfunc main() {}\n{% endhighlight %}\n\n"
    "import X from './x.astro';\n\n<YouTube id=\"dQw4w9WgXcQ\" />\n\n"
    "```\n{{< gist a b >}}\n```\n\n"
)
HOSTILE = {
    "never closed {{<": "{{< ",
    "shortcode pairs": "{{< x >}}{{< /x >}}",
    "Liquid tags": "{% include x %}\n",
    "code spans": "` `` ``` ",
    "open components": '<Foo a="',
    "MDX comments": "{/* ",
    "open statements": "import {\n",
}
GENERATORS = (("hugo", False), ("jekyll", False), ("astro", True))


def _time(body: str) -> float:
    start = time.perf_counter()
    for generator, mdx in GENERATORS:
        translate(body, generator, mdx=mdx).line_map()
    return (time.perf_counter() - start) / len(GENERATORS)


def main() -> None:
    cases = {"real-shaped": PROSE, **HOSTILE}
    for name, unit in cases.items():
        times = [_time(unit * (size // len(unit))) for size in (200_000, 800_000)]
        print(
            f"{name:18} 200 KB {times[0] * 1000:7.1f} ms   800 KB {times[1] * 1000:7.1f} ms"
            f"   x{times[1] / times[0]:.1f} for x4 the size",
            flush=True,
        )


if __name__ == "__main__":
    main()
