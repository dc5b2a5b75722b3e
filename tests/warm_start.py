"""The real `agentcli`, started warm: forked from a process that has already imported it.

A test that runs `agentcli` as a process (in a pty for the REPL, on pipes for `run`) pays ~1 s
of CPU for each start, nearly all of it the interpreter importing agentcli, prompt_toolkit,
rich and the provider's SDK; the suite starts a few hundred. So each test worker keeps one
warm server (`python -m tests.warm_start`), which imports those modules once and then forks a
copy for each command line. The copy is a process like the installed program's: its own pid
and session, the pty as its controlling terminal (Ctrl-C is a SIGINT from the terminal), the
standard streams it was given, the test's environment, folder and argv, and it runs
`agentcli.cli.main()` as the `agentcli` script does, so its exit status and signals are real.

What it does not show is the start itself: which modules load when, the console script, an
import-time failure. Tests of those start the installed program (`Terminal(..., warm=False)`,
`run_cli(..., warm=False)`, or `subprocess` directly).

The server answers on a SOCK_SEQPACKET socket it was given: each request is a JSON
message (argv, env, cwd, whether stdin is a terminal) with four descriptors: a socket to
answer on, and the child's stdin, stdout and stderr. On that socket it sends the child's pid,
then its exit status once reaped. It ends when the worker closes the other end.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import locale
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

PRELOADED = (
    "agentcli.cli",
    "agentcli.cli.argv",
    "agentcli.cli.commands",
    "agentcli.cli.app",
    "agentcli.runner",
    "agentcli.repl.app",
    "agentcli.providers.anthropic",
    "agentcli.providers.http",
    "httpx2",
    "agentcli.ui.markdown_stream",
    "agentcli.mcp.manager",
)
"""What a start of agentcli imports (the REPL, `run`, a turn against the Anthropic API, MCP)."""

_ID = struct.Struct("q")
_ENDED = struct.Struct("q")
"""The exit code of an ended child."""

_STARTED_IN = dict(os.environ)
"""The worker's environment as it started, before any test changed it: the server's own."""


def _serve(control: socket.socket) -> None:
    import importlib

    for module in PRELOADED:
        importlib.import_module(module)
    control.send(b"ready")
    answers: dict[int, socket.socket] = {}
    while True:
        readable, _, _ = select.select([control], [], [], 0.02)
        if readable:
            message, fds, _, _ = socket.recv_fds(control, 1 << 20, 4)
            if not message:
                break  # the test worker is gone
            answer = socket.socket(fileno=fds[0])
            pid = os.fork()
            if pid == 0:
                _child(json.loads(message), fds[1:])
            for fd in fds[1:]:
                os.close(fd)
            answer.send(_ID.pack(pid))
            answers[pid] = answer
        while answers:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            answer = answers.pop(pid)
            with contextlib.suppress(OSError):  # the test stopped listening
                answer.send(_ENDED.pack(os.waitstatus_to_exitcode(status)))
            answer.close()


def _child(request: dict[str, Any], stdio: list[int]) -> None:
    """Become `agentcli ARGV` on `stdio`, as the installed script would start; never returns."""
    try:
        os.setsid()
        if request["terminal"]:
            import fcntl
            import termios

            fcntl.ioctl(stdio[0], termios.TIOCSCTTY, 0)
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)  # as exec with close_fds: nothing of the server's is inherited
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        time.tzset()
        sys.argv = request["argv"]
        script = types.ModuleType("__main__")  # as the console script's: click names the program from it
        script.__file__ = sys.argv[0]
        sys.modules["__main__"] = script
        sys.stdin, sys.stdout, sys.stderr = (standard_stream(0, "r"), standard_stream(1, "w"), standard_stream(2, "w"))
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from agentcli.cli import main

        main()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
        os._exit(code)
    except BaseException:
        import traceback

        traceback.print_exc()
        os._exit(1)
    os._exit(0)


class WarmChild:
    """A child of the warm server: its pid now, its exit code once it has ended."""

    def __init__(self, pid: int, answer: socket.socket) -> None:
        self.pid = pid
        self._answer = answer
        self.returncode: int | None = None

    def poll(self, timeout: float = 0) -> int | None:
        if self.returncode is None and select.select([self._answer], [], [], timeout)[0]:
            data = self._answer.recv(_ENDED.size)
            self.returncode = int(_ENDED.unpack(data)[0]) if data else -signal.SIGKILL
            self._answer.close()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        code = self.poll(timeout if timeout is not None else 1e9)
        if code is None:
            raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
        return code

    def kill(self, signum: int = signal.SIGKILL) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)


class WarmProcess:
    """A helper process each test worker starts once, on first use, and keeps: `python -m MODULE
    FD ARGS...`, FD its end of a SOCK_SEQPACKET pair. It says `ready` there once it has imported
    what it preloads, and ends when the worker closes the pair (or the worker ends)."""

    MODULE: ClassVar[str]
    _lock = threading.Lock()
    _started: ClassVar[dict[type[WarmProcess], WarmProcess]] = {}

    def __init__(self, *args: str) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        root = Path(__file__).resolve().parent.parent
        self.process = subprocess.Popen(
            [sys.executable, "-m", self.MODULE, str(theirs.fileno()), *args],
            cwd=root,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            env=_STARTED_IN,
        )
        theirs.close()
        self.control = ours
        if self.control.recv(16) != b"ready":
            raise RuntimeError(f"the warm server did not start; run `python -m {self.MODULE}` to see why")
        atexit.register(self.stop)

    def stop(self) -> None:
        """End the server (it ends when its socket closes) and reap it."""
        self.control.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    @classmethod
    def get(cls) -> Self:
        with cls._lock:
            started = cls._started.get(cls)
            if not isinstance(started, cls) or started.process.poll() is not None:
                started = cls._started[cls] = cls()
            return started


def cpu_of_warm_processes() -> float:
    """The CPU seconds this worker's warm servers have used, their own and their ended children's
    (bench/suite_cost.py adds it: they are not the worker's reaped children, so its own rusage
    does not count them)."""
    ticks = 0
    for started in WarmProcess._started.values():
        try:
            stat = Path(f"/proc/{started.process.pid}/stat").read_text()
        except OSError:  # ended: the worker reaped it, and its rusage counts it now
            continue
        ticks += sum(int(field) for field in stat.rsplit(")", 1)[1].split()[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def standard_stream(fd: int, mode: str) -> io.TextIOWrapper:
    """A standard stream as the interpreter opens it at start: line-buffered on a terminal
    (stderr always), written through under PYTHONUNBUFFERED. (`sys.__stdout__` and the others
    stay the server's, on the same descriptors.)"""
    binary = open(fd, mode + "b", closefd=False)  # noqa: SIM115 - open until the process ends
    return io.TextIOWrapper(
        binary,
        encoding="utf-8",
        errors="backslashreplace" if fd == 2 else "strict",
        newline="\n",
        line_buffering=os.isatty(fd) or fd == 2,
        write_through=bool(os.environ.get("PYTHONUNBUFFERED")),
    )


class WarmServer(WarmProcess):
    """One test worker's warm agentcli server."""

    MODULE = "tests.warm_start"

    def start(self, argv: list[str], *, env: dict[str, str], cwd: Path, stdio: tuple[int, int, int]) -> WarmChild:
        """`argv` (argv[0] is the `agentcli` script) forked with these standard streams."""
        sys.audit("tests.warm_start", argv)  # a process start, as bench/suite_cost.py counts them
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        request = {"argv": argv, "env": env, "cwd": str(cwd), "terminal": os.isatty(stdio[0])}
        with self._lock:
            socket.send_fds(self.control, [json.dumps(request).encode()], [theirs.fileno(), *stdio])
        theirs.close()
        [pid] = _ID.unpack(ours.recv(_ID.size))
        return WarmChild(int(pid), ours)


def run(
    argv: list[str], *, input: str | None, cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(argv, input=input, capture_output=True, text=True, timeout=timeout)` for a
    warm agentcli: the same streams, the same decoding, the same TimeoutExpired after killing it."""
    stdin, feed = os.pipe() if input is not None else (os.open(os.devnull, os.O_RDONLY), -1)
    out_read, out = os.pipe()
    err_read, err = os.pipe()
    try:
        child = WarmServer.get().start(argv, env=env, cwd=cwd, stdio=(stdin, out, err))
    finally:
        for fd in (stdin, out, err):
            os.close(fd)
    read: dict[int, bytes] = {}

    def drain(fd: int) -> None:
        with open(fd, "rb") as stream:
            read[fd] = stream.read()

    def fill() -> None:
        with open(feed, "wb") as stream, contextlib.suppress(BrokenPipeError):
            stream.write((input or "").encode())

    threads = [threading.Thread(target=drain, args=(fd,), daemon=True) for fd in (out_read, err_read)]
    if input is not None:
        threads.append(threading.Thread(target=fill, daemon=True))
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    code = child.poll(max(0.0, deadline - time.monotonic()))
    if code is None or any(thread.is_alive() for thread in threads):
        child.kill()
        child.wait()
        raise subprocess.TimeoutExpired(argv, timeout)
    return subprocess.CompletedProcess(argv, code, _text(read[out_read]), _text(read[err_read]))


def _text(data: bytes) -> str:
    """As `subprocess.run(text=True)` decodes a stream: the locale's encoding, universal newlines."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


def can_start(argv: list[str], env: dict[str, str]) -> bool:
    """Whether the warm server can start `argv` in `env`: it is the `agentcli` installed beside
    this interpreter, and `env` changes nothing of how an interpreter starts (the PYTHON*
    variables, e.g. PYTHONPROFILEIMPORTTIME, are those the server started with)."""
    return Path(argv[0]) == Path(sys.executable).parent / "agentcli" and _interpreter_options(env) == (
        _interpreter_options(_STARTED_IN)
    )


def _interpreter_options(env: Mapping[str, str]) -> dict[str, str]:
    return {name: value for name, value in env.items() if name.startswith("PYTHON")}


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C of the test run is the worker's to handle
    _serve(control)


if __name__ == "__main__":
    main()
