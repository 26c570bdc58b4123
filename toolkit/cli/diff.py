"""`toolkit diff PATH`: a post against its article on the website."""

from __future__ import annotations

import click

from toolkit.cli.context import CliContext, common_options, json_option, pass_cli, print_json
from toolkit.cli.output import stderr, stdout
from toolkit.commands.diff import diff as diff_post
from toolkit.commands.results import to_json


@click.command()
@click.argument("path", type=click.Path())
@json_option
@common_options
@pass_cli
def diff(cli: CliContext, path: str, as_json: bool) -> None:
    """Show a post against its article on the website, as a unified diff.

    The `---` side is what `toolkit publish` would send for the post now, the `+++` side
    the body the website holds, both with their front matter as the API has them. The
    status says which side changed since the post was last sent: in sync, changed here,
    changed on the website, changed on both sides (then `toolkit pull --merge` merges
    them), differs (toolkit.lock has no record to tell), or not on the website. --json
    prints one document: path, status, article_id, url, diff. Reads only; needs
    FOREM_API_KEY.

    \b
    Example:
      toolkit diff content/hello.md
      toolkit diff content/hello.md --json
    """

    result = diff_post(cli.config, path)
    if as_json:
        print_json(to_json(result))
        return
    if result.diff:
        stdout.print(result.diff, end="", highlight=False, markup=False, soft_wrap=True)
    if not cli.quiet:
        article = f" (article {result.article_id})" if result.article_id is not None else ""
        stderr.print(f"{result.path}{article}: {result.status}", highlight=False, markup=False)
