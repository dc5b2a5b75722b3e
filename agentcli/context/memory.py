"""Memory the user asks for: a line typed as `# text` at the REPL prompt, appended to one file.

As in Claude Code, the user picks where it goes (`memory_targets`): the project's `CLAUDE.md`
(checked in), its `CLAUDE.local.md` (private), or the user's own `$AGENTCLI_HOME/CLAUDE.md`
(every project). `remember` appends `- text` as a new line, creating the file if need be; the
instructions reminder of the next user message then carries the file's new content.

Writing memory is the user's action, not the model's, so no permission is asked; it writes
only to the chosen file. A repository could make its `CLAUDE.md` a symlink to `~/.bashrc` or
`.git/config`: a project memory file that is a symlink is followed only to a file in the
project that is not a protected path (the user's own file may link anywhere: only the user or
something already allowed to write their home could have made it). The file is then opened
without following any symlink (`workspace.beneath`), so the file checked is the file written.
Anything else is a `MemoryNotWritten` saying why; nothing is written.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from agentcli.context.outside import project_top
from agentcli.errors import AgentcliError
from agentcli.permissions.protected import protection
from agentcli.workspace.beneath import open_file
from agentcli.workspace.contract import WorkspaceError

MAX_NOTE_CHARS = 2_000
"""A memory line longer than this is refused: memory is for short facts, a file edit for more (/memory)."""


class MemoryNotWritten(AgentcliError):
    """The note could not be added; nothing was written."""


@dataclass(frozen=True)
class MemoryTarget:
    """One file a `# note` may go to."""

    label: str
    """What it is, for the question: "Project memory", …"""
    path: Path
    shared: str
    """Who sees it: "checked in, shared with your team", …"""
    project: Path | None
    """For a project file, the project: a symlink at `path` must lead to a file in it that is
    not a protected path. None for the user's own file."""


def memory_note(text: str) -> str | None:
    """`# always run make lint` → "always run make lint"; None when `text` is not a memory note
    (it does not start with `#`, nothing follows it, or it has several lines: a pasted Markdown
    text is a message)."""
    stripped = text.strip()
    if not stripped.startswith("#") or "\n" in stripped:
        return None
    note = " ".join(stripped[1:].split())
    return note or None


def memory_targets(cwd: Path, home: Path) -> list[MemoryTarget]:
    """Where a note may go, in the order Claude Code offers them: the project's files (in the
    folder agentcli was started in), then the user's own."""
    top = project_top(cwd)
    return [
        MemoryTarget("Project memory", cwd / "CLAUDE.md", "checked in, shared with your team", top),
        MemoryTarget("Project memory (local)", cwd / "CLAUDE.local.md", "private to you, this project only", top),
        MemoryTarget("User memory", home / "CLAUDE.md", "private to you, every project", None),
    ]


def remember(target: MemoryTarget, note: str) -> Path:
    """Append `- note` to `target` as a line of its own; the real path written. Raises
    MemoryNotWritten (nothing written) when the note is too long or the file may not be written."""
    if len(note) > MAX_NOTE_CHARS:
        raise MemoryNotWritten(
            f"The note is {len(note):,} characters; memory takes at most {MAX_NOTE_CHARS:,} at a time. "
            f"Use /memory to edit {target.path.name} in your editor instead."
        )
    real = _checked_path(target)
    try:
        fd = open_file(real, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, "written")
    except (OSError, WorkspaceError) as error:
        raise MemoryNotWritten(f"Could not write {target.path}: {_why(error)}. Nothing was written.") from error
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise MemoryNotWritten(f"{target.path} is not a regular file, so nothing was written to it.")
        line = f"- {note}\n"
        if info.st_size and _last_byte(fd, info.st_size) != b"\n":
            line = "\n" + line
        os.write(fd, line.encode())
    except OSError as error:
        raise MemoryNotWritten(f"Could not write {target.path}: {_why(error)}.") from error
    finally:
        os.close(fd)
    return real


def _checked_path(target: MemoryTarget) -> Path:
    """The real file to append to: `target.path` itself, or where its symlink leads (for a
    project file: when that is in the project and not a protected path)."""
    folder = target.path.parent.resolve()
    direct = folder / target.path.name
    if not os.path.islink(direct):
        return direct
    real = direct.resolve()
    if target.project is None:
        return real
    project = target.project.resolve()
    if project not in real.parents:
        raise MemoryNotWritten(
            f"{target.path} is a symlink to {real}, outside the project: memory is not written through it. "
            "Edit that file yourself if you mean to."
        )
    protected = protection(real, project)
    if protected is not None:
        raise MemoryNotWritten(
            f"{target.path} is a symlink to {real}, a protected path ({protected.reason}): memory is not written "
            "through it."
        )
    return real


def _last_byte(fd: int, size: int) -> bytes:
    return os.pread(fd, 1, size - 1)


def _why(error: BaseException) -> str:
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error)
