"""`init`: start a project a writer can commit at once, in a new or an existing folder
(`toolkit.scaffold.project.init_project`: what it adopts and what it writes)."""

from __future__ import annotations

from toolkit.scaffold.adopt import Adopted, adopt
from toolkit.scaffold.files import (
    MAKEFILE,
    WORKFLOW,
    ActionPin,
    action_pin,
    gitignore_text,
    ignored,
    installed_action,
    makefile_text,
    welcome_text,
    workflow_text,
)
from toolkit.scaffold.project import InitFile, InitResult, init_project
from toolkit.scaffold.team import WriterFolder, find_writers

__all__ = [
    "MAKEFILE",
    "WORKFLOW",
    "ActionPin",
    "Adopted",
    "WriterFolder",
    "InitFile",
    "InitResult",
    "action_pin",
    "adopt",
    "find_writers",
    "gitignore_text",
    "ignored",
    "init_project",
    "installed_action",
    "makefile_text",
    "welcome_text",
    "workflow_text",
]
