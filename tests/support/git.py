"""`git` as the tests run it: in a folder, as a writer with a name and an address, none of
the machine's own configuration read, optionally at a given date."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(folder: Path, *args: str, when: str | None = None) -> str:
    """`git ARGS` in `folder`; its output. `when`: the date of the commit it makes (ISO)."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if when:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
    done = subprocess.run(
        ["git", *args], cwd=folder, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout
