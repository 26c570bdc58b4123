from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from toolkit.cli.context import CliContext, common_options, json_option, pass_cli, print_json
from toolkit.cli.output import stderr, stdout

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.license.records import LicenseNotification
    from toolkit.license.status import LicenseStatus, NotificationsResult


@click.command(name="license")
@click.argument("what", type=click.Choice(["status", "notifications"]), default="status")
@click.option(
    "--user",
    "user",
    metavar="EMAIL",
    help="status: this user's licence too (instead of [license] user_id).",
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="notifications: every notification from the first, not only the new ones.",
)
@json_option
@common_options
@pass_cli
def license_command(
    cli: CliContext, what: str, user: str | None, show_all: bool, as_json: bool
) -> None:
    """Ask the marketplace licensing service about this project's licence.

    `status` (the default) prints the customer's licence of [license] application_id and
    customer_id, the user's when [license] user_id (or --user) is set, and whether a
    premium build (`toolkit build --premium`) would run. `notifications` pages through
    every licence notification (provisions, seat changes, expiries, deletions) and
    remembers where it stopped, in .toolkit/license-notifications.json, so the next call
    shows only new ones; --all shows them all again. Needs LICENSE_API_TOKEN (a bearer
    token, never printed). Exits 1 when the service refuses or cannot be reached.

    \b
    Example:
      toolkit license
      toolkit license status --user ana@acme.example --json
      toolkit license notifications
      toolkit license notifications --all --json
    """
    if what == "status" and show_all:
        raise click.UsageError("--all belongs to `toolkit license notifications`")
    if what == "notifications" and user is not None:
        raise click.UsageError("--user belongs to `toolkit license status`")
    if user is not None and not user.strip():
        raise click.BadParameter("must not be empty", param_hint="--user")
    if what == "status":
        from toolkit.commands.license import license_status

        status = license_status(cli.config, user=user)
        if as_json:
            from toolkit.commands.results import to_json

            print_json(to_json(status))
        else:
            _print_status(status)
        return
    from toolkit.commands.license import license_notifications

    result = license_notifications(cli.config, from_start=show_all)
    if result.notice and not cli.quiet:
        stderr.print(f"[yellow]{escape(result.notice)}[/]", highlight=False)
    if as_json:
        from toolkit.commands.results import to_json
        from toolkit.commands.results.license import NotificationsJson

        print_json(to_json(NotificationsJson.of(result)))
        return
    _print_notifications(result, quiet=cli.quiet)


def _print_status(status: LicenseStatus) -> None:
    from toolkit.license.gate import shown

    customer = status.customer
    mark = "green" if customer.active else "red"
    stdout.print(
        f"customer {escape(shown(customer.customer_id))}: [{mark}]"
        f"{escape(shown(customer.state))}[/] (application "
        f"{escape(status.application_id)})",
        highlight=False,
    )
    for edition in customer.editions:
        seats = (
            f"{edition.assigned_seats} of {edition.seat_count} seats assigned"
            if edition.seat_count is not None
            else "no seat count"
        )
        stdout.print(f"  edition {escape(shown(edition.edition_id))}: {seats}", highlight=False)
    if status.user is not None:
        user = status.user
        mark = "green" if user.active else "red"
        enabled = "enabled" if user.enabled else "not enabled by the domain administrator"
        stdout.print(
            f"user {escape(shown(user.user_id))}: [{mark}]{escape(shown(user.state))}"
            f"[/], {enabled}",
            highlight=False,
        )
    if status.premium_refusal is None:
        stdout.print("premium builds: [green]allowed[/]", highlight=False)
    else:
        stdout.print(
            f"premium builds: [red]refused[/] ({escape(status.premium_refusal)})", highlight=False
        )


def _when(notification: LicenseNotification) -> str:
    if notification.timestamp_ms is None:
        return "?"
    try:
        moment = dt.datetime.fromtimestamp(notification.timestamp_ms / 1000, dt.UTC)
    except (OverflowError, OSError, ValueError):
        return "?"
    return moment.strftime("%Y-%m-%d %H:%M:%SZ")


def _print_notifications(result: NotificationsResult, *, quiet: bool) -> None:
    from toolkit.license.gate import shown

    for item in result.notifications:
        events = "; ".join(shown(event) for event in item.events()) or "(no event)"
        stdout.print(
            f"{escape(shown(item.id))}  {_when(item)}  "
            f"{escape(shown(item.customer_id))}: {escape(events)}",
            highlight=False,
        )
    if quiet:
        return
    count = len(result.notifications)
    which = "notification" if result.from_start else "new notification"
    stderr.print(
        f"{count} {which}{'s' if count != 1 else ''} of application "
        f"{escape(result.application_id)} ({result.pages} page"
        f"{'s' if result.pages != 1 else ''}, {result.requests} request"
        f"{'s' if result.requests != 1 else ''}); the next call shows only newer ones",
        highlight=False,
    )
