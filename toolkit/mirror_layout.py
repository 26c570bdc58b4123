"""Where `toolkit mirror` keeps what it mirrors, under the content folder: the one place
that says so, for the mirror that writes the files, the site that reads them and the
commands that show them.

- `_mirror/comments/<slug>.json` (or `<post stem>.json`): a post's comment threads;
- `_mirror/podcasts/<podcast>/<episode id>.json`: a podcast episode's threads;
- `_mirror/readinglist.json`: the reading list;
- in a team's repository (`[writers]`), each writer's comments and reading list the
  same way under `_mirror/<writer>/` (the folder's name made safe).
"""

from __future__ import annotations

from pathlib import Path

MIRROR = "_mirror"  # the folder, directly in the content folder
COMMENTS = "comments"  # the comment threads of posts, one file each
PODCASTS = "podcasts"  # the comment threads of podcast episodes, one folder per podcast
READING_LIST = "readinglist.json"


def mirror_folder(content_dir: Path) -> Path:
    """`<content>/_mirror`."""
    return content_dir / MIRROR
