"""The local workspace: the agent's processes and files on this machine, as they are.

- Processes: each in a process group of its own (a new session), so a timeout, a cancel or
  Ctrl-C kills it with everything it started; started with Ctrl-C, SIGTERM and SIGHUP held
  back (`signals.interrupts_deferred`) until the handle that kills it is held; in the
  environment every child of agentcli gets (`credentials.child_environment`: no API key,
  except those the user lets through to the agent's commands). `run` reads the output in
  bounded memory (`running.run_to_end`).
- Files: reached from the path the gate checked without following a symlink anywhere on the
  way (`beneath`), and replaced atomically.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Collection, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from agentcli.credentials import child_environment
from agentcli.regular_file import read_at_most, require_regular
from agentcli.signals import interrupts_deferred
from agentcli.workspace import beneath
from agentcli.workspace.contract import OUTPUT_LIMIT, Change, Command, Finished, Folder, OpenFile, Verb
from agentcli.workspace.running import run_to_end

KILL_WAIT_S = 5.0
"""Seconds to wait for a killed process to be reaped."""
_STDERR = {"stdout": subprocess.STDOUT, "pipe": subprocess.PIPE, "discard": subprocess.DEVNULL}


class LocalWorkspace:
    """Implements `contract.Workspace` on this machine, rooted at `root`."""

    def __init__(self, root: Path, *, passthrough: Collection[str] = ()) -> None:
        """`passthrough`: the API credentials the user lets through to the agent's commands
        (setting `subprocessEnvPassthrough`); agentcli's own programs never get them."""
        self._root = root
        self._passthrough = frozenset(passthrough)

    @property
    def root(self) -> Path:
        return self._root

    def run(
        self, command: Command, *, timeout: float, cancel: threading.Event, output_limit: int = OUTPUT_LIMIT
    ) -> Finished:
        with self.start(command) as proc:
            return run_to_end(proc, timeout, cancel, output_limit)

    @contextlib.contextmanager
    def start(self, command: Command) -> Iterator[LocalProcess]:
        proc: subprocess.Popen[bytes] | None = None
        try:
            with interrupts_deferred():  # a process started but not yet in `proc` could not be killed
                proc = subprocess.Popen(
                    list(command.argv),
                    cwd=command.cwd or self._root,
                    env=self._environment(command),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=_STDERR[command.stderr],
                    start_new_session=True,
                )
            yield LocalProcess(proc)
        finally:
            if proc is not None:
                _end(proc)

    @contextlib.contextmanager
    def read_file(self, real: Path) -> Iterator[OpenFile]:
        fd = beneath.open_file(real, os.O_RDONLY | os.O_NONBLOCK, "read")
        try:
            yield OpenFile(require_regular(fd, real), _Descriptor(fd))
        finally:
            os.close(fd)

    def open_folder(self, real: Path, verb: Verb, *, create: bool = False) -> contextlib.AbstractContextManager[Folder]:
        return beneath.open_folder(real, verb, create=create)

    def before_change(self, change: Change) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _environment(self, command: Command) -> dict[str, str]:
        env = child_environment(self._passthrough if command.origin == "agent" else ())
        env.update(command.env)
        return env


class LocalProcess:
    """A `contract.Process` for a child of this process, the leader of its own process group."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self._proc = proc
        self._stdout = proc.stdout

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def stdout(self) -> IO[bytes]:
        return self._stdout

    @property
    def stderr(self) -> IO[bytes] | None:
        return self._proc.stderr

    def poll(self) -> int | None:
        return self._proc.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self._proc.wait(timeout)

    def kill(self) -> None:
        _kill_group(self._proc)


class _Descriptor:
    """`contract.Readable` over an open descriptor: each read one system call (a FileIO would
    add an fstat and a close of its own to every Read)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def read(self, size: int = -1, /) -> bytes:
        return os.read(self._fd, size) if size >= 0 else read_at_most(self._fd)

    def seek(self, offset: int, /) -> int:
        return os.lseek(self._fd, offset, os.SEEK_SET)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_WAIT_S)


def _end(proc: subprocess.Popen[bytes]) -> None:
    """The block that started `proc` is left: kill its group if it still runs, then reap it and close its pipes."""
    if proc.poll() is None:
        _kill_group(proc)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_WAIT_S)
