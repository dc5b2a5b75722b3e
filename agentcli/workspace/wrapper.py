"""A workspace around another: every call passes through to it, and a wrapper overrides only
what it adds (checkpoints before a change, `checkpointed.CheckpointedWorkspace`; a batch task's
or an editor's view later). Closing a wrapper closes nothing: the wrapped workspace belongs to
whoever made it."""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import Self

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


class WorkspaceWrapper:
    """`inner`, unchanged: a `contract.Workspace` for wrappers to build on."""

    def __init__(self, inner: Workspace) -> None:
        self._inner = inner

    @property
    def root(self) -> Path:
        return self._inner.root

    def confines(self, shell_command: str) -> bool:
        return self._inner.confines(shell_command)

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
        self._inner.before_change(change)

    def close(self) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
