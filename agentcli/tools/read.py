"""Read: a file's lines, numbered like `cat -n`.

The file is opened through the workspace from the path the gate checked, without following
symlinks (`Workspace.read_file`). A file too big to read whole is read in bounded memory up to
the last line asked for (`excerpt`); then its length is unknown, and the output says so.
"""

from __future__ import annotations

import contextlib
import stat
from pathlib import Path

from agentcli.access import Access
from agentcli.contracts import JSON, FileRecord, ToolContext, ToolResult
from agentcli.regular_file import NotRegularFile, kind_of
from agentcli.tools.base import BuiltinTool, ToolError
from agentcli.tools.excerpt import read_excerpt
from agentcli.tools.guard import fingerprint, remember
from agentcli.tools.paths import not_found, shown
from agentcli.tools.textfile import SNIFF_BYTES, bom_encoding, decode, looks_binary, split_lines
from agentcli.workspace.contract import OpenFile

DEFAULT_LIMIT = 2000
MAX_LINE = 2000
MAX_WHOLE_FILE = 256 * 1024
"""Bigger files must be read in parts (offset/limit)."""
MAX_OUTPUT = 25_000
"""Characters of numbered text per call; stays under the tool-result cap so nothing is cut blindly."""


class ReadTool(BuiltinTool):
    name = "Read"
    concurrency = "shared"
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

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return Access(reads=(ctx.resolve(str(tool_input["file_path"])),))

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(tool_input["file_path"])
        real = ctx.real_path(tool_input["file_path"])
        name = shown(path, ctx.cwd)
        with contextlib.ExitStack() as stack:
            try:
                file = stack.enter_context(ctx.workspace.read_file(real))
            except (FileNotFoundError, NotADirectoryError):
                raise not_found(path, ctx) from None
            except PermissionError:
                raise ToolError(f"Permission denied reading {name}.") from None
            except NotRegularFile as error:
                raise _not_a_file(error, name) from None
            return self._read(file, real, name, tool_input, ctx)

    def _read(self, file: OpenFile, real: Path, name: str, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        info = file.info
        offset = tool_input.get("offset")
        limit = tool_input.get("limit")
        if info.st_size > MAX_WHOLE_FILE and offset is None and limit is None:
            raise ToolError(
                f"{name} is {info.st_size:,} bytes, too big to read at once (limit {MAX_WHOLE_FILE:,}). "
                "Read it in parts with offset and limit (e.g. offset 1, limit 500), or Grep for what you need."
            )
        head = file.stream.read(SNIFF_BYTES)
        file.stream.seek(0)
        if looks_binary(head):
            raise ToolError(
                f"{name} is a binary file ({info.st_size:,} bytes); Read shows text only. "
                f"Inspect it with Bash instead, e.g. `file {name}` or `xxd {name} | head`."
            )
        first = offset or 1
        count = limit or DEFAULT_LIMIT
        total: int | None
        if info.st_size <= MAX_WHOLE_FILE:
            data = file.stream.read()
            remember(ctx, real, fingerprint(info, data))
            lines = split_lines(decode(data).text)
            total = len(lines)
            chosen = [(line[:MAX_LINE], max(0, len(line) - MAX_LINE)) for line in lines[first - 1 : first - 1 + count]]
        else:  # in bounded memory: stops once the lines asked for are read
            excerpt = read_excerpt(
                file.stream, first, count, encoding=bom_encoding(head), keep=MAX_LINE, budget=MAX_OUTPUT
            )
            remember(ctx, real, FileRecord(info.st_mtime_ns, info.st_size, excerpt.sha256))
            chosen, total = excerpt.lines, excerpt.total
        if total == 0:
            return ToolResult(f"{name} is empty (0 lines).", summary="Read 0 lines (empty file)")
        if total is not None and first > total:
            raise ToolError(f"{name} has {total:,} lines; offset {first:,} is past the end.")
        return _numbered(chosen, first, total)


def _not_a_file(error: NotRegularFile, name: str) -> ToolError:
    if stat.S_ISDIR(error.mode):
        return ToolError(
            f"{name} is a directory, not a file. List it with Glob (e.g. pattern `*` with this path) or `ls` in Bash."
        )
    return ToolError(f"{name} is {kind_of(error.mode)}, not a regular file; Read skips it.")


def _numbered(chosen: list[tuple[str, int]], first: int, total: int | None) -> ToolResult:
    """`chosen` holds each line's text (at most MAX_LINE characters) and how many characters were cut."""
    out: list[str] = []
    size = 0
    for index, (line, cut) in enumerate(chosen):
        entry = f"{first + index:6}\t{line}"
        if cut:
            entry += f" [... line cut: {cut:,} more characters]"
        if out and size + len(entry) + 1 > MAX_OUTPUT:
            break
        out.append(entry)
        size += len(entry) + 1
    last = first + len(out) - 1
    text = "\n".join(out)
    of_total = f" of {total}" if total is not None else ""
    if len(out) < len(chosen):
        text += (
            f"\n\n[Showing lines {first}-{last}{of_total}: output limit of {MAX_OUTPUT:,} characters reached. "
            f"Continue with offset {last + 1}.]"
        )
    elif total is None:
        text += (
            f"\n\n[Showing lines {first}-{last}; the file continues beyond line {last}. Use offset/limit to read more.]"
        )
    elif first > 1 or last < total:
        text += f"\n\n[Showing lines {first}-{last} of {total}. Use offset/limit to read more.]"
    return ToolResult(text, summary=f"Read {len(out)} line{'' if len(out) == 1 else 's'}")
