"""Glob: files whose paths match a pattern, newest first."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.access import Access
from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.path_text import ESCAPED_NOTE, is_escaped
from agentcli.tools.base import BuiltinTool, ToolError, with_notices
from agentcli.tools.globs import AnchoredGlob, literal_prefix
from agentcli.tools.ignore import IgnoreRules, walk_files
from agentcli.tools.paths import not_found, shown_str

MAX_RESULTS = 100


class GlobTool(BuiltinTool):
    name = "Glob"
    concurrency = "shared"
    description = (
        "Find files by path pattern, e.g. `**/*.py`, `src/**/*.{ts,tsx}`, `*.md` (top level only: "
        "`*` stops at /, `**` spans folders). Skips .git and files ignored by .gitignore. Returns "
        f"paths newest first, at most {MAX_RESULTS} (saying how many more matched). Use Grep to "
        "search file contents."
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob relative to path"},
            "path": {"type": "string", "description": "Folder to search (default: project)"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        """It reads the folder its pattern's fixed start names (`/etc` for `/etc/**/*.conf`)."""
        base = ctx.resolve(str(tool_input.get("path") or "."))
        pattern = str(tool_input.get("pattern", ""))
        if os.path.isabs(pattern):
            base, pattern = Path(pattern[:1]), pattern[1:]
        fixed, _ = literal_prefix(pattern.removeprefix("./"))
        return Access(reads=(Path(os.path.normpath(base / fixed)) if fixed else base,))

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        base = ctx.resolve(str(tool_input.get("path") or "."))
        pattern: str = tool_input["pattern"].strip()
        if not pattern:
            raise ToolError("pattern is empty; pass a glob such as `**/*.py`.")
        if os.path.isabs(pattern):
            base, pattern = Path(pattern[:1]), pattern[1:]
        fixed, pattern = literal_prefix(pattern.removeprefix("./"))
        root = base / fixed if fixed else base
        if not root.exists():
            raise not_found(root, ctx, "Folder")
        if not root.is_dir():
            raise ToolError(f"{root} is a file, not a folder; pass a folder as path (or use Read).")
        root = root.resolve()
        matcher = AnchoredGlob(pattern)
        found: list[tuple[int, str]] = []
        cwd = ctx.cwd.resolve()
        rules = IgnoreRules()
        for path, rel in walk_files(str(root), rules, max_depth=matcher.max_depth, cancelled=ctx.cancel.is_set):
            if matcher.matches(rel):
                found.append((_mtime(path), shown_str(path, str(cwd))))
        if ctx.cancel.is_set():
            raise ToolError("Search interrupted by the user.")
        notices = rules.notices(str(cwd))
        if not found:
            return with_notices(
                ToolResult(f"No files match {tool_input['pattern']!r}.", summary="No files found"), notices
            )
        found.sort(key=lambda item: (-item[0], item[1]))
        lines = [name for _, name in found[:MAX_RESULTS]]
        if any(is_escaped(name) for name in lines):
            lines.append(f"\n{ESCAPED_NOTE}")
        if len(found) > MAX_RESULTS:
            more = len(found) - MAX_RESULTS
            lines.append(f"\n[{more:,} more files matched; narrow the pattern or path to see them.]")
        count, listing = len(found), "\n".join(lines)
        return with_notices(
            ToolResult(listing, summary=f"Found {count} file{'' if count == 1 else 's'}", output=listing), notices
        )


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
