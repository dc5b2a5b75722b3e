"""Grep: regex search over the project, with ripgrep when installed and pure Python otherwise."""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from agentcli.access import Access
from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.path_text import ESCAPED_NOTE, is_escaped
from agentcli.tools.base import BuiltinTool, ToolError, with_notices
from agentcli.tools.globs import FILE_TYPES, type_globs
from agentcli.tools.paths import not_found, shown_str
from agentcli.tools.ripgrep import (
    OutputUnclear,
    PatternRejected,
    RipgrepBlocked,
    RipgrepFailed,
    find_ripgrep,
    ripgrep_search,
)
from agentcli.tools.search import FileFilter, Hits, Mode, Results, SearchQuery, compile_pattern, python_search

DEFAULT_HEAD_LIMIT: dict[str, int] = {"files_with_matches": 200, "count": 200, "content": 300}
MAX_OUTPUT = 25_000
NEWLINE_NEEDS_MULTILINE = (
    "The pattern contains \\n, but the search goes line by line, so it can never match. "
    "Set multiline to true to match across lines."
)

RIPGREP_BLOCKED = (
    "ripgrep stopped waiting on a named pipe (FIFO) it tried to read as an ignore file; "
    "this search used agentcli's own engine instead."
)


class GrepTool(BuiltinTool):
    name = "Grep"
    concurrency = "shared"
    description = (
        "Search file contents with a regular expression (ripgrep syntax, e.g. `def \\w+\\(`; escape "
        "literal ( [ { . with \\). Skips .git, files ignored by .gitignore, and binary files. "
        "output_mode: files_with_matches (default; paths, newest first), content (matching lines as "
        "path:line:text; -A/-B/-C add context) or count (path:matching lines). Filter files with glob "
        "(`*.py`, `**/*.{ts,tsx}`) or type (py, js, ts, go, rust, java, ...). head_limit caps entries. "
        "multiline lets . and patterns span lines. Use this instead of grep or rg in Bash. Patterns are "
        "not anchored: use \\b for whole words (`\\bload\\b`) and -i to ignore case. Find where first "
        "(files_with_matches), then look closer (content with -C 3, or Read)."
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression"},
            "path": {"type": "string", "description": "Folder or file to search (default: project)"},
            "glob": {"type": "string", "description": "File-name filter, e.g. `*.py`"},
            "type": {"type": "string", "description": "Language, e.g. py"},
            "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"]},
            "-i": {"type": "boolean", "description": "Ignore case"},
            "-n": {"type": "boolean", "description": "Line numbers in content mode (default true)"},
            "-A": {"type": "integer", "minimum": 0, "description": "Lines after each match"},
            "-B": {"type": "integer", "minimum": 0, "description": "Lines before each match"},
            "-C": {"type": "integer", "minimum": 0, "description": "Lines before and after"},
            "head_limit": {"type": "integer", "minimum": 1, "description": "Max entries to return"},
            "multiline": {"type": "boolean", "description": "Match across lines (default false)"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def __init__(self, use_ripgrep: bool | None = None) -> None:
        self.use_ripgrep = use_ripgrep
        """None: use rg when on PATH (and not disabled by AGENTCLI_NO_RIPGREP); False: never."""

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return Access(reads=(ctx.resolve(str(tool_input.get("path") or ".")),))

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        query = self._query(tool_input, ctx)
        if not query.multiline and _mentions_newline(query.pattern):
            raise ToolError(NEWLINE_NEEDS_MULTILINE)
        rg = find_ripgrep() if self.use_ripgrep is not False else None
        hits: Results | None = None
        files = FileFilter(query)
        notices: list[str] = []
        if rg is not None:
            try:
                hits = ripgrep_search(ctx.workspace, rg, query, ctx.cancel, files)
            except (PatternRejected, OutputUnclear):
                pass  # Python's regex may accept it (look-around, backreferences); a name with a line break
            except RipgrepBlocked:
                notices.append(RIPGREP_BLOCKED)
            except RipgrepFailed as failed:
                if "not allowed in a regex" in str(failed):
                    raise ToolError(NEWLINE_NEEDS_MULTILINE) from None
                raise ToolError(f"Search failed: {failed}") from None
        if hits is None:
            try:
                regex = compile_pattern(query)
            except (re.error, OverflowError) as error:
                raise ToolError(_invalid_pattern(query.pattern, str(error))) from None
            hits = python_search(query, regex, ctx.cancel, files)
        if ctx.cancel.is_set():
            raise ToolError("Search interrupted by the user.")
        limit = tool_input.get("head_limit") or DEFAULT_HEAD_LIMIT[query.mode]
        cwd = ctx.cwd.resolve()
        result = render(hits, query, cwd, limit, numbers=tool_input.get("-n", True))
        return with_notices(result, notices + files.rules.notices(str(cwd)))

    def _query(self, tool_input: JSON, ctx: ToolContext) -> SearchQuery:
        path = ctx.resolve(str(tool_input.get("path") or "."))
        if not path.exists():
            raise not_found(path, ctx, "Path")
        root = path.resolve()
        kind = tool_input.get("type")
        globs = None
        if kind:
            globs = type_globs(kind)
            if globs is None:
                raise ToolError(f"Unknown type {kind!r}. Known types: {', '.join(sorted(FILE_TYPES))}; or use glob.")
        context: int = tool_input.get("-C") or 0
        mode: Mode = tool_input.get("output_mode") or "files_with_matches"
        return SearchQuery(
            pattern=tool_input["pattern"],
            root=str(root),
            root_is_file=root.is_file(),
            mode=mode,
            ignore_case=bool(tool_input.get("-i")),
            multiline=bool(tool_input.get("multiline")),
            before=int(tool_input.get("-B", context)),
            after=int(tool_input.get("-A", context)),
            glob=tool_input.get("glob") or None,
            type_globs=globs,
        )


def _invalid_pattern(pattern: str, error: str) -> str:
    return (
        f"Invalid regular expression {pattern!r}: {error}. Escape characters you mean literally "
        "(e.g. `\\(`, `\\[`, `\\{`, `\\.`) and try again."
    )


def _mentions_newline(pattern: str) -> bool:
    """Whether the pattern names a line break outside a negated class (`[^\\n]` is fine)."""
    i, negated_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            if pattern[i + 1] == "n" and not negated_class:
                return True
            i += 2
            continue
        if char == "\n" and not negated_class:
            return True
        if char == "[" and pattern.startswith("[^", i):
            negated_class = True
        elif char == "]":
            negated_class = False
        i += 1
    return False


def render(hits: Results, query: SearchQuery, cwd: Path, limit: int, *, numbers: bool = True) -> ToolResult:
    """The model's view of the hits: sorted, capped at `limit` entries and MAX_OUTPUT characters.

    Only the files shown are named and (in content mode) split into lines; the rest are counted.
    """
    files = len(hits.paths)
    if not files:
        return ToolResult("No matches found.", summary="No matches")
    order, naming = _naming(hits.paths, query, str(cwd))
    name = _ShownNames(naming)
    if query.mode == "files_with_matches":
        mtimes = hits.mtimes()
        newest = heapq.nsmallest(limit, range(files), key=lambda i: (-mtimes[i], order(i)))  # sorted(...)[:limit]
        listing = name.noted(_cap(((name(i), False) for i in newest), limit, files, "files"))
        return ToolResult(listing, summary=f"Found {files} file{_s(files)}", output=listing)
    ordered = sorted(range(files), key=order)
    lines = hits.matched_lines
    summary = f"Found {lines} matching line{_s(lines)} in {files} file{_s(files)}"
    if query.mode == "count":
        counts = ((f"{name(i)}:{hits.hits(i).matched_count}", False) for i in ordered)
        listing = _cap(counts, limit, files, "files")
    else:
        entries = _content_entries(((name(i), hits.hits(i)) for i in ordered), query, numbers)
        listing = _cap(entries, limit, hits.line_count, "lines")
    listing = name.noted(listing)
    return ToolResult(listing, summary=summary, output=listing)


class _ShownNames:
    """The shown name of the file at each index, noting whether one was an escaped spelling."""

    def __init__(self, name: Callable[[int], str]) -> None:
        self.name = name
        self.escaped = False

    def __call__(self, index: int) -> str:
        shown = self.name(index)
        self.escaped = self.escaped or is_escaped(shown)
        return shown

    def noted(self, listing: str) -> str:
        """`listing`, with how to pass an escaped name back when it showed one (`ESCAPED_NOTE`)."""
        return f"{listing}\n\n{ESCAPED_NOTE}" if self.escaped else listing


def _naming(paths: Sequence[str], query: SearchQuery, cwd: str) -> tuple[Callable[[int], str], Callable[[int], str]]:
    """(sort key, shown name) of the file at each index: files are listed in the order of their names.

    When every path is inside the project, or none is, the paths sort as their names do, so
    a name is made only for a file that is shown.
    """
    if query.root == cwd or query.root.startswith(cwd + "/") or not cwd.startswith(query.root.rstrip("/") + "/"):
        return paths.__getitem__, lambda i: shown_str(paths[i], cwd)
    names = [shown_str(path, cwd) for path in paths]  # the project is inside the searched folder
    return names.__getitem__, names.__getitem__


def _content_entries(
    ordered: Iterable[tuple[str, Hits]], query: SearchQuery, numbers: bool
) -> Iterator[tuple[str, bool]]:
    """(text, is_separator) lines; `--` separates non-adjacent groups when context is shown."""
    with_context = bool(query.before or query.after)
    first = True
    for name, hits in ordered:
        prefix = "" if query.root_is_file else name
        previous: int | None = None
        for number, matched, text in hits.lines():
            if with_context and not first and (previous is None or number != previous + 1):
                yield "--", True
            mark = ":" if matched else "-"
            label = f"{prefix}{mark}" if prefix else ""
            if numbers:
                label += f"{number}{mark}"
            yield label + text, False
            previous = number
            first = False


def _cap(entries: Iterable[tuple[str, bool]], limit: int, total: int, unit: str) -> str:
    """The entries that fit in `limit` and MAX_OUTPUT (consumed only that far), and a note on the rest."""
    out: list[str] = []
    size = shown = 0
    for text, separator in entries:
        if not separator and (shown >= limit or (out and size + len(text) > MAX_OUTPUT)):
            break
        out.append(text)
        size += len(text) + 1
        shown += not separator
    if out and out[-1] == "--":
        out.pop()
    if shown < total:
        out.append(
            f"\n[Showing {shown} of {total} {unit}. Narrow the search (path, glob, type, pattern)"
            " or raise head_limit to see more.]"
        )
    return "\n".join(out)


def _s(count: int) -> str:
    return "" if count == 1 else "s"
