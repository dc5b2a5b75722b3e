"""Drive a program in a real pseudo-terminal and read its screen (pexpect + the pyte emulator)."""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import os
import select
import signal
import struct
import termios
import time
from pathlib import Path

import pexpect
import pyte

from tests.waiting import CEILING
from tests.warm_start import WarmServer, can_start

CURSOR_POSITION_REQUEST = "\x1b[6n"

KEYS = {
    "enter": "\r",
    "esc": "\x1b",
    "ctrl-c": "\x03",
    "ctrl-d": "\x04",
    "up": "\x1b[A",
    "down": "\x1b[B",
    "tab": "\t",
    "shift-tab": "\x1b[Z",
}


class Terminal:
    """A program on a `rows` x `cols` screen. `wait_for` reads output until text shows up.

    `agentcli` starts warm (`tests.warm_start`) unless `warm=False`: a test of its start-up
    itself needs the installed program started afresh."""

    def __init__(
        self, argv: list[str], *, env: dict[str, str], cwd: Path, rows: int = 40, cols: int = 110, warm: bool = True
    ) -> None:
        self.screen = pyte.HistoryScreen(cols, rows, history=2000)
        self.stream = pyte.Stream(self.screen)
        self.child: pexpect.spawn[str] | WarmPty
        if warm and can_start(argv, env):
            self.child = WarmPty(argv, env=env, cwd=cwd, rows=rows, cols=cols)
        else:
            self.child = pexpect.spawn(
                argv[0],
                argv[1:],
                env=env,
                cwd=str(cwd),
                dimensions=(rows, cols),
                encoding="utf-8",
                codec_errors="replace",
            )
        self.output = ""
        self._text: str | None = None
        """`text()` as of the last output read; None once more has been read."""

    def pump(self, timeout: float = 0.05) -> bool:
        """Read what the program wrote so far; False once it has exited."""
        try:
            data = self.child.read_nonblocking(65536, timeout)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.output += data
        self._text = None
        for part in data.split(CURSOR_POSITION_REQUEST)[:-1]:  # answer as a real terminal does
            self.stream.feed(part)
            self.child.send(f"\x1b[{self.screen.cursor.y + 1};{self.screen.cursor.x + 1}R")
        self.stream.feed(data.rsplit(CURSOR_POSITION_REQUEST, 1)[-1])
        return True

    def text(self) -> str:
        """Everything on screen now, plus what scrolled off the top."""
        if self._text is None:  # the waits below ask after every read: drawing it is the costly part
            scrolled = ["".join(c.data for c in line.values()) for line in self.screen.history.top]
            lines = [*(line.rstrip() for line in scrolled), *(line.rstrip() for line in self.screen.display)]
            self._text = "\n".join(lines)
        return self._text

    def wait_for(self, text: str, timeout: float = CEILING) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.text():
            if not self.pump() or time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen shows:\n{self.text()}")
        return self.text()

    def wait_for_count(self, text: str, count: int, timeout: float = CEILING) -> str:
        """Wait until `text` is on screen at least `count` times."""
        deadline = time.monotonic() + timeout
        while self.text().count(text) < count:
            if not self.pump() or time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared {count} times; the screen shows:\n{self.text()}")
        return self.text()

    def wait_for_prompt(self, after: str, timeout: float = CEILING) -> str:
        """Wait until `after` is on screen and an empty input prompt (`>`) is drawn below it:
        the turn is over and the program reads keys again."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if after in screen and ">" in screen[screen.rindex(after) :].splitlines()[1:]:
                return screen
            if not self.pump() or time.monotonic() > deadline:
                raise AssertionError(f"no prompt after {after!r}; the screen shows:\n{screen}")

    def wait_for_absence(self, text: str, timeout: float = CEILING) -> str:
        """Wait until `text` is no longer on screen (e.g. a line the program cleared)."""
        deadline = time.monotonic() + timeout
        while text in self.text():
            if not self.pump() or time.monotonic() > deadline:
                raise AssertionError(f"{text!r} stayed on screen; the screen shows:\n{self.text()}")
        return self.text()

    def type(self, text: str) -> None:
        self.child.send(text)

    def press(self, *keys: str) -> None:
        for key in keys:
            self.child.send(KEYS.get(key, key))
            time.sleep(0.05)

    def submit(self, text: str) -> None:
        self.type(text)
        time.sleep(0.1)
        self.press("enter")

    def wait_exit(self, timeout: float = CEILING) -> int:
        deadline = time.monotonic() + timeout
        while self.pump():
            if time.monotonic() > deadline:
                raise AssertionError(f"the program did not exit; the screen shows:\n{self.text()}")
        self.child.close()
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)

    def close(self) -> None:
        """Kill the program and whatever it started, reap it and close the pty, all before returning.

        pexpect's own terminate() gives up after a few tenths of a second on a busy machine; the
        child left behind would then fail to close in a destructor during some later test. A
        command the program runs sits in a session of its own, so it is found and killed by pid."""
        if self.child.isalive() and self.child.pid is not None:
            started = descendants(self.child.pid)
            self.child.kill(signal.SIGKILL)
            for pid in started:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self.child.wait()
        self.child.close(force=True)


class WarmPty:
    """The part of `pexpect.spawn` that `Terminal` uses, for a warm agentcli on a pty of our own."""

    def __init__(self, argv: list[str], *, env: dict[str, str], cwd: Path, rows: int, cols: int) -> None:
        self.fd, terminal = os.openpty()
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        try:
            self.process = WarmServer.get().start(argv, env=env, cwd=cwd, stdio=(terminal, terminal, terminal))
        finally:
            os.close(terminal)  # the child's is then the only one: its end is our end of input
        self.pid: int | None = self.process.pid
        self.exitstatus: int | None = None
        self.signalstatus: int | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._closed = False

    def read_nonblocking(self, size: int, timeout: float) -> str:
        if not select.select([self.fd], [], [], timeout)[0]:
            raise pexpect.TIMEOUT("nothing to read")
        try:
            data = os.read(self.fd, size)
        except OSError:  # EIO: nobody holds the terminal any more
            data = b""
        if not data:
            raise pexpect.EOF("the program and everything it started closed the terminal")
        return self._decoder.decode(data)

    def send(self, text: str) -> None:
        time.sleep(0.05)  # as pexpect's delaybeforesend: keys arrive as typed, not all at once
        os.write(self.fd, text.encode())

    def isalive(self) -> bool:
        return self.process.poll() is None

    def kill(self, signum: int) -> None:
        self.process.kill(signum)

    def wait(self) -> int:
        code = self.process.wait()
        self.exitstatus, self.signalstatus = (code, None) if code >= 0 else (None, -code)
        return code

    def close(self, force: bool = True) -> None:
        if self.isalive():
            self.kill(signal.SIGKILL)
        self.wait()
        if not self._closed:
            os.close(self.fd)
            self._closed = True


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (its children, theirs, …), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state, past the command name
        children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    pending = [pid]
    while pending:
        below = children.get(pending.pop(), [])
        found.extend(below)
        pending.extend(below)
    return found
