"""Start the demo MCP server warm: `python demo_launch.py SOCKET [ARGS...]` (see `warm_demo.py`).

Standard library only, so it starts in milliseconds. It hands its stdin, stdout and stderr, its
environment and folder to the warm server at SOCKET, which forks a copy of the demo server onto
them; then it waits, passing on the signals that would stop a server, and ends as the copy
ended: its exit code, or the signal that killed it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

NUMBER = struct.Struct("q")
PASSED_ON = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)


def main() -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.connect(sys.argv[1])
    request = {"argv": sys.argv[2:], "env": dict(os.environ), "cwd": os.getcwd()}
    socket.send_fds(server, [json.dumps(request).encode()], [0, 1, 2])
    nothing = os.open(os.devnull, os.O_RDWR)
    os.dup2(nothing, 0)  # the copy's now: its reader sees the end of its stdout when the copy ends
    os.dup2(nothing, 1)
    pid = _number(server)
    if pid is None:
        sys.exit("demo_launch: the warm demo server went away before starting a copy")
    for signum in PASSED_ON:
        signal.signal(signum, lambda received, _frame: os.kill(pid, received))
    code = _number(server)
    if code is None:
        sys.exit("demo_launch: the warm demo server went away")
    if code >= 0:
        sys.exit(code)
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
    sys.exit(128 - code)  # a signal that does not end a process by default


def _number(server: socket.socket) -> int | None:
    data = server.recv(NUMBER.size)
    return int(NUMBER.unpack(data)[0]) if data else None


if __name__ == "__main__":
    main()
