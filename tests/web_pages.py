"""A web server on 127.0.0.1 for WebFetch's tests: scripted pages, redirects, a huge body and a
stalled one, and a record of what was asked for (path and Host header).

Pages are plain HTTP (`PageServer.url`). A test reaches it under other names through a resolver
it hands the fetcher (`resolver`): `docs.test` → 127.0.0.1, without touching /etc/hosts.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self

from agentcli.web.addresses import Resolver

CHUNK = 64 * 1024


@dataclass
class Route:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    endless_bytes: int = 0
    """Stream this many bytes of `a` instead of `body` (the client may hang up first)."""
    stall_after: bytes | None = None
    """Send the headers and these bytes, then nothing until the server stops."""


@dataclass(frozen=True)
class Seen:
    path: str
    host: str
    headers: dict[str, str] = field(default_factory=dict)
    """Lower-case names."""


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up (as one reading only part of a huge page does) is no error of the
        server's: say nothing, since the tests' own process may be the one whose stderr is read."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class PageServer:
    """Serves `routes` (path → Route) on 127.0.0.1; `requests` records every request."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[Seen] = []
        self.sent_bytes = 0
        """Body bytes an endless route got out before the client hung up."""
        self.stalled = threading.Event()
        """Set once a stalled route has sent what it sends."""
        self._release = threading.Event()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str, host: str = "127.0.0.1", scheme: str = "http") -> str:
        return f"{scheme}://{host}:{self.port}{path}"

    def page(
        self, path: str, body: str | bytes, content_type: str = "text/html; charset=utf-8", status: int = 200
    ) -> None:
        self.routes[path] = Route(status, body.encode() if isinstance(body, str) else body, content_type)

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.routes[path] = Route(status, b"", "text/plain", {"Location": location})

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                headers = {name.lower(): value for name, value in self.headers.items()}
                server.requests.append(Seen(self.path, self.headers.get("Host", ""), headers))
                route = server.routes.get(self.path, Route(404, b"<h1>Not Found</h1>"))
                self.send_response(route.status)
                self.send_header("Content-Type", route.content_type)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                if route.stall_after is not None:
                    self.send_header("Content-Length", str(len(route.stall_after) + 1_000_000))
                    self.end_headers()
                    self.wfile.write(route.stall_after)
                    self.wfile.flush()
                    server.stalled.set()
                    server._release.wait()
                    return
                size = route.endless_bytes or len(route.body)
                self.send_header("Content-Length", str(size))
                self.end_headers()
                if not route.endless_bytes:
                    self.wfile.write(route.body)
                    return
                block = b"a" * CHUNK
                try:
                    while server.sent_bytes < size:
                        self.wfile.write(block)
                        server.sent_bytes += len(block)
                except OSError:  # the client hung up
                    self.close_connection = True

        return Handler


def resolver(names: dict[str, Sequence[str]]) -> Resolver:
    """A resolver answering `names` (name → addresses) and failing for any other name."""

    def resolve(host: str, port: int) -> Sequence[str]:
        if host not in names:
            raise OSError(f"no address for {host} in this test")
        return names[host]

    return resolve
