"""Shared plumbing for built-in tools."""

from __future__ import annotations

from dataclasses import replace

from agentcli.access import Access, unknown
from agentcli.contracts import JSON, Concurrency, ToolContext, ToolResult
from agentcli.workspace.contract import WorkspaceError


def prose(text: str) -> str:
    """A long description written wrapped in source: a line that starts with spaces continues the one before."""
    lines: list[str] = []
    for line in text.split("\n"):
        if line.startswith(" ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return "\n".join(lines)


def with_notices(result: ToolResult, notices: list[str]) -> ToolResult:
    """`result` with `notices` after its content (for the model) and its summary (for the user)."""
    if not notices:
        return result
    lines = "\n".join(f"[{notice}]" for notice in notices)
    summary = result.summary if result.summary is not None else result.content.split("\n")[0]
    return replace(result, content=f"{result.content}\n\n{lines}", summary=f"{summary}\n" + "\n".join(notices))


class ToolError(Exception):
    """Raised inside a tool's `run` for a failure the model can act on; becomes is_error.
    `failure` names its kind when statistics should tell it apart (`ToolResult.failure`)."""

    def __init__(self, message: str, failure: str | None = None) -> None:
        super().__init__(message)
        self.failure = failure


class BuiltinTool:
    """Base for built-in tools: subclasses set the class attributes and implement `call` and
    `access` (until a subclass declares its access, the gate asks about every call of it)."""

    name: str = ""
    description: str = ""
    input_schema: JSON = {}
    concurrency: Concurrency = "exclusive"

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        try:
            return self.call(tool_input, ctx)
        except (ToolError, WorkspaceError) as error:
            failure = error.failure if isinstance(error, ToolError) else None
            return ToolResult(str(error), is_error=True, summary=str(error).splitlines()[0], failure=failure)
        except OSError as error:  # e.g. permission denied, disk full: say what and where, no traceback
            where = f": {error.filename}" if error.filename else ""
            message = f"{self.name} failed: {error.strerror or error}{where}."
            return ToolResult(message, is_error=True, summary=message)

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return unknown(f"the {self.name} tool does not declare what its calls do")
