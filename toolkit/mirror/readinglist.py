"""Mirror the account's reading list, every page of it, into one JSON file."""

from __future__ import annotations

from pathlib import Path

from toolkit.clients.forem import ForemClient
from toolkit.fsutil import stable_json, write_if_changed


def mirror_readinglist(client: ForemClient, path: Path) -> tuple[int, bool]:
    """Write the whole list (in the API's order: newest reading first) to `path`.

    Returns how many items there are and whether the file changed.
    """
    items = list(client.iter_readinglist_json())
    return len(items), write_if_changed(path, stable_json(items))
