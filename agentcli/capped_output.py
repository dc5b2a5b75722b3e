"""Running a program whose output agentcli reads, in bounded memory: the cap applies while reading.

    done = run_capped(["git", "status"], cwd=project, env=env, limit=16_384, timeout=3.0)
    done.stdout, done.stdout_cut, done.exit_code, done.timed_out

Each of stdout and stderr is read to its end by a thread of its own, so the program never
blocks on a full pipe and the timeout holds; the first `limit` bytes of each are kept and the
rest is counted and dropped as it arrives. A hook printing 200 MB costs agentcli the reading,
not 200 MB of memory. With `stop_when_full` the program is killed as soon as either stream
passes `limit` instead (for output only its start is wanted of: git's). At the timeout the
program is killed (with its process group when it was given one, `own_group`), and what it
wrote until then is kept. Raises OSError when the program cannot be started.

(The Bash tool keeps the head and the tail of its output instead: `tools.bash.HeadTail`.)
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

READ_CHUNK = 1 << 16
KILL_WAIT_S = 5.0
"""How long to wait for a killed program's pipes to close (a child that left its group may hold them)."""


@dataclass(frozen=True)
class Captured:
    """How the program ended and the start of what it wrote."""

    exit_code: int | None
    """None when it was killed at the timeout."""
    stdout: bytes
    stderr: bytes
    stdout_cut: int = 0
    """Bytes written after the first `limit`, dropped."""
    stderr_cut: int = 0
    timed_out: bool = False
    stopped: bool = False
    """Killed once its output passed `limit` (`stop_when_full`)."""


class _Head(threading.Thread):
    """Reads a pipe to its end, keeping its first `limit` bytes and counting the others."""

    def __init__(self, pipe: IO[bytes], limit: int, when_full: Callable[[], None] | None) -> None:
        super().__init__(daemon=True, name="output-reader")
        self.pipe = pipe
        self.limit = limit
        self.when_full = when_full
        self.kept = bytearray()
        self.cut = 0
        self.start()

    def run(self) -> None:
        fd = self.pipe.fileno()
        with contextlib.suppress(OSError):
            while chunk := os.read(fd, READ_CHUNK):
                room = max(0, self.limit - len(self.kept))
                self.kept += chunk[:room]
                self.cut += len(chunk) - min(room, len(chunk))
                if self.cut and self.when_full is not None:
                    self.when_full()
                    self.when_full = None


def run_capped(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    limit: int,
    timeout: float,
    stdin: bytes = b"",
    own_group: bool = False,
    stop_when_full: bool = False,
    on_start: Callable[[int], None] | None = None,
) -> Captured:
    """Run `argv` to its end or `timeout` seconds, `stdin` on its standard input; see the module.
    `on_start` is told its pid (its process group's, with `own_group`) once it has started."""
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=own_group,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    if on_start is not None:
        on_start(proc.pid)
    deadline = time.monotonic() + timeout
    full = threading.Event()

    def stop() -> None:
        full.set()
        _kill(proc, own_group, wait=False)

    when_full = stop if stop_when_full else None
    out, err = _Head(proc.stdout, limit, when_full), _Head(proc.stderr, limit, when_full)
    feeder = threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True, name="input-writer")
    feeder.start()
    for thread in (feeder, out, err):
        thread.join(max(0.0, deadline - time.monotonic()))
    finished = not (feeder.is_alive() or out.is_alive() or err.is_alive())
    if finished:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            finished = False
    if not finished:
        _kill(proc, own_group, wait=True)
        for thread in (out, err):
            thread.join(KILL_WAIT_S)
    for reader in (out, err):
        if not reader.is_alive():
            reader.pipe.close()
    stopped = full.is_set()
    return Captured(
        proc.returncode if finished and not stopped else None,
        bytes(out.kept),
        bytes(err.kept),
        out.cut,
        err.cut,
        timed_out=not finished and not stopped,
        stopped=stopped,
    )


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """Write `data` and close the pipe; a program that does not read its input is no error."""
    with contextlib.suppress(OSError):
        if data:
            pipe.write(data)
    with contextlib.suppress(OSError):
        pipe.close()


def _kill(proc: subprocess.Popen[bytes], own_group: bool, *, wait: bool) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if own_group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    if wait:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(KILL_WAIT_S)
