"""Reading single keys while a turn runs: Esc interrupts, and the permission prompt's answers."""

from __future__ import annotations

import os
import select
import signal
import sys
import termios
import threading
import tty
from collections.abc import Iterator
from contextlib import contextmanager

ESC = "\x1b"
CTRL_C = "\x03"
UP = ("\x1b[A", "\x1bOA")
DOWN = ("\x1b[B", "\x1bOB")
ENTER = ("\r", "\n")
CTRL_H = "\x08"
CTRL_U = "\x15"
BACKSPACE = "\x7f"
ESCAPE_GAP_S = 0.03
"""How long the rest of an escape sequence may lag behind its Esc byte before the Esc counts alone."""


@contextmanager
def cbreak(fd: int) -> Iterator[None]:
    """Keys arrive one at a time, unechoed; Ctrl-C still raises SIGINT."""
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def read_key(fd: int, timeout: float | None = None) -> str | None:
    """One key press (an escape sequence such as an arrow key, or a character of several UTF-8
    bytes, comes back whole), None when none came in time, "" at the end of input."""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return None
    data = os.read(fd, 1)
    if data == ESC.encode():
        data += _rest_of_escape(fd)
    elif data and data[0] >= 0xC0:  # the lead byte of a multi-byte character says how many follow
        for _ in range(1 if data[0] < 0xE0 else 2 if data[0] < 0xF0 else 3):
            if not select.select([fd], [], [], 0.03)[0]:
                break
            data += os.read(fd, 1)
    return data.decode("utf-8", errors="replace")


def _rest_of_escape(fd: int) -> bytes:
    """What follows an Esc byte as part of the same key, read one byte at a time so that keys
    which arrive together (a held-down arrow key) stay apart: `[` and its parameters up to the
    final byte (CSI), `O` and one byte (SS3), any one byte (Alt+key), or nothing (a lone Esc)."""
    if not _more_within(fd, ESCAPE_GAP_S):
        return b""
    introducer = os.read(fd, 1)
    if introducer == b"O":
        return introducer + (os.read(fd, 1) if _more_within(fd, ESCAPE_GAP_S) else b"")
    if introducer != b"[":
        return introducer
    sequence = introducer
    while _more_within(fd, ESCAPE_GAP_S):
        byte = os.read(fd, 1)
        sequence += byte
        if not byte or 0x40 <= byte[0] <= 0x7E:  # the final byte of a CSI sequence
            break
    return sequence


def _more_within(fd: int, seconds: float) -> bool:
    return bool(select.select([fd], [], [], seconds)[0])


class EscWatcher:
    """While a turn runs, a lone Esc interrupts it exactly as Ctrl-C does (SIGINT to ourselves).

    Other keys are type-ahead: printable characters are kept, Enter starts a new line,
    Backspace takes back the last character and Ctrl-U the whole text; other escape sequences
    (arrow keys…) are ignored. `typeahead()` is that text, shown while the turn runs and put
    into the next prompt after it. The permission prompt pauses the watcher so that it can
    read the answer itself.
    """

    def __init__(self) -> None:
        self.fd = sys.stdin.fileno()
        self._stop = threading.Event()
        self._paused = threading.Event()
        self._idle = threading.Event()
        self._thread: threading.Thread | None = None
        self._typed = ""
        """Replaced whole on each key, never changed in place: the screen reads it from another thread."""

    def __enter__(self) -> EscWatcher:
        if not os.isatty(self.fd):
            return self
        self._saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        self._thread = threading.Thread(target=self._watch, name="esc-watcher", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._halt()
        if self._thread is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)

    def _halt(self) -> None:
        """Stop reading keys: what arrives from now on is left for the prompt."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop watching (e.g. while the permission prompt reads keys)."""
        self._idle.clear()
        self._paused.set()
        if self._thread is not None:
            self._idle.wait(timeout=0.5)
        try:
            yield
        finally:
            self._paused.clear()

    def _watch(self) -> None:
        while not self._stop.is_set():
            if self._paused.is_set():
                self._idle.set()
                self._stop.wait(0.02)
                continue
            key = read_key(self.fd, timeout=0.05)
            if key == ESC:
                os.kill(os.getpid(), signal.SIGINT)
            elif key:
                self._typed = edited(self._typed, key)

    def typeahead(self) -> str:
        """What the user typed while the turn ran, for the next prompt (without trailing new lines).

        Watching stops first: a key read after this answer was put together would be lost."""
        self._halt()
        return self.typed()

    def typed(self) -> str:
        """What has been typed ahead so far (the live region shows it while the turn runs)."""
        return self._typed.rstrip("\n")


def edited(text: str, key: str) -> str:
    """`text` after one key press of type-ahead."""
    if key in (BACKSPACE, CTRL_H):
        return text[:-1]
    if key == CTRL_U:
        return ""
    if key in ("\r", "\n"):
        return text + "\n"
    if key.startswith(ESC):
        return text
    return text + "".join(char for char in key if char.isprintable())
