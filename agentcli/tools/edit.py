"""Edit: replace an exact string in a file the model has Read.

Like Write, it reads, checks and replaces the file through one folder handle of the workspace,
reached from the path the gate checked (`Workspace.open_folder`), and its preview reads through it too.
"""

from __future__ import annotations

import stat
from pathlib import Path

from agentcli.access import Access
from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.regular_file import NotRegularFile, kind_of
from agentcli.tools.base import BuiltinTool, ToolError
from agentcli.tools.closest import explain_missing
from agentcli.tools.diff import diff_texts
from agentcli.tools.guard import fingerprint, remember, require_fresh
from agentcli.tools.paths import not_found, shown
from agentcli.tools.textfile import SNIFF_BYTES, TextFile, decode, encode, looks_binary
from agentcli.tools.write import WriteTool
from agentcli.workspace.contract import Folder, Snapshot

MAX_DIFF_IN_RESULT = 4_000
"""Characters of diff the model gets back (the UI gets all of it)."""


class EditTool(BuiltinTool):
    name = "Edit"
    description = (
        "Replace an exact string in a file (no regex). Read the file first in this session; the edit is "
        "refused if the file changed since. old_string must match the file exactly, indentation "
        "included (copy it from Read output without the line-number prefix) and must be unique: add "
        "surrounding lines to make it so, or set replace_all to change every occurrence. Line endings "
        "and encoding are kept. Returns a diff; on failure, the closest matching region. For several "
        "changes in one file, make one Edit per change, each with just enough context to be unique; "
        "to rewrite most of a file, Read it and use Write. Use replace_all to rename a variable."
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "File to change"},
            "old_string": {"type": "string", "description": "Exact text to replace"},
            "new_string": {"type": "string", "description": "Replacement (must differ)"},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)"},
        },
        "required": ["file_path", "old_string", "new_string"],
        "additionalProperties": False,
    }

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return Access(writes=(ctx.resolve(str(tool_input["file_path"])),))

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(tool_input["file_path"])
        name = shown(path, ctx.cwd)
        target = ctx.real_path(tool_input["file_path"])
        _require_change(tool_input)
        try:
            with ctx.workspace.open_folder(target.parent, "written") as folder:
                plan = self._plan(folder, target.name, name, tool_input, ctx, guard=True)
                if plan is not None:
                    return self._replace(folder, target, name, plan, ctx)
        except (FileNotFoundError, NotADirectoryError):  # a folder on the way is missing (or is a file)
            pass
        if tool_input["old_string"] != "":
            raise not_found(path, ctx)
        return WriteTool().call({"file_path": str(path), "content": tool_input["new_string"]}, ctx)

    @staticmethod
    def _replace(
        folder: Folder, target: Path, name: str, plan: tuple[Snapshot, TextFile, str], ctx: ToolContext
    ) -> ToolResult:
        current, file, updated = plan
        encoded = encode(updated, file.encoding, name)
        info = folder.replace(target.name, encoded, stat.S_IMODE(current.info.st_mode))
        remember(ctx, target, fingerprint(info, encoded))
        change = diff_texts(file.text, updated, name)
        summary = change.describe("Updated", name)
        shown_diff = change.diff
        if len(shown_diff) > MAX_DIFF_IN_RESULT:
            shown_diff = shown_diff[:MAX_DIFF_IN_RESULT] + "\n[... rest of the diff omitted]\n"
        return ToolResult(f"{summary}\n\n{shown_diff}".rstrip("\n"), summary=summary, diff=change.diff)

    def preview(self, tool_input: JSON, ctx: ToolContext) -> str | None:
        """The unified diff this call would make (for a permission prompt); None if it would fail.

        Writes nothing and skips the read-before-edit guard (the call itself still checks it).
        """
        name = shown(ctx.resolve(tool_input["file_path"]), ctx.cwd)
        try:
            _require_change(tool_input)
            target = ctx.real_path(tool_input["file_path"])
            with ctx.workspace.open_folder(target.parent, "read") as folder:
                plan = self._plan(folder, target.name, name, tool_input, ctx, guard=False)
        except (FileNotFoundError, NotADirectoryError):
            plan = None
        except (ToolError, OSError):
            return None
        if plan is None:
            if tool_input["old_string"] != "":
                return None
            return WriteTool().preview({"file_path": tool_input["file_path"], "content": tool_input["new_string"]}, ctx)
        _, file, updated = plan
        return diff_texts(file.text, updated, name).diff

    def _plan(
        self, folder: Folder, filename: str, name: str, tool_input: JSON, ctx: ToolContext, *, guard: bool
    ) -> tuple[Snapshot, TextFile, str] | None:
        """(the file as read, its text, its new text); None when there is no such file."""
        old: str = tool_input["old_string"]
        new: str = tool_input["new_string"]
        try:
            current = folder.read(filename)
        except NotRegularFile as error:
            raise ToolError(f"{name} is {kind_of(error.mode)}, not a regular file; Edit changes files.") from None
        if current is None:
            return None
        if guard:
            require_fresh(ctx, folder.path / filename, name, "Edit", current)
        data = current.data
        if looks_binary(data[:SNIFF_BYTES]):
            raise ToolError(f"{name} is a binary file; Edit changes text files only.")
        file = decode(data)
        text = file.text
        if old == "":
            if text.strip():
                raise ToolError(
                    f"old_string is empty but {name} is not. Put the text to replace in old_string, "
                    "or use Write to replace the whole file."
                )
            return current, file, _with_newlines(new, file.newline)
        needle, replacement = _locate(text, old, new, file.newline)
        count = text.count(needle)
        if count == 0:
            raise ToolError(explain_missing(text, old, name), failure="not_found")
        if count > 1 and not tool_input.get("replace_all", False):
            lines = _occurrence_lines(text, needle)
            raise ToolError(
                f"old_string occurs {count} times in {name} (lines {lines}). Include more surrounding "
                "lines to pick one occurrence, or set replace_all to true to change all of them.",
                failure="not_unique",
            )
        return current, file, text.replace(needle, replacement)


def _require_change(tool_input: JSON) -> None:
    if tool_input["old_string"] == tool_input["new_string"]:
        raise ToolError("old_string and new_string are identical, so there is nothing to change.")


def _locate(text: str, old: str, new: str, newline: str) -> tuple[str, str]:
    """The text to search for and its replacement, adapting `\\n` to a CRLF file."""
    if old in text:
        if "\n" in old and "\r\n" not in old:
            return old, new  # matched an LF region: keep LF
        return old, _with_newlines(new, newline)
    if "\r\n" in text and "\n" in old:
        crlf = _with_newlines(old, "\r\n")
        if crlf in text:
            return crlf, _with_newlines(new, "\r\n")
    return old, new


def _with_newlines(text: str, newline: str) -> str:
    if newline == "\n":
        return text
    return text.replace("\r\n", "\n").replace("\n", newline)


def _occurrence_lines(text: str, needle: str, limit: int = 10) -> str:
    lines: list[int] = []
    start = text.find(needle)
    while start != -1 and len(lines) < limit + 1:
        lines.append(text.count("\n", 0, start) + 1)
        start = text.find(needle, start + len(needle))
    shown_lines = ", ".join(str(n) for n in lines[:limit])
    return shown_lines + (", …" if len(lines) > limit else "")
