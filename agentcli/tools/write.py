"""Write: create a file, or replace one the model has Read (atomically)."""

from __future__ import annotations

import stat
from pathlib import Path

from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.tools.base import BuiltinTool, ToolError
from agentcli.tools.diff import diff_texts
from agentcli.tools.guard import remember, require_fresh
from agentcli.tools.paths import shown
from agentcli.tools.textfile import atomic_write, decode, encode, fingerprint


class WriteTool(BuiltinTool):
    name = "Write"
    path_fields = ("file_path",)
    description = (
        "Write a whole file: creates it (and missing parent folders) or replaces it. Replacing an "
        "existing file is refused unless you Read it in this session and it has not changed since. "
        "To change part of a file, use Edit instead. An existing file keeps its line endings and "
        "encoding. Returns lines and bytes written."
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "File to write, e.g. `src/new_module.py`"},
            "content": {"type": "string", "description": "The complete new content"},
        },
        "required": ["file_path", "content"],
        "additionalProperties": False,
    }

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(tool_input["file_path"])
        target, name, old_text, content, encoding = self._plan(tool_input, ctx, guard=True)
        data = encode(content, encoding, name)
        if old_text == content:
            return ToolResult(f"{name} already has exactly this content; nothing written.", summary="No changes")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, data)
        except OSError as error:
            raise ToolError(f"Could not write {name}: {error.strerror or error}.") from None
        remember(ctx, path, fingerprint(target, data))
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        change = diff_texts(old_text or "", content, name, created=old_text is None)
        size = f"{_plural(lines, 'line')}, {_plural(len(data), 'byte')}"
        if old_text is None:
            return ToolResult(f"Created {name} ({size}).", summary=f"Created {name} ({size})", diff=change.diff)
        summary = change.describe("Overwrote", name)
        return ToolResult(f"{summary} ({size}).", summary=summary, diff=change.diff)

    def preview(self, tool_input: JSON, ctx: ToolContext) -> str | None:
        """The unified diff this call would make (for a permission prompt); None if it would fail.

        Writes nothing and skips the read-before-write guard (the call itself still checks it).
        """
        try:
            _, name, old_text, content, _ = self._plan(tool_input, ctx, guard=False)
        except (ToolError, OSError):
            return None
        return diff_texts(old_text or "", content, name, created=old_text is None).diff

    def _plan(self, tool_input: JSON, ctx: ToolContext, *, guard: bool) -> tuple[Path, str, str | None, str, str]:
        """(target, display name, current text or None, text to write, encoding)."""
        path = ctx.resolve(tool_input["file_path"])
        content: str = tool_input["content"]
        name = shown(path, ctx.cwd)
        target = path.resolve()
        if not target.exists():
            return target, name, None, content, "utf-8"
        if not stat.S_ISREG(target.stat().st_mode):
            raise ToolError(f"{name} exists and is not a regular file (a folder or device); pick another path.")
        if guard:
            require_fresh(ctx, path, "Write")
        old = decode(target.read_bytes())
        if old.newline == "\r\n" and "\r\n" not in content:
            content = content.replace("\n", "\r\n")
        return target, name, old.text, content, old.encoding


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"
