"""Grep: regex search across the project (basic form; ripgrep and filters come later)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.tools.base import BuiltinTool, ToolError

SKIP_DIRS = {".git", "node_modules", ".venv", "__pycache__"}


class GrepTool(BuiltinTool):
    name = "Grep"
    read_only = True
    path_fields = ("path",)
    description = (
        "Search file contents with a regular expression (Python/ripgrep syntax). "
        "output_mode: files_with_matches (default), content (matching lines as path:line:text) "
        "or count. Use this instead of grep/rg in Bash."
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regex, e.g. `def \\w+_test`"},
            "path": {"type": "string", "description": "File or folder (default: project)"},
            "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"]},
            "-i": {"type": "boolean", "description": "Case-insensitive"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        try:
            regex = re.compile(tool_input["pattern"], re.IGNORECASE if tool_input.get("-i") else 0)
        except re.error as error:
            raise ToolError(f"Invalid regex {tool_input['pattern']!r}: {error}") from None
        root = ctx.resolve(tool_input.get("path") or ".")
        if not root.exists():
            raise ToolError(f"Path not found: {root}")
        mode = tool_input.get("output_mode", "files_with_matches")
        lines: list[str] = []
        files = 0
        for path in _walk(root):
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            hits = [(n, line) for n, line in enumerate(text.splitlines(), 1) if regex.search(line)]
            if not hits:
                continue
            files += 1
            shown = os.path.relpath(path, ctx.cwd)
            if mode == "content":
                lines.extend(f"{shown}:{n}:{line}" for n, line in hits)
            elif mode == "count":
                lines.append(f"{shown}:{len(hits)}")
            else:
                lines.append(shown)
        if not lines:
            return ToolResult("No matches found.", summary="No matches")
        return ToolResult("\n".join(lines), summary=f"Found matches in {files} files")


def _walk(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found: list[Path] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        found.extend(Path(folder) / name for name in sorted(names))
    return found
