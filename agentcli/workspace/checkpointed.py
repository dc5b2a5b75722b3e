"""The checkpointed workspace: another workspace, with the work tree recorded before each user turn's first change.

A wrapper (`contract.Workspace`) around the session's workspace, one per conversation: every
call passes through to the workspace it wraps, and `before_change` first has the
conversation's `checkpoints.turns.TurnCheckpoints` record the work tree before the first change
of the call's user turn. Whatever tool makes the change (Write, Edit, Bash, an MCP tool that does
not say it only reads, a skill's `!` command) and whoever calls it (the conversation's agent or
a sub-agent, whose calls count as the turn that started it) is covered, because they all
announce themselves here. It never refuses a call: a checkpoint that fails is said and the call
goes on. Closing it closes nothing: the wrapped workspace belongs to the session.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import Self

from agentcli.checkpoints.turns import TurnCheckpoints
from agentcli.workspace.contract import (
    OUTPUT_LIMIT,
    Change,
    Command,
    Finished,
    Folder,
    OpenFile,
    Process,
    Verb,
    Workspace,
)


class CheckpointedWorkspace:
    """`inner`, with `checkpoints` recording the work tree before each user turn's first change."""

    def __init__(self, inner: Workspace, checkpoints: TurnCheckpoints) -> None:
        self._inner = inner
        self._checkpoints = checkpoints

    @property
    def root(self) -> Path:
        return self._inner.root

    def run(
        self, command: Command, *, timeout: float, cancel: threading.Event, output_limit: int = OUTPUT_LIMIT
    ) -> Finished:
        return self._inner.run(command, timeout=timeout, cancel=cancel, output_limit=output_limit)

    def start(self, command: Command) -> AbstractContextManager[Process]:
        return self._inner.start(command)

    def read_file(self, real: Path) -> AbstractContextManager[OpenFile]:
        return self._inner.read_file(real)

    def open_folder(self, real: Path, verb: Verb, *, create: bool = False) -> AbstractContextManager[Folder]:
        return self._inner.open_folder(real, verb, create=create)

    def before_change(self, change: Change) -> None:
        self._inner.before_change(change)  # a refusal there stops the call before anything is recorded
        self._checkpoints.before(change.user_turn)

    def close(self) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
