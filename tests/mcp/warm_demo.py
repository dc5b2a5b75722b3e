"""The demo MCP server (`demo_server.py`), started warm: a copy forked from a process that has
imported the `mcp` SDK already.

A start of `demo_server.py` is ~1.3 s of CPU, nearly all of it importing the SDK, and the suite
starts it dozens of times. So each test worker keeps one warm server (`python -m
tests.mcp.warm_demo FD SOCKET`), which imports the demo server once and listens on SOCKET.
agentcli still starts a real program of its own and speaks stdio MCP to it: the entry
`stdio_server()` writes runs `demo_launch.py SOCKET`, a standard-library script that hands
its stdin, stdout and stderr to the warm server (SCM_RIGHTS) and waits. The warm server forks a
copy, which takes those streams, the launcher's environment, folder and arguments, and runs
`demo_server.main()`: agentcli's requests reach it through the pipes agentcli made, and its
answers, its stderr and the end of its stdout come back through them.

The launcher lives exactly as long as its copy and ends as it ends: it passes SIGTERM, SIGINT,
SIGHUP and SIGQUIT on to the copy, then exits with the copy's exit code or dies of the same
signal; a launcher killed outright (SIGKILL, which it cannot pass on) closes its socket, and the
copy then kills itself. So stopping the process agentcli started (closing its stdin, ending its
process group) stops the server, and a server that crashes ends the process agentcli started
with the crash's exit code. `DEMO_PID_FILE` holds the copy's pid (the one serving).

What a copy cannot show is the start itself (the interpreter, the SDK's import) and the server
as agentcli's own child: `cold_stdio_server()` runs `demo_server.py` directly, for a test about
those.

Protocol: the launcher connects to SOCKET (SOCK_SEQPACKET) and sends a JSON message (argv after
SOCKET, env, cwd) with its three standard descriptors; the server answers with the copy's pid,
then its exit code (negative: the signal that ended it) once reaped.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
from pathlib import Path
from typing import Any

from tests.warm_start import WarmProcess, standard_stream

LAUNCHER = Path(__file__).with_name("demo_launch.py")
_NUMBER = struct.Struct("q")
"""The copy's pid, then its exit code: as `demo_launch.py` reads them."""


class WarmDemo(WarmProcess):
    """One test worker's warm demo server, listening at `socket_path`."""

    MODULE = "tests.mcp.warm_demo"

    def __init__(self) -> None:
        import tempfile

        self.socket_path = Path(tempfile.mkdtemp(prefix="agentcli-demo-")) / "demo.sock"
        super().__init__(str(self.socket_path))

    def stop(self) -> None:
        super().stop()
        with contextlib.suppress(OSError):
            self.socket_path.unlink()
            self.socket_path.parent.rmdir()


def launch_args() -> list[str]:
    """The arguments (after the interpreter) that start the demo server warm."""
    return [str(LAUNCHER), str(WarmDemo.get().socket_path)]


def copies_running() -> list[int]:
    """The pids of this worker's demo server copies still running (not yet reaped)."""
    started = WarmProcess._started.get(WarmDemo)
    if started is None:
        return []
    from tests.terminal import descendants

    return [pid for pid in descendants(started.process.pid) if _running(pid)]


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a zombie waiting for its parent has ended
            return stat.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def _serve(control: socket.socket, listener: socket.socket) -> None:
    import tempfile

    with tempfile.TemporaryFile() as written:  # what importing it writes, as each start writes it
        kept = os.dup(2)
        os.dup2(written.fileno(), 2)
        try:
            from tests.mcp import demo_server

            _warm_up()
        finally:
            os.dup2(kept, 2)
            os.close(kept)
        written.seek(0)
        on_import = written.read()
    control.send(b"ready")
    copies: dict[int, tuple[int, socket.socket]] = {}
    """pidfd -> (pid, the launcher's connection)."""
    while True:
        readable, _, _ = select.select([control.fileno(), listener.fileno(), *copies], [], [])
        if control.fileno() in readable and not control.recv(16):
            break  # the test worker is gone
        if listener.fileno() in readable:
            launcher, _ = listener.accept()
            message, fds, _, _ = socket.recv_fds(launcher, 1 << 20, 3)
            if len(fds) != 3 or not message:  # a launcher that died before asking
                for fd in fds:
                    os.close(fd)
                launcher.close()
                continue
            pid = os.fork()
            if pid == 0:
                control.close()
                listener.close()
                _copy(demo_server.main, on_import, json.loads(message), fds, launcher)
            for fd in fds:
                os.close(fd)
            with contextlib.suppress(OSError):  # the launcher is gone: the copy sees it too
                launcher.send(_NUMBER.pack(pid))
            copies[os.pidfd_open(pid)] = (pid, launcher)
        for pidfd in [fd for fd in readable if fd in copies]:
            pid, launcher = copies.pop(pidfd)
            os.close(pidfd)
            _, status = os.waitpid(pid, 0)
            with contextlib.suppress(OSError):
                launcher.send(_NUMBER.pack(os.waitstatus_to_exitcode(status)))
            launcher.close()


def _warm_up() -> None:
    """Import what a server's run imports on its way (its stdio transport, anyio's event loop)."""
    import anyio
    import mcp.server.stdio  # noqa: F401 - imported for the copies

    anyio.run(anyio.sleep, 0)


def _copy(main: Any, on_import: bytes, request: dict[str, Any], stdio: list[int], launcher: socket.socket) -> None:
    """Become `demo_server.py ARGS` on `stdio`, as the interpreter would start it (its stderr gets
    what the import wrote: the SDK's warnings); never returns."""
    try:
        os.setsid()
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        os.dup2(launcher.fileno(), 3)
        os.closerange(4, 1 << 16)  # nothing else of the server's is inherited
        watched = socket.socket(fileno=3)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [str(Path(__file__).with_name("demo_server.py")), *request["argv"]]
        sys.stdin, sys.stdout, sys.stderr = (standard_stream(0, "r"), standard_stream(1, "w"), standard_stream(2, "w"))
        signal.signal(signal.SIGINT, signal.default_int_handler)
        threading.Thread(target=_die_with_launcher, args=(watched,), daemon=True).start()
        sys.stderr.buffer.write(on_import)
        sys.stderr.flush()
        main()
    except SystemExit as done:
        _flush()
        os._exit(done.code if isinstance(done.code, int) else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        _flush()
        os._exit(1)
    _flush()
    os._exit(0)


def _die_with_launcher(launcher: socket.socket) -> None:
    """The launcher never writes: its socket closing means it is gone (killed), and so is this copy."""
    with contextlib.suppress(OSError):
        launcher.recv(1)
    os.kill(os.getpid(), signal.SIGKILL)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C of the test run is the worker's to handle
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(sys.argv[2])
    listener.listen(64)
    _serve(control, listener)


if __name__ == "__main__":
    main()
