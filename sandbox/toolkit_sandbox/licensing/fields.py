"""`fields=`: Google's partial responses, on every interface-D method.

The selector is Google's: names separated by commas, `a/b` for a field inside another,
`a(b,c)` for several fields inside one, `*` for every field at its level, in any
nesting. A list selects inside each of its items. A name the method's response does
not have, or a selector that does not parse, is a 400 naming the selection, before the
method runs; an empty selector selects everything.

    tree = parse("notifications(id,provisions/seatCount),nextPageToken")
    check(tree, LIST_SCHEMA)     # -> the name that is not there, or None
    select(answer, tree)         # -> the answer with only those fields
"""

from __future__ import annotations

from typing import Any

# A schema: field name -> the schema of its (object) value, or None for a scalar; the
# fields in the order of their numbers in the published proto (`licenses.FIELD_ORDER`).
Schema = dict[str, Any]
# A selection: field name -> the selection inside it, or None for all of it.
Tree = dict[str, Any]

_EDITION: Schema = {"editionId": None, "seatCount": None, "assignedSeats": None}
CUSTOMER_SCHEMA: Schema = {
    "kind": None,
    "state": None,
    "applicationId": None,
    "editions": _EDITION,
    "id": None,
    "customerId": None,
}
USER_SCHEMA: Schema = {
    name: None
    for name in (
        "kind",
        "enabled",
        "state",
        "editionId",
        "customerId",
        "applicationId",
        "id",
        "userId",
    )
}
NOTIFICATION_SCHEMA: Schema = {
    "id": None,
    "applicationId": None,
    "timestamp": None,
    "customerId": None,
    "kind": None,
    "provisions": {"kind": None, "editionId": None, "seatCount": None},
    "expiries": {"kind": None, "editionId": None},
    "reassignments": {"kind": None, "userId": None, "type": None, "editionId": None},
    "deletes": {"kind": None, "editionId": None},
}
LIST_SCHEMA: Schema = {"kind": None, "notifications": NOTIFICATION_SCHEMA, "nextPageToken": None}
MAX_SELECTOR = 2000  # characters; a longer selector is refused as it stands


class InvalidSelection(ValueError):
    """The selector (or the part of it named) selects nothing the method answers."""


def _merge(into: Tree, more: Tree) -> None:
    for name, inner in more.items():
        if inner is None:
            into[name] = None
        elif into.get(name, {}) is not None:
            _merge(into.setdefault(name, {}), inner)


def _insert(tree: Tree, names: list[str], inner: Tree | None) -> None:
    head, rest = names[0], names[1:]
    if rest:
        if tree.get(head, {}) is not None:
            _insert(tree.setdefault(head, {}), rest, inner)
    elif inner is None:
        tree[head] = None
    elif tree.get(head, {}) is not None:
        _merge(tree.setdefault(head, {}), inner)


def parse(selector: str) -> Tree:
    """The selection a `fields` value asks for; InvalidSelection when it does not parse."""
    if len(selector) > MAX_SELECTOR:
        raise InvalidSelection(selector[:100])
    pos = 0

    def items(nested: bool) -> Tree:
        nonlocal pos
        tree: Tree = {}
        while True:
            start = pos
            while pos < len(selector) and selector[pos] not in ",()":
                pos += 1
            path = selector[start:pos].strip()
            names = path.split("/")
            if not path or any(not name.strip() for name in names):
                raise InvalidSelection(path or selector[:100])
            inner = None
            if pos < len(selector) and selector[pos] == "(":
                pos += 1
                inner = items(nested=True)
                if pos >= len(selector) or selector[pos] != ")":
                    raise InvalidSelection(path)
                pos += 1
            _insert(tree, [name.strip() for name in names], inner)
            if pos < len(selector) and selector[pos] == ",":
                pos += 1
                continue
            if nested or pos == len(selector):
                return tree
            raise InvalidSelection(selector[:100])

    return items(nested=False)


def check(tree: Tree, schema: Schema, where: str = "") -> str | None:
    """The first selected name the schema does not have (with its path), or None."""
    for name, inner in tree.items():
        if name == "*":
            continue
        if name not in schema:
            return where + name
        if inner is not None:
            if schema[name] is None:
                return f"{where}{name}/{next(iter(inner))}"
            bad = check(inner, schema[name], f"{where}{name}/")
            if bad is not None:
                return bad
    return None


def select(value: Any, tree: Tree | None) -> Any:
    """`value` with only the selected fields (a list: inside each item); a selected list
    left empty is left out, as Google leaves out every empty repeated field."""
    if tree is None or "*" in tree:
        return value
    if isinstance(value, list):
        return [select(item, tree) for item in value]
    if not isinstance(value, dict):
        return value
    chosen = {name: select(inner, tree[name]) for name, inner in value.items() if name in tree}
    return {name: inner for name, inner in chosen.items() if inner != []}
