"""Read: a file's lines, numbered like `cat -n`."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from agentcli.contracts import JSON, FileRecord, ToolContext, ToolResult
from agentcli.tools.base import BuiltinTool, ToolError
from agentcli.tools.guard import remember
from agentcli.tools.paths import not_found, shown
from agentcli.tools.textfile import SNIFF_BYTES, bom_encoding, decode, looks_binary, split_lines

DEFAULT_LIMIT = 2000
MAX_LINE = 2000
MAX_WHOLE_FILE = 256 * 1024
"""Bigger files must be read in parts (offset/limit)."""
MAX_OUTPUT = 25_000
"""Characters of numbered text per call; stays under the tool-result cap so nothing is cut blindly."""


class ReadTool(BuiltinTool):
    name = "Read"
    read_only = True
    path_fields = ("file_path",)
    description = (
        "Read a text file. Returns lines numbered like `cat -n` (number, tab, text), by default the "
        f"first {DEFAULT_LIMIT}; for more pass offset (1-based line) and limit. Lines over {MAX_LINE} "
        "characters are cut. Use this instead of cat/head/tail in Bash, and Read a file before you "
        "Edit or overwrite it. Paths are absolute or relative to the project. Errors explain "
        "directories, binary files, files too big to read at once, and missing files (with similar paths). "
        "When you need several files, Read them all in one turn. In a long file, find the part you need "
        "with Grep (output_mode content, -n) and Read just those lines with offset and limit."
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "File to read, e.g. `src/app.py`"},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)"},
            "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to read"},
        },
        "required": ["file_path"],
        "additionalProperties": False,
    }

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(tool_input["file_path"])
        name = shown(path, ctx.cwd)
        info = _stat(path, ctx)
        offset = tool_input.get("offset")
        limit = tool_input.get("limit")
        if info.st_size > MAX_WHOLE_FILE and offset is None and limit is None:
            raise ToolError(
                f"{name} is {info.st_size:,} bytes, too big to read at once (limit {MAX_WHOLE_FILE:,}). "
                "Read it in parts with offset and limit (e.g. offset 1, limit 500), or Grep for what you need."
            )
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
        if looks_binary(head):
            raise ToolError(
                f"{name} is a binary file ({info.st_size:,} bytes); Read shows text only. "
                f"Inspect it with Bash instead, e.g. `file {name}` or `xxd {name} | head`."
            )
        first = offset or 1
        count = limit or DEFAULT_LIMIT
        if info.st_size <= MAX_WHOLE_FILE or bom_encoding(head) is not None:
            data = path.read_bytes()
            remember(ctx, path, FileRecord(info.st_mtime_ns, info.st_size, hashlib.sha256(data).hexdigest()))
            lines = split_lines(decode(data).text)
            total = len(lines)
            chosen = lines[first - 1 : first - 1 + count]
        else:
            chosen, total, record = _stream(path, first, count)
            remember(ctx, path, FileRecord(info.st_mtime_ns, info.st_size, record))
        if total == 0:
            return ToolResult(f"{name} is empty (0 lines).", summary="Read 0 lines (empty file)")
        if first > total:
            raise ToolError(f"{name} has {total:,} lines; offset {first:,} is past the end.")
        return _numbered(chosen, first, total)


def _stat(path: Path, ctx: ToolContext) -> os.stat_result:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise not_found(path, ctx) from None
    except NotADirectoryError:
        raise not_found(path, ctx) from None
    except PermissionError:
        raise ToolError(f"Permission denied reading {shown(path, ctx.cwd)}.") from None
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(
            f"{shown(path, ctx.cwd)} is a directory, not a file. List it with Glob "
            "(e.g. pattern `*` with this path) or `ls` in Bash."
        )
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{shown(path, ctx.cwd)} is not a regular file (a device, socket or pipe); Read skips it.")
    return info


def _numbered(chosen: list[str], first: int, total: int) -> ToolResult:
    out: list[str] = []
    size = 0
    for index, line in enumerate(chosen):
        entry = f"{first + index:6}\t{_clip(line)}"
        if out and size + len(entry) + 1 > MAX_OUTPUT:
            break
        out.append(entry)
        size += len(entry) + 1
    last = first + len(out) - 1
    text = "\n".join(out)
    if len(out) < len(chosen):
        text += (
            f"\n\n[Showing lines {first}-{last} of {total}: output limit of {MAX_OUTPUT:,} characters reached. "
            f"Continue with offset {last + 1}.]"
        )
    elif first > 1 or last < total:
        text += f"\n\n[Showing lines {first}-{last} of {total}. Use offset/limit to read more.]"
    return ToolResult(text, summary=f"Read {len(out)} line{'' if len(out) == 1 else 's'}")


def _clip(line: str) -> str:
    if len(line) <= MAX_LINE:
        return line
    return line[:MAX_LINE] + f" [... line cut: {len(line) - MAX_LINE:,} more characters]"


def _stream(path: Path, first: int, count: int) -> tuple[list[str], int, str]:
    """Lines [first, first+count) of a big UTF-8/Latin-1 file, its line count and its hash."""
    digest = hashlib.sha256()
    chosen: list[str] = []
    total = 0
    with path.open("rb") as handle:
        for raw in handle:
            digest.update(raw)
            total += 1
            if first <= total < first + count:
                chosen.append(split_lines(decode(raw).text)[0] if raw.strip(b"\r\n") else "")
    return chosen, total, digest.hexdigest()
