"""How agentcli learns that a command in the sandbox ended, and ends one early: the `CommandEnd`
of each `sandbox_process.SandboxProcess`. The command is PID 1 of a PID namespace of its own, so
it ends only once everything it started has ended.

- `PidfdEnd` (Linux 6.15 and later): the supervisor passes a pidfd of each starter along with
  it, and leaves its children to the kernel to reap. The pidfd becomes readable once the command
  is gone, and the kernel then gives its exit status to whoever holds the pidfd
  (`PIDFD_GET_INFO`). Nothing inside the sandbox wakes up for a command's end, which is then as
  quick as on the machine itself. `kill` signals it through the pidfd.
- `ReportedEnd` (older kernels): the supervisor, the command's parent, collects it and answers
  `{"exit": waitstatus}` on the starter's socket; `kill` asks the supervisor to kill it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import time
from collections.abc import Callable
from typing import Protocol

from agentcli.workspace import channel, linux

EXIT_INFO_WAIT_S = 1.0
"""How long the exit status may lag behind the pidfd's readiness (the kernel records it as it
releases the process, a moment after waking the pidfd's readers)."""


@functools.cache
def kernel_keeps_exit_status() -> bool:
    """Whether the kernel keeps a reaped process's exit status for its pidfds (Linux 6.15 and
    later), tried once on `true`."""
    try:
        pid = os.posix_spawnp("true", ["true"], {})
    except OSError:
        return False
    try:
        pidfd = os.pidfd_open(pid)  # a zombie until reaped just below
    except OSError:
        os.waitpid(pid, 0)
        return False
    try:
        os.waitpid(pid, 0)
        return linux.exit_status(pidfd) == 0
    except OSError:
        return False
    finally:
        os.close(pidfd)


class CommandEnd(Protocol):
    def fileno(self) -> int:
        """Readable once the command ended (for `select`)."""
        ...

    def status(self) -> int | None:
        """Its wait status, once `fileno` is readable; None when it cannot be known (the sandbox went away)."""
        ...

    def kill(self) -> None:
        """End it now (nothing if it ended)."""
        ...

    def close(self) -> None: ...


class PidfdEnd:
    def __init__(self, pidfd: int) -> None:
        self._pidfd = pidfd

    def fileno(self) -> int:
        return self._pidfd

    def status(self) -> int | None:
        deadline = time.monotonic() + EXIT_INFO_WAIT_S
        while True:
            try:
                status = linux.exit_status(self._pidfd)
            except OSError:
                return None
            if status is not None or time.monotonic() >= deadline:
                return status
            time.sleep(0.0005)

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def close(self) -> None:
        os.close(self._pidfd)


class ReportedEnd:
    def __init__(self, starter: socket.socket, kill: Callable[[], None]) -> None:
        """`starter`: the socket the supervisor reports on; `kill`: asks the supervisor to kill the command."""
        self._starter = starter
        self._kill = kill

    def fileno(self) -> int:
        return self._starter.fileno()

    def status(self) -> int | None:
        try:
            answer = channel.receive(self._starter)
        except (OSError, ValueError, channel.ChannelClosed):
            return None
        status = answer[0].get("exit") if answer is not None else None
        return status if isinstance(status, int) else None

    def kill(self) -> None:
        self._kill()

    def close(self) -> None:
        pass  # the starter's socket is the process's to close
