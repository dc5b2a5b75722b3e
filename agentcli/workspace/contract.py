"""The Workspace: the one way the agent's effects reach the machine.

Every process the agent starts (the Bash tool, a skill's or command's !`cmd`, the Grep tool's
ripgrep, git for the session's facts) and every file a tool reads or replaces (Read, Write,
Edit) goes through the session's `Workspace`, which tools find on their context
(`ToolContext.workspace`). What does not go through it, and why:

- hooks and MCP servers: the user's own configuration, run with the user's authority as
  Claude Code runs them (outside any sandbox); they take the workspace's `root` as their
  project folder;
- `/memory`'s editor: the user's program on the user's terminal;
- agentcli reading its own configuration (settings, CLAUDE.md, skills) and the Grep and Glob
  tools walking folders: reads on disk that no implementation needs to redirect.

Implementations and wrappers, each a file of its own in this package:

- `local.LocalWorkspace`: the machine itself (processes in their own process group,
  files opened beneath the checked path without following symlinks);
- later: a sandboxed one (bubblewrap around every process it starts: it rewrites the argv
  and adds to the environment in `start`, and owns one long-lived sandbox from `__enter__`
  to `close`); a checkpointed wrapper (records the work tree in `before_change`); a per-task
  one (a batch task's worktree as `root`); an editor-backed one (ACP's `fs/read_text_file`,
  `fs/write_text_file` and `terminal/*` behind `read_file`, `open_folder` and `run`).

A workspace is used as a context manager (`with LocalWorkspace(root) as workspace:`) or
closed with `close()`; the session that made one closes it. Its methods may be called from
several threads at once (concurrent tool calls, sub-agents).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import IO, Literal, Protocol, Self

from agentcli.access import Access

OUTPUT_LIMIT = 29_000
"""Characters of a command's output `Workspace.run` keeps by default (head and tail)."""
Verb = Literal["read", "written"]
"""For messages about a file: "nothing was read" / "nothing was written"."""
Origin = Literal["agent", "harness"]
Outcome = Literal["done", "timeout", "cancelled", "lingering"]


class WorkspaceError(Exception):
    """The workspace refused or could not do what was asked; the message, written for the model,
    says what happened and what to do next (a path that changed after it was checked, a sandbox
    that refuses)."""


@dataclass(frozen=True)
class Command:
    """A program to start in the workspace."""

    argv: Sequence[str]
    cwd: Path | None = None
    """The absolute folder it starts in; None: the workspace's root."""
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Variables added to the environment every child gets (which never holds agentcli's API
    credentials, `credentials.child_environment`)."""
    origin: Origin = "agent"
    """`agent`: a command the model asked for (Bash, a skill's `!`), which may do anything and
    gets the credentials the user lets through (`subprocessEnvPassthrough`); `harness`: a
    program agentcli runs for itself to read (ripgrep, git status), which gets none."""
    stderr: Literal["stdout", "pipe", "discard"] = "stdout"
    """Where its standard error goes: into its output, a pipe of its own (`Process.stderr`), or nowhere."""


@dataclass(frozen=True)
class Finished:
    """How a command run by `Workspace.run` ended, and what it printed."""

    outcome: Outcome
    """`done`: it exited and its output ended; `timeout`, `cancelled`: it was killed, with its
    process group; `lingering`: it exited but processes it left in the background kept its
    output open, so they were killed."""
    exit_code: int | None
    """Its exit status (negative: killed by that signal); None when it was killed before it ended."""
    output: str
    """What it printed (undecodable bytes kept as surrogate escapes), trailing newlines removed:
    at most the limit asked for, its start and its end, with a line saying how much was cut
    between them."""
    lines: int
    """Line breaks in all it printed, the part cut included."""


class Process(Protocol):
    """A program started by `Workspace.start`, running while its block lasts."""

    @property
    def pid(self) -> int:
        """Its process id, as this machine sees it (also the id of its process group)."""
        ...

    @property
    def stdout(self) -> IO[bytes]:
        """Its output (with its standard error when the command asked for that): a pipe read
        with `os.read` on its `fileno()`, which may be waited on with `select`."""
        ...

    @property
    def stderr(self) -> IO[bytes] | None:
        """Its standard error, when the command asked for a pipe of its own; else None."""
        ...

    def poll(self) -> int | None:
        """Its exit status once it has exited, else None."""
        ...

    def wait(self, timeout: float | None = None) -> int:
        """Wait for it to exit and return its status; raises `subprocess.TimeoutExpired`."""
        ...

    def kill(self) -> None:
        """Kill it and everything it started (its process group) at once. Never raises."""
        ...


@dataclass(frozen=True)
class Snapshot:
    """A regular file as read through one open handle: its metadata, then its bytes."""

    info: os.stat_result
    data: bytes


class Readable(Protocol):
    """Bytes read in order from where the reader stands (an `io.BytesIO` is one)."""

    def read(self, size: int = -1, /) -> bytes:
        """At most `size` bytes (all that is left when negative); b"" at the end."""
        ...

    def seek(self, offset: int, /) -> int:
        """Stand at `offset` bytes from the start."""
        ...


@dataclass(frozen=True)
class OpenFile:
    """A regular file opened for reading by `Workspace.read_file`."""

    info: os.stat_result
    """Its metadata (size, modification time) as of the open."""
    stream: Readable
    """Its bytes from the start: `read(n)`, `read()` for the rest, `seek(0)` to start again."""


class Folder(Protocol):
    """A folder opened by `Workspace.open_folder`: files in it are read and replaced through
    the one handle, so the file read is the file replaced."""

    @property
    def path(self) -> Path:
        """The folder's real path, for messages."""
        ...

    def read(self, name: str) -> Snapshot | None:
        """The regular file `name` as it is now, or None when there is none. Raises
        `regular_file.NotRegularFile` for a folder, FIFO, socket or device (none is read, and
        a FIFO is never waited on), `WorkspaceError` when `name` became a symlink."""
        ...

    def replace(self, name: str, data: bytes, mode: int | None) -> os.stat_result:
        """Make `name` hold `data`, atomically (readers see the old file or the new one, never
        part of either), with permission bits `mode` (None: a new file's default); returns the
        new file's metadata. Raises OSError (disk full, permission denied), WorkspaceError."""
        ...


@dataclass(frozen=True)
class Change:
    """A call about to change something, announced to the workspace before it runs (`before_change`)."""

    tool: str
    call_id: str
    """The tool_use id of the call (for a skill's `!` command, the Skill call's; "" when the user
    typed the /command)."""
    access: Access
    """What it declared (`Access.read_only` is False: it writes, runs a command, acts through
    an MCP server that does not say it only reads, or does not say what it does)."""
    user_turn: int
    """Which of the conversation's user messages it belongs to (`ToolContext.user_turn`):
    a sub-agent's calls count as the turn that started it."""


class Workspace(Protocol):
    """Where the agent's processes run and its files are read and written (see the module's docstring).

    Paths given to it are absolute, and are the real paths the permission gate judged
    (`ToolContext.real_path`): an implementation uses them as given and follows no symlink on
    the way, so what is used is what was checked.

    Cancellation: `run` watches the `cancel` event it is given and Ctrl-C (KeyboardInterrupt
    in the thread that runs it); either kills the command and its process group before `run`
    returns or re-raises. Nothing a workspace starts outlives the block or call that started
    it, except what a command itself left running in the background with its output
    redirected (as a shell does).
    """

    @property
    def root(self) -> Path:
        """The project folder: relative paths resolve against it, and commands start in it."""
        ...

    def run(
        self, command: Command, *, timeout: float, cancel: threading.Event, output_limit: int = OUTPUT_LIMIT
    ) -> Finished:
        """Run `command` to its end with nothing on its standard input, keeping at most
        `output_limit` characters of what it prints (its start and its end) however much that
        is. Kills it with its whole process group when `timeout` seconds pass or `cancel` is
        set (outcome `timeout`, `cancelled`), and when it exits leaving background processes
        that hold its output open (`lingering`); on KeyboardInterrupt (Ctrl-C, SIGTERM,
        SIGHUP), before re-raising it. A command that fails is a `Finished` with its exit code;
        OSError when it cannot be started at all (the program is missing), WorkspaceError when
        the workspace refuses it."""
        ...

    def start(self, command: Command) -> AbstractContextManager[Process]:
        """Start `command` for a caller that reads its output as it comes (the Grep tool's
        ripgrep), with nothing on its standard input. Leaving the block kills its process group
        if it is still running, then reaps it and closes its pipes; so does an interrupt while
        it is being started. Raises as `run` does."""
        ...

    def read_file(self, real: Path) -> AbstractContextManager[OpenFile]:
        """The regular file at `real`, open for reading while the block lasts. Raises
        FileNotFoundError or NotADirectoryError when it is not there, PermissionError,
        `regular_file.NotRegularFile` for a folder, FIFO, socket or device (never waiting on a
        FIFO), WorkspaceError when a component of the path became a symlink after the check."""
        ...

    def open_folder(self, real: Path, verb: Verb, *, create: bool = False) -> AbstractContextManager[Folder]:
        """The folder `real`, open while the block lasts; with `create`, missing folders on the
        way are made. Raises FileNotFoundError (without `create`), NotADirectoryError naming a
        component that is a file, WorkspaceError for a component that became a symlink (`verb`
        says in it whether nothing was read or nothing written)."""
        ...

    def before_change(self, change: Change) -> None:
        """Called after the permission gate allowed a call that may change something, before it
        runs (the tool executor calls it for every tool call, a skill's shell for each `!`
        command). The local workspace does nothing; a checkpointed one records the work tree
        before the first change of each user turn. Raises WorkspaceError to refuse the call:
        its message becomes the call's result."""
        ...

    def close(self) -> None:
        """Release what the workspace holds (a sandbox, its helper processes). Safe to call twice."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None: ...
