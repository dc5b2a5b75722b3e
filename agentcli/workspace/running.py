"""Reading a started process's output in bounded memory, over `contract.Process`.

- `run_to_end`, for the workspaces whose processes are pipes on this machine (`Workspace.run`
  of the local one; of a sandboxed one too): the output is read as it comes and its first and
  last bytes kept (`HeadTail`, counting what falls between), until it ends, the deadline passes
  or the cancel event is set. A process that exits while something it left in the background
  keeps its output open is given `EXIT_GRACE` seconds, then killed with its group (`lingering`).
- `read_head`, for a caller that wants only the start of what a program prints (git's facts):
  reading stops once more than the limit came, and the caller's block then stops the program.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import threading
import time
from dataclasses import dataclass

from agentcli.workspace.contract import Finished, Outcome, Process

EXIT_GRACE = 0.5
"""Seconds to keep reading after the process exits (a background job may still hold the output)."""


def run_to_end(proc: Process, timeout: float, cancel: threading.Event, output_limit: int) -> Finished:
    """Read `proc`'s output until it ends (see the module's docstring); kill its process group
    unless it ended by itself, and on any exception (Ctrl-C included) before re-raising it."""
    output = HeadTail(output_limit)
    try:
        outcome = _pump(proc, output, timeout, cancel)
    except BaseException:  # KeyboardInterrupt, SIGTERM and SIGHUP included: never leave it running
        proc.kill()
        raise
    if outcome != "done":
        proc.kill()
    exit_code = proc.poll() if outcome in ("done", "lingering") else None
    return Finished(outcome, exit_code, output.render(), output.lines)


def _pump(proc: Process, output: HeadTail, timeout: float, cancel: threading.Event) -> Outcome:
    """Read output until EOF, the deadline or a cancel; returns how it ended."""
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            if cancel.is_set():
                return "cancelled"
            now = time.monotonic()
            if now >= deadline:
                return "timeout"
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE:
                return "lingering"
            if selector.select(min(0.05, deadline - now)):
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                output.add(chunk)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    if proc.poll() is None:  # it closed its output but keeps running
        while proc.poll() is None:
            if cancel.is_set():
                return "cancelled"
            if time.monotonic() >= deadline:
                return "timeout"
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.05)
    return "done"


@dataclass(frozen=True)
class Head:
    """The start of what a process printed (`read_head`)."""

    data: bytes
    """At most the limit's bytes."""
    complete: bool
    """The output ended within the limit; False when more came (or the deadline passed)."""
    exit_code: int | None
    """Its exit status when its output ended and it exited in time; else None."""
    timed_out: bool = False


def read_head(proc: Process, limit: int, timeout: float) -> Head:
    """The first `limit` bytes `proc` prints and how it exited, waiting at most `timeout` seconds.
    Reading stops when more than `limit` bytes came or the deadline passed; the process is
    left running then (leaving `Workspace.start`'s block kills it)."""
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    kept = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return Head(bytes(kept), False, None, timed_out=True)
            if not selector.select(min(0.05, left)):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            kept += chunk
            if len(kept) > limit:
                return Head(bytes(kept[:limit]), False, None)
    try:
        return Head(bytes(kept), True, proc.wait(max(0.0, deadline - time.monotonic())))
    except subprocess.TimeoutExpired:
        return Head(bytes(kept), False, None, timed_out=True)


class HeadTail:
    """Output kept in bounded memory: the first and last bytes, counting what fell in between.

    `render` gives at most `limit` characters: its start and its end, with a line saying how
    many characters and lines were cut between them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._keep_bytes = 2 * limit
        """Bytes buffered at each end: enough for limit/2 characters of any UTF-8."""
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped_bytes = 0
        self.dropped_lines = 0
        self.lines = 0
        """Line breaks in everything added, what was dropped included."""

    def add(self, chunk: bytes) -> None:
        self.lines += chunk.count(b"\n")
        room = self._keep_bytes - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        excess = len(self.tail) - self._keep_bytes
        if excess > self._keep_bytes:  # trim in big steps so appends stay cheap
            self.dropped_bytes += excess
            self.dropped_lines += self.tail.count(b"\n", 0, excess)
            del self.tail[:excess]

    def render(self) -> str:
        head = self.head.decode("utf-8", errors="surrogateescape")  # undecodable bytes: shown escaped later
        tail = self.tail.decode("utf-8", errors="surrogateescape")
        if not self.dropped_bytes and len(head) + len(tail) <= self.limit:
            return (head + tail).rstrip("\n")
        half = self.limit // 2
        text = head + tail if not self.dropped_bytes else None
        if text is not None:
            kept_head, kept_tail = text[:half], text[len(text) - half :]
            cut_chars = len(text) - 2 * half
            cut_lines = text.count("\n", half, len(text) - half)
        else:
            kept_head, kept_tail = head[:half], tail[max(0, len(tail) - half) :]
            cut_chars = len(head) - len(kept_head) + len(tail) - len(kept_tail) + self.dropped_bytes
            cut_lines = head.count("\n", half) + tail.count("\n", 0, len(tail) - len(kept_tail)) + self.dropped_lines
        note = f"\n\n[... output truncated: {cut_chars:,} characters ({cut_lines:,} lines) cut from the middle ...]\n\n"
        return (kept_head + note + kept_tail).rstrip("\n")
