"""Read: a file's lines, numbered like `cat -n`."""

from __future__ import annotations

import hashlib

from agentcli.contracts import JSON, FileRecord, ToolContext, ToolResult
from agentcli.tools.base import BuiltinTool, ToolError

DEFAULT_LIMIT = 2000
MAX_LINE = 2000
MAX_BYTES = 10 * 1024 * 1024


class ReadTool(BuiltinTool):
    name = "Read"
    read_only = True
    path_fields = ("file_path",)
    description = (
        "Read a text file. Returns lines numbered like `cat -n` (number, tab, text), "
        f"the first {DEFAULT_LIMIT} lines unless you pass offset (1-based line) and limit. "
        "Use this instead of cat/head/tail in Bash. Paths may be absolute or relative to the "
        "project. Fails with a message for directories (use Glob or Bash ls), binary files "
        "and missing files."
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Path of the file to read"},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)"},
            "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read"},
        },
        "required": ["file_path"],
        "additionalProperties": False,
    }

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(tool_input["file_path"])
        if path.is_dir():
            raise ToolError(f"{path} is a directory, not a file. Use Glob or `ls` in Bash to list it.")
        if not path.exists():
            raise ToolError(f"File not found: {path}")
        stat = path.stat()
        if stat.st_size > MAX_BYTES:
            raise ToolError(
                f"{path} is {stat.st_size:,} bytes, over the {MAX_BYTES:,}-byte cap. "
                "Use Grep to find the part you need, or Bash (e.g. `sed -n 100,200p`)."
            )
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            raise ToolError(f"{path} is a binary file; Read shows text only.")
        ctx.read_files[path.resolve()] = FileRecord(stat.st_mtime_ns, stat.st_size, hashlib.sha256(data).hexdigest())
        lines = data.decode("utf-8", errors="replace").splitlines()
        if not lines:
            return ToolResult(f"{path} is empty.", summary="Read 0 lines (empty file)")
        offset = tool_input.get("offset", 1)
        limit = tool_input.get("limit", DEFAULT_LIMIT)
        chosen = lines[offset - 1 : offset - 1 + limit]
        numbered = "\n".join(f"{offset + i:6}\t{_clip(line)}" for i, line in enumerate(chosen))
        if len(chosen) < len(lines):
            last = offset + len(chosen) - 1
            numbered += f"\n\n[Showing lines {offset}-{last} of {len(lines)}; use offset/limit for more.]"
        return ToolResult(numbered, summary=f"Read {len(chosen)} lines")


def _clip(line: str) -> str:
    if len(line) <= MAX_LINE:
        return line
    return line[:MAX_LINE] + f" [... line cut: {len(line) - MAX_LINE:,} more characters]"
