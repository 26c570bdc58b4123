"""One result document per command, the same for every reader: the CLI's `--json` and
the MCP server's structured results (the tools' `outputSchema` and `structuredContent`).
"The CLI and the assistant read the same thing" is a property of `to_json`.

`to_json(result)` reads a command's result itself: its dataclass through a pydantic
`TypeAdapter` (records of the clients under their aliases, paths as text, a field's format
as a `PlainSerializer` on the field): `ExportResult`, `LicenseStatus`, `ConfigKey`,
`LogQuery`, `PostDiff` (`toolkit diff`), `RetireResult`, `toolkit.mcp.service.McpClient`.
Where the document counts or reshapes what the command returned, it is a `Document`,
built with `of`, in the module of its commands: `content` (list, read, comments, check,
new), `sync` (plan, publish, pull), `site` (build), `mirror`, `license` (notifications).
A domain record inside a document is read as it is (posts are `PostSummary`, pulled posts
`PullOutcome`). The run log keeps events, not documents: `records.py` writes them from
the same results, apart from this package because every run records and pydantic costs a
command that prints no document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, TypeAdapter

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.content import Problem


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def to_json(result: object) -> Any:
    """The JSON document of a result (or of a list of them), the one every reader gets:
    a `Document` of this package, or a dataclass result read field by field through pydantic (its
    records under their aliases, paths as text, a field's `PlainSerializer` where it has
    one)."""
    if isinstance(result, list):
        return [to_json(item) for item in result]
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json", by_alias=True)
    kind = type(result)
    adapter = _ADAPTERS.get(kind) or _ADAPTERS.setdefault(kind, TypeAdapter(kind))
    return adapter.dump_python(result, mode="json", by_alias=True)


class Document(BaseModel):
    """A command's result document, written by `to_json`."""


class ProblemJson(Document):
    path: str
    line: int
    severity: str = Field(description="error, warning or note")
    message: str
    text: str = Field(description="the problem as the CLI prints it: path:line: message")

    @classmethod
    def of(cls, problem: Problem) -> ProblemJson:
        return cls(
            path=problem.path,
            line=problem.line,
            severity=problem.severity.value,
            message=problem.message,
            text=str(problem),
        )
