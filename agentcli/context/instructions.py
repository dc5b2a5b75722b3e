"""Project and user instructions: CLAUDE.md, CLAUDE.local.md and AGENTS.md, with @imports.

Discovery order: Claude Code's `~/.claude/CLAUDE.md`, then `$AGENTCLI_HOME/CLAUDE.md`; every
`CLAUDE.md` then `CLAUDE.local.md` from the filesystem root down to the working directory; then
every `AGENTS.md` on the same walk. A file may import others with `@path` (relative to itself, `~/` allowed), up to
`MAX_IMPORT_DEPTH` levels; imports inside code spans and fenced blocks are ignored.
Problems (missing file, cycle, too deep) become notes in the text, never exceptions.

An import outside the project is loaded only when approved (context/outside.py); otherwise
a note takes its place and the file lists it in `withheld`, for the front end to ask about.
The user's own files (`~/.claude/CLAUDE.md`, `$AGENTCLI_HOME/CLAUDE.md`) and everything they
import are exempt.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.context.outside import OutsideFile, OutsideFiles, project_top
from agentcli.regular_file import read_regular_file
from agentcli.settings import agentcli_home, claude_home

MAX_IMPORT_DEPTH = 5
MAX_FILE_CHARS = 40_000
MAX_FILE_BYTES = 1 << 20

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_MENTION = re.compile(r"(?<![^\s(\[])@([^\s`]+)")
_TRAILING = ".,;:!?)]}'\""


@dataclass
class InstructionFile:
    path: Path
    kind: str
    """What the file is, for the model: e.g. "project instructions, checked into the codebase"."""
    text: str
    imported_by: Path | None = None
    notes: list[str] = field(default_factory=list)
    """Import problems, shown after the file's text."""
    withheld: list[OutsideFile] = field(default_factory=list)
    """Its imports outside the project that were not approved (each also has a note)."""
    unreadable: str | None = None
    """Why its text could not be read (a FIFO, a permission error): the front end tells the user."""
    memory_type: str = "Project"
    """Claude Code's name for its place: `User`, `Project` or `Local` (an import takes its importer's)."""


USER_KIND = "the user's private global instructions for all projects"
LOCAL_KIND = "the user's private project instructions, not checked in"
MEMORY_TYPES = {USER_KIND: "User", LOCAL_KIND: "Local"}
"""The memory type of each kind of file; any other is `Project`."""


def user_files(home: Path | None = None) -> list[Path]:
    """The user's own instruction files: Claude Code's, then agentcli's."""
    return [claude_home() / "CLAUDE.md", (home or agentcli_home()) / "CLAUDE.md"]


def candidate_paths(cwd: Path, home: Path | None = None) -> list[tuple[Path, str]]:
    """Every place an instruction file may be, in load order, with its kind."""
    walk = [*reversed(cwd.parents), cwd]
    paths = [(path, USER_KIND) for path in user_files(home)]
    for folder in walk:
        paths.append((folder / "CLAUDE.md", "project instructions, checked into the codebase"))
        paths.append((folder / "CLAUDE.local.md", LOCAL_KIND))
    paths.extend((folder / "AGENTS.md", "project instructions for coding agents") for folder in walk)
    return paths


def load_instructions(
    cwd: Path, home: Path | None = None, outside: OutsideFiles | None = None
) -> list[InstructionFile]:
    """The instruction files that exist, each followed by what it imports (depth first).

    `outside` says which imports outside the project may be read (default: none)."""
    outside = outside or OutsideFiles(project_top(cwd))
    own = user_files(home)
    loaded: list[InstructionFile] = []
    seen: set[Path] = set()
    for path, kind in candidate_paths(cwd, home):
        if _present(path) and _key(path) not in seen:
            loaded.extend(_load(path, kind, None, (), seen, None if path in own else outside))
    return loaded


def _present(path: Path) -> bool:
    """A file is there (a FIFO or device too, to be reported rather than opened); a folder is not."""
    return os.path.lexists(path) and not path.is_dir()


def withheld_imports(files: list[InstructionFile]) -> list[OutsideFile]:
    """Every import left out because it is outside the project and not approved."""
    return [item for entry in files for item in entry.withheld]


def unfenced_lines(text: str) -> Iterator[str]:
    """The lines of Markdown `text` outside fenced code blocks (the fence lines left out too)."""
    fence: str | None = None
    for line in text.splitlines():
        marker = _FENCE.match(line)
        if marker:
            fence = None if fence == marker.group(1) else fence or marker.group(1)
        elif not fence:
            yield line


def import_mentions(text: str) -> Iterator[str]:
    """The `@path` imports in `text`, skipping fenced blocks and inline code spans."""
    for line in unfenced_lines(text):
        for match in _MENTION.finditer(_CODE_SPAN.sub(" ", line)):
            mention = match.group(1).rstrip(_TRAILING)
            if mention:
                yield mention


def looks_like_path(mention: str) -> bool:
    """`@docs/x.md`, `@~/a`, `@README.md` are paths; `@alice` or `@property` may be plain words."""
    return "/" in mention or "." in mention or mention.startswith("~")


def _load(
    path: Path,
    kind: str,
    parent: Path | None,
    chain: tuple[Path, ...],
    seen: set[Path],
    outside: OutsideFiles | None,
    memory_type: str | None = None,
) -> list[InstructionFile]:
    """`path` and what it imports; `outside` judges imports outside the project (None: the user's own,
    exempt); an import has its importer's `memory_type`."""
    seen.add(_key(path))
    text, unreadable = _read(path)
    memory_type = MEMORY_TYPES.get(kind, "Project") if memory_type is None else memory_type
    entry = InstructionFile(path, kind, text, parent, unreadable=unreadable, memory_type=memory_type)
    found = [entry]
    chain = (*chain, _key(path))
    for mention in import_mentions(entry.text):
        target = _resolve(mention, path.parent)
        if not target.exists():
            if looks_like_path(mention):
                entry.notes.append(f"@{mention} was not imported: {target} does not exist.")
            continue
        if target.is_dir():
            entry.notes.append(f"@{mention} was not imported: {target} is a folder.")
        elif _key(target) in chain:
            cycle = " → ".join(p.name for p in (*chain, _key(target)))
            entry.notes.append(f"@{mention} was not imported: import cycle ({cycle}).")
        elif _key(target) in seen:
            entry.notes.append(f"@{mention}: {target} is already included above.")
        elif len(chain) > MAX_IMPORT_DEPTH:
            entry.notes.append(f"@{mention} was not imported: imports nest at most {MAX_IMPORT_DEPTH} levels deep.")
        elif outside is not None and not outside.may_read(target):
            entry.notes.append(outside.note(mention, target))
            entry.withheld.append(OutsideFile(_key(target), mention, path))
        else:
            found.extend(_load(target, "imported", path, chain, seen, outside, memory_type))
    return found


def _resolve(mention: str, base: Path) -> Path:
    path = Path(mention).expanduser()
    return Path(os.path.normpath(path if path.is_absolute() else base / path))


def _key(path: Path) -> Path:
    return path.resolve()


def _read(path: Path) -> tuple[str, str | None]:
    """The text to show, and why the file could not be read (None when it could)."""
    try:
        data = read_regular_file(path, MAX_FILE_BYTES)  # a FIFO is refused, not waited on
    except OSError as error:
        why = error.strerror or str(error)
        return f"(could not be read: {why})", why
    if b"\0" in data[:8192]:
        return "(a binary file; not shown)", None
    text = data.decode("utf-8", errors="replace")
    if len(text) > MAX_FILE_CHARS:
        cut = len(text) - MAX_FILE_CHARS
        text = text[:MAX_FILE_CHARS] + f"\n[... {cut:,} more characters not shown; Read the file for the rest.]"
    return text, None


def render_instructions(files: list[InstructionFile]) -> str:
    """The body of the instructions <system-reminder>, naming each file; "" when there are none."""
    if not files:
        return ""
    parts = [
        "Instructions from the user and the project follow (CLAUDE.md and related files). "
        "Follow them: they override your default behaviour."
    ]
    for item in files:
        origin = f"imported by {item.imported_by}" if item.imported_by else item.kind
        body = item.text.strip() or "(empty)"
        notes = "".join(f"\n[agentcli: {note}]" for note in item.notes)
        parts.append(f"Contents of {item.path} ({origin}):\n\n{body}{notes}")
    return "\n\n".join(parts)
