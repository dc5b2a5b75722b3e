"""Copying bytes between two sockets: the proxy's tunnels (`splice`), and, where socat is not
installed, the sandbox's network bridge (`serve`): from the sandbox's loopback port (where
HTTP_PROXY and HTTPS_PROXY point) to agentcli's proxy outside it (a Unix socket bound into the
sandbox), which decides which hosts may be reached (`proxy`). With socat the supervisor runs
`socat TCP-LISTEN,fork UNIX-CONNECT` instead; either is a process of its own that the
supervisor starts before any command and that no command can see (it is outside every
command's PID namespace).

Standard library only: it runs inside the sandbox with `python -I -S`.
"""

from __future__ import annotations

import contextlib
import socket
import threading

CHUNK = 1 << 16


def serve(listener: socket.socket, proxy_path: str) -> None:
    """Accept connections on `listener` forever, each relayed to the proxy at `proxy_path`."""
    while True:
        try:
            client, _address = listener.accept()
        except OSError:
            continue
        threading.Thread(target=_relay, args=(client, proxy_path), daemon=True).start()


def _relay(client: socket.socket, proxy_path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(proxy_path)
    except OSError:
        upstream.close()
        client.close()
        return
    splice(client, upstream)


def splice(one: socket.socket, other: socket.socket) -> None:
    """Copy each socket's bytes to the other until both directions end, then close both."""
    back = threading.Thread(target=_copy, args=(other, one), daemon=True)
    back.start()
    _copy(one, other)
    back.join()
    other.close()
    one.close()


def _copy(source: socket.socket, target: socket.socket) -> None:
    """Copy until `source` ends, then end `target`'s direction (the other one goes on)."""
    try:
        while chunk := source.recv(CHUNK):
            target.sendall(chunk)
    except OSError:
        with contextlib.suppress(OSError):
            source.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)
