"""The HTTP proxy outside the sandbox: the only way sandboxed commands reach the network.

It listens on a Unix socket that the sandbox's relay (`relay`) forwards its loopback port to,
and understands what HTTP_PROXY and HTTPS_PROXY make programs send: `CONNECT host:port` (HTTPS,
and anything else tunnelled) and plain HTTP requests in absolute form (`GET http://host/path`).
Each is admitted or refused by the `NetworkPolicy` (the host's name, then the address it
resolves to, which is the address connected to). A refusal is answered `403 Forbidden` with
the reason in its body (and the header `X-Agentcli-Sandbox: refused`); the policy keeps it for
the command's result.

Nothing else is spoken: a request it cannot parse is answered 400; HTTPS is tunnelled, never
opened, so no certificate is involved.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

from agentcli.workspace.network import NetworkPolicy
from agentcli.workspace.relay import splice

MAX_HEAD = 64 << 10
"""Bytes of request line and headers read before giving up on a request."""
TIMEOUT_S = 30.0
"""For reading a request's head and for connecting to the host."""
REFUSED_HEADER = "X-Agentcli-Sandbox"


class SandboxProxy:
    """Serves on the Unix socket `path` from `start` until `close`, a thread per connection."""

    def __init__(self, path: Path, policy: NetworkPolicy) -> None:
        self.path = path
        self.policy = policy
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False

    def start(self) -> None:
        self._listener.bind(str(self.path))
        self._listener.listen(64)
        threading.Thread(target=self._accept, name="sandbox-proxy", daemon=True).start()

    def close(self) -> None:
        """Stop accepting, and end every connection still open."""
        with self._lock:
            self._closed = True
            connections = list(self._open)
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def _accept(self) -> None:
        while True:
            try:
                client, _address = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with self._lock:
            if self._closed:
                client.close()
                return
            self._open.add(client)
        upstream: socket.socket | None = None
        try:
            client.settimeout(TIMEOUT_S)
            head, rest = _read_head(client)
            upstream, reply = self._open_upstream(head, rest)
            client.sendall(reply)
            if upstream is None:
                return
            client.settimeout(None)
            with self._lock:
                self._open.add(upstream)
            splice(client, upstream)
        except OSError:
            pass
        finally:
            with self._lock:
                self._open.discard(client)
                if upstream is not None:
                    self._open.discard(upstream)
            client.close()

    def _open_upstream(self, head: bytes, rest: bytes) -> tuple[socket.socket | None, bytes]:
        """The connection the request asks for and the bytes to answer the client first (or, refused,
        no connection and the answer)."""
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            return None, _answer(400, "Bad Request", "agentcli sandbox proxy: not an HTTP proxy request")
        method, target, version = parts
        if method.upper() == "CONNECT":
            host, _, port_text = target.rpartition(":")
            if not host or not port_text.isdigit():
                return None, _answer(400, "Bad Request", f"agentcli sandbox proxy: CONNECT to {target!r}")
            connection, refused = self._connect(host, int(port_text))
            if connection is None:
                return None, refused
            connection.sendall(rest)
            return connection, b"HTTP/1.1 200 Connection Established\r\n\r\n"
        url = urlsplit(target)
        if url.scheme != "http" or not url.hostname:
            return None, _answer(400, "Bad Request", "agentcli sandbox proxy: only http:// URLs and CONNECT")
        connection, refused = self._connect(url.hostname, url.port or 80)
        if connection is None:
            return None, refused
        path = url.path or "/"
        if url.query:
            path += "?" + url.query
        headers = [
            line for line in lines[1:] if line and not line.lower().startswith(("proxy-", "connection:", "keep-alive:"))
        ]
        request = "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""])
        connection.sendall(request.encode("latin-1") + rest)
        return connection, b""

    def _connect(self, host: str, port: int) -> tuple[socket.socket | None, bytes]:
        """A connection to `host` if the policy admits it (and the address it resolves to), else the
        refusal's answer."""
        reason = self.policy.admits(host, port)
        if reason is not None:
            return None, _refused(host, reason)
        try:
            addresses = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
        except OSError as error:
            return None, _answer(502, "Bad Gateway", f"agentcli sandbox proxy: cannot resolve {host}: {error}")
        last = f"no address for {host}"
        for family, kind, protocol, _name, address in addresses:
            reason = self.policy.admits_address(host, port, str(address[0]))
            if reason is not None:
                return None, _refused(host, reason)
            connection = socket.socket(family, kind, protocol)
            connection.settimeout(TIMEOUT_S)
            try:
                connection.connect(address)
            except OSError as error:
                connection.close()
                last = str(error)
                continue
            connection.settimeout(None)
            return connection, b""
        return None, _answer(502, "Bad Gateway", f"agentcli sandbox proxy: cannot connect to {host}:{port}: {last}")


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    """The request line and headers (without the blank line), and whatever came after them."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(4096)
        if not chunk or len(data) > MAX_HEAD:
            raise OSError("no complete request head")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _refused(host: str, reason: str) -> bytes:
    return _answer(
        403, "Forbidden", f"agentcli sandbox: network access to {host} refused: {reason}", {REFUSED_HEADER: "refused"}
    )


def _answer(status: int, phrase: str, text: str, headers: dict[str, str] | None = None) -> bytes:
    body = (text + "\n").encode("utf-8", errors="replace")
    extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    head = (
        f"HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n{extra}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body
