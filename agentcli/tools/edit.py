"""Edit: replace an exact string in a file the model has Read."""

from __future__ import annotations

import stat
from pathlib import Path

from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.tools.base import BuiltinTool, ToolError
from agentcli.tools.closest import explain_missing
from agentcli.tools.diff import diff_texts
from agentcli.tools.guard import remember, require_fresh
from agentcli.tools.paths import not_found, shown
from agentcli.tools.textfile import SNIFF_BYTES, TextFile, atomic_write, decode, encode, fingerprint, looks_binary
from agentcli.tools.write import WriteTool

MAX_DIFF_IN_RESULT = 4_000
"""Characters of diff the model gets back (the UI gets all of it)."""


class EditTool(BuiltinTool):
    name = "Edit"
    path_fields = ("file_path",)
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

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(tool_input["file_path"])
        plan = self._plan(tool_input, ctx, guard=True)
        if plan is None:
            return WriteTool().call({"file_path": str(path), "content": tool_input["new_string"]}, ctx)
        target, name, file, updated = plan
        encoded = encode(updated, file.encoding, name)
        atomic_write(target, encoded)
        remember(ctx, path, fingerprint(target, encoded))
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
        try:
            plan = self._plan(tool_input, ctx, guard=False)
        except (ToolError, OSError):
            return None
        if plan is None:
            return WriteTool().preview({"file_path": tool_input["file_path"], "content": tool_input["new_string"]}, ctx)
        _, name, file, updated = plan
        return diff_texts(file.text, updated, name).diff

    def _plan(self, tool_input: JSON, ctx: ToolContext, *, guard: bool) -> tuple[Path, str, TextFile, str] | None:
        """(target, display name, the file as read, its new text); None when the call creates the file."""
        path = ctx.resolve(tool_input["file_path"])
        old: str = tool_input["old_string"]
        new: str = tool_input["new_string"]
        name = shown(path, ctx.cwd)
        if old == new:
            raise ToolError("old_string and new_string are identical, so there is nothing to change.")
        target = path.resolve()
        if not target.exists():
            if old == "":
                return None
            raise not_found(path, ctx)
        if not stat.S_ISREG(target.stat().st_mode):
            raise ToolError(f"{name} is not a regular file (it is a folder or device); Edit changes files.")
        if guard:
            require_fresh(ctx, path, "Edit")
        data = target.read_bytes()
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
            return target, name, file, _with_newlines(new, file.newline)
        needle, replacement = _locate(text, old, new, file.newline)
        count = text.count(needle)
        if count == 0:
            raise ToolError(explain_missing(text, old, name))
        if count > 1 and not tool_input.get("replace_all", False):
            lines = _occurrence_lines(text, needle)
            raise ToolError(
                f"old_string occurs {count} times in {name} (lines {lines}). Include more surrounding "
                "lines to pick one occurrence, or set replace_all to true to change all of them."
            )
        return target, name, file, text.replace(needle, replacement)


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
