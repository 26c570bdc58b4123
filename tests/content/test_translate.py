"""The bodies of posts written for Hugo, Jekyll, Eleventy and MDX, as dev.to reads them
(`toolkit.content.translate`): each generator's documented syntax, and properties over
generated bodies (none of the generator's syntax left outside code, code unchanged)."""

from __future__ import annotations

import re
import textwrap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.content.images import code_mask
from toolkit.content.liquid import prose as masked
from toolkit.content.translate import Site, translate

SITE = Site(
    "https://example.org/blog",
    page_of=lambda name: {
        "posts/other.md": "https://example.org/blog/other/",
        "/posts/other": "https://example.org/blog/other/",
        "2010-07-21-name": "https://example.org/blog/2010/07/21/name/",
        "_posts/2016-07-26-name-of-post.md": "https://example.org/blog/name-of-post/",
    }.get(name),
)


def hugo(body: str) -> str:
    return translate(textwrap.dedent(body), "hugo", SITE).body


def jekyll(body: str) -> str:
    return translate(textwrap.dedent(body), "jekyll", SITE).body


def mdx(body: str) -> str:
    return translate(textwrap.dedent(body), "astro", SITE, mdx=True).body


# -- Hugo: the embedded shortcodes, as Hugo's documentation writes them ------------------


def test_hugo_video_and_post_shortcodes_become_dev_to_tags():
    assert hugo("{{< youtube 0RKpf3rK57I >}}") == "{% youtube 0RKpf3rK57I %}"
    assert hugo('{{< youtube id=0RKpf3rK57I loading="lazy" start=30 >}}') == (
        "{% youtube 0RKpf3rK57I %}"
    )
    assert hugo("{{< vimeo 55073825 >}}") == "{% vimeo 55073825 %}"
    assert hugo('{{< vimeo id="146022717" class="x" >}}') == "{% vimeo 146022717 %}"
    assert hugo('{{< x user="SanDiegoZoo" id="1453110110599868418" >}}') == (
        "{% twitter 1453110110599868418 %}"
    )
    assert hugo('{{< tweet user="SanDiegoZoo" id="1453110110599868418" >}}') == (
        "{% twitter 1453110110599868418 %}"
    )
    assert hugo("{{< tweet 877500564405444608 >}}") == "{% twitter 877500564405444608 %}"
    assert hugo("{{% youtube 0RKpf3rK57I %}}") == "{% youtube 0RKpf3rK57I %}"
    assert hugo("{{< instagram BWNjjyYFxVx >}}") == "{% instagram BWNjjyYFxVx %}"
    assert hugo("{{<youtube 0RKpf3rK57I>}}") == "{% youtube 0RKpf3rK57I %}"


def test_hugo_gist_becomes_dev_to_gist_with_its_file():
    assert hugo("{{< gist jmooring 23932424365401ffa5e9d9810102a477 >}}") == (
        "{% gist https://gist.github.com/jmooring/23932424365401ffa5e9d9810102a477 %}"
    )
    assert hugo('{{< gist jmooring 23932424365401ffa5e9d9810102a477 "list.html" >}}') == (
        "{% gist https://gist.github.com/jmooring/23932424365401ffa5e9d9810102a477"
        " file=list.html %}"
    )


def test_hugo_figure_is_an_image_with_its_caption_and_link():
    assert hugo('{{< figure src="/images/a.jpg" alt="A kitten" caption="Sleeping" >}}') == (
        "![A kitten](/images/a.jpg)\n*Sleeping*"
    )
    assert (
        hugo(
            '{{< figure src="b c.png" title="T" link="https://e.org" attr="Ann"'
            ' attrlink="https://ann.org" >}}'
        )
        == '[![T](<b c.png> "T")](https://e.org)\n*[Ann](https://ann.org)*'
    )


def test_hugo_highlight_is_a_fence_holding_the_code_as_written():
    body = """\
        Before.
        {{< highlight go "linenos=inline, hl_lines=3 6-8" >}}
        package main
        // ``` inside
        {{< /highlight >}}
        After.
        """
    assert hugo(body) == "Before.\n````go\npackage main\n// ``` inside\n````\nAfter.\n"
    assert hugo("x {{% highlight html %}}<b>{{% /highlight %}} y") == ("x \n```html\n<b>\n```\n y")


def test_hugo_ref_and_relref_are_the_pages_absolute_address():
    assert hugo('[other]({{< ref "posts/other.md" >}})') == (
        "[other](https://example.org/blog/other/)"
    )
    assert hugo('[o]({{< relref path="/posts/other" lang="en" >}})') == (
        "[o](https://example.org/blog/other/)"
    )
    assert hugo('[s]({{< ref "posts/other.md#who" >}})') == (
        "[s](https://example.org/blog/other/#who)"
    )
    assert hugo('[here]({{< ref "#part" >}})') == "[here](#part)"
    missing = translate('[m]({{< ref "gone.md" >}})', "hugo", SITE)
    assert missing.body == "[m](gone.md)"
    assert missing.notes[0].message.startswith("ref 'gone.md': no post of that name")


def test_hugo_details_comment_and_shown_shortcodes():
    assert hugo('{{< details summary="See" >}}\nHidden\n{{< /details >}}') == (
        "{% details See %}\nHidden\n{% enddetails %}"
    )
    assert hugo("a {{% comment %}} not shown {{% /comment %}} b") == "a  b"
    assert hugo("{{< /details >}}") == ""  # closing nothing: dev.to would refuse its end
    assert hugo("Write {{</* youtube 0RKpf3rK57I */>}} to embed.") == (
        "Write ` {{< youtube 0RKpf3rK57I >}} ` to embed."
    )


def test_hugo_unknown_shortcode_is_left_out_with_a_note_naming_it_and_its_line():
    result = translate(
        "One.\n\n{{< notice warning >}}\nCareful.\n{{< /notice >}}\n{{< qr text=x />}}\n",
        "hugo",
        SITE,
    )
    assert result.body == "One.\n\n\nCareful.\n\n\n"
    assert [(n.line, n.message.split(":")[0]) for n in result.notes] == [
        (3, "{{< notice >}}"),
        (6, "{{< qr >}}"),
    ]


def test_a_note_shows_what_the_body_holds_escaped():
    (note,) = translate("{{< bad\x1b[31mname >}}", "hugo", SITE).notes
    assert "\x1b" not in note.message and "bad\\x1b[31mname" in note.message


def test_hugo_site_address_expanded():
    assert hugo("![x]({{ .Site.BaseURL }}/images/y.png)") == (
        "![x](https://example.org/blog/images/y.png)"
    )
    assert hugo("![x]({{ .Site.BaseURL }}images/y.png)") == (
        "![x](https://example.org/blog/images/y.png)"
    )


def test_hugo_syntax_in_code_is_kept_as_written():
    body = "```\n{{< youtube 0RKpf3rK57I >}}\n```\nand `{{< x id=1 >}}` inline\n"
    assert hugo(body) == body
    nested = "````md\n```\n{{< gist a b >}}\n```\n````\n"
    assert hugo(nested) == nested


def test_a_never_closed_opener_is_shown_as_text():
    assert hugo("a {{< b") == "a &#123;{< b"
    assert jekyll("x {{ site.title") == "x &#123;{ site.title"


# -- Jekyll and Eleventy: Liquid ---------------------------------------------------------


def test_jekyll_highlight_is_a_fence():
    body = """\
        {% highlight ruby linenos %}
        def foo
          puts 'foo'
        end
        {% endhighlight %}
        """
    assert jekyll(body) == "```ruby\ndef foo\n  puts 'foo'\nend\n```\n"


def test_jekyll_post_url_and_link_are_the_posts_address():
    assert jekyll("[Name]({% post_url 2010-07-21-name %})") == (
        "[Name](https://example.org/blog/2010/07/21/name/)"
    )
    assert jekyll("[N]({% link _posts/2016-07-26-name-of-post.md %})") == (
        "[N](https://example.org/blog/name-of-post/)"
    )


def test_jekyll_site_variables_and_url_filters():
    assert jekyll("![b]({{ site.baseurl }}/assets/b.png)") == "![b](/blog/assets/b.png)"
    assert jekyll("![b]({{site.url}}{{ site.baseurl }}/b.png)") == (
        "![b](https://example.org/blog/b.png)"
    )
    assert jekyll("![c]({{ '/assets/c.png' | relative_url }})") == "![c](/blog/assets/c.png)"
    assert jekyll('![c]({{ "/c.png" | absolute_url }})') == "![c](https://example.org/blog/c.png)"
    unknown = translate("By {{ site.author }}.", "jekyll", SITE)
    assert unknown.body == "By ."
    assert "{{ site.author }}: a site value" in unknown.notes[0].message


def test_jekyll_tags_dev_to_knows_are_kept_others_left_out():
    assert jekyll("{% youtube dQw4w9WgXcQ %}") == "{% youtube dQw4w9WgXcQ %}"
    assert jekyll("{% twitter https://twitter.com/jekyllrb/status/1234567 %}") == (
        "{% twitter 1234567 %}"
    )
    assert jekyll("{% gist parkr/931c1c8d465a04042403 %}") == (
        "{% gist https://gist.github.com/parkr/931c1c8d465a04042403 %}"
    )
    result = translate("a\n{% include note.html %}\nb", "jekyll", SITE)
    assert result.body == "a\n\nb"
    assert result.notes[0].line == 2 and "{% include %}" in result.notes[0].message
    assert jekyll("a {% comment %} hidden {% endcomment %} b") == "a  b"
    raw = "{% raw %}{{ site.url }} {% include x %}{% endraw %}"
    assert jekyll(raw) == raw


def test_eleventy_reads_liquid_too():
    assert translate("{% highlight js %}x{% endhighlight %}", "eleventy").body == ("```js\nx\n```")


# -- MDX ---------------------------------------------------------------------------------


def test_mdx_statements_and_comments_removed():
    body = """\
        import { Callout } from '../components';
        import {
          Tabs,
          Tab,
        } from "@astrojs/starlight/components";
        export const meta = {
          title: 'x',
        };

        Text {/* a note to self */} here.
        """
    assert mdx(body) == "\nText  here.\n"


def test_mdx_components_translated_or_left_out_with_their_children():
    assert mdx('<YouTube id="dQw4w9WgXcQ" />') == "{% youtube dQw4w9WgXcQ %}"
    assert mdx("<Tweet id='1453110110599868418' />") == "{% twitter 1453110110599868418 %}"
    assert mdx('<Vimeo url="https://vimeo.com/76979871" />') == "{% vimeo 76979871 %}"
    assert mdx('<Gist url="https://gist.github.com/u/abc123" />') == (
        "{% gist https://gist.github.com/u/abc123 %}"
    )
    assert (
        mdx("import shot from './shot.png';\n\n<Image src={shot} alt=\"A shot\" />\n")
        == "\n![A shot](./shot.png)\n"
    )
    result = translate('<Callout type="tip">\nRead **this**.\n</Callout>\n', "astro", mdx=True)
    assert result.body == "\nRead **this**.\n\n"
    assert result.notes[0].line == 1 and "<Callout>" in result.notes[0].message


def test_mdx_in_code_is_kept():
    body = "```mdx\nimport X from 'y';\n<YouTube id=\"dQw4w9WgXcQ\" />\n```\n"
    assert mdx(body) == body


def test_dev_to_posts_and_markdown_of_other_generators_are_unchanged():
    body = "{{< youtube 0RKpf3rK57I >}}\nimport x from 'y'\n{% highlight %}\n"
    assert translate(body, "devto", SITE).body == body
    assert translate(body, "astro", SITE).body == body  # an Astro .md file: no MDX


def test_line_map_names_the_source_line_after_removed_statements():
    result = translate("import a from 'a';\nimport b from 'b';\n\nText\n", "astro", mdx=True)
    assert result.body == "\nText\n"
    assert result.line_map() == [3, 4, 5]


# -- properties --------------------------------------------------------------------------

_WORD = st.text(alphabet="abc xyz.-_=\"'/", min_size=0, max_size=12)
_HUGO = st.one_of(
    st.builds(lambda n, a: f"{{{{< {n} {a} >}}}}", st.sampled_from(["youtube", "x", "foo", "figure", "/foo", "ref"]), _WORD),
    st.builds(lambda n, a: f"{{{{% {n} {a} %}}}}", st.sampled_from(["highlight", "/highlight", "comment", "/comment", "bar"]), _WORD),
    st.just("{{< "), st.just("{{%"), st.just(">}}"), st.just("{{ .Site.BaseURL }}"),
)  # fmt: skip
_LIQUID = st.one_of(
    st.builds(lambda n, a: f"{{% {n} {a} %}}", st.sampled_from(["highlight", "endhighlight", "include", "post_url", "comment", "endcomment", "youtube"]), _WORD),
    st.sampled_from(["{{ site.baseurl }}", "{{ site.url }}", "{{ site.title }}", "{{site.x", "{{ 'a' | relative_url }}", "{% ", "%}"]),
)  # fmt: skip
_MDX = st.one_of(
    st.sampled_from(["import X from 'y';", "export const a = {", "}", "import {", "<Foo>", "</Foo>", '<YouTube id="dQw4w9WgXcQ" />', "{/* c */}", "<Bar x={1} />"]),
)  # fmt: skip
_CODE = st.one_of(
    st.builds(lambda t: f"```\n{t}\n```", st.text(alphabet="{}<>%/ ab\n", max_size=30).filter(lambda t: "```" not in t and "~~~" not in t)),
    st.builds(lambda t: f"`{t}`", st.text(alphabet="{}<>%/ ab", min_size=1, max_size=12).filter(lambda t: "`" not in t)),
)  # fmt: skip
_PROSE = st.text(alphabet="ab \n#*[]()!", max_size=10)


def _bodies(syntax: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(st.one_of(syntax, _CODE, _PROSE), max_size=14).map("\n".join)


def _fenced_blocks(body: str) -> list[str]:
    """The lines of fenced code (fences included), in order."""
    lines = body.split("\n")
    return [line for line, inside in zip(lines, code_mask(body), strict=True) if inside]


def _left_out_of_code(body: str, markers: tuple[str, ...]) -> list[str]:
    prose = masked(body)
    return [marker for marker in markers if marker in prose]


FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(_bodies(_HUGO))
def test_property_no_hugo_syntax_left_outside_code(body):
    out = translate(body, "hugo", SITE).body
    assert _left_out_of_code(out, ("{{<", "{{%", "{{ site.")) == []


@FAST
@given(_bodies(_LIQUID))
def test_property_no_site_variable_left_outside_code(body):
    out = translate(body, "jekyll", SITE).body
    assert _left_out_of_code(out, ("{{ site.", "{{site.")) == []


@FAST
@given(_bodies(_MDX))
def test_property_no_mdx_statement_left_outside_code(body):
    out = translate(body, "astro", SITE, mdx=True).body
    assert not re.search(r"^(import|export)\b", masked(out), re.MULTILINE), out


def _keeps_code(syntax: str) -> bool:
    """Not a pair that makes its own code block (highlight) or hides what it holds."""
    return "highlight" not in syntax and "comment" not in syntax


@FAST
@given(_bodies(st.one_of(_HUGO.filter(_keeps_code), _LIQUID.filter(_keeps_code), _MDX)))
def test_property_code_blocks_are_left_byte_identical(body):
    for generator, is_mdx in (("hugo", False), ("jekyll", False), ("astro", True)):
        out = translate(body, generator, SITE, mdx=is_mdx).body
        assert _fenced_blocks(out) == _fenced_blocks(body), (generator, out)


def test_eleventy_image_shortcode_is_an_image():
    assert translate('{% image "./possum.png", "A possum, asleep" %}', "eleventy").body == (
        "![A possum, asleep](./possum.png)"
    )
