"""What the fake model servers share (`fake_anthropic`, `fake_openai`, `fake_gemini`).

Each fake is real HTTP on 127.0.0.1, in a thread, answering from a script: a reply in its
provider's wire format, an `HttpError`, or a function of the `RecordedRequest` giving either.
What differs between them is the provider's: its routes, how it checks a request, the shape
of its error body (`ApiError.body`) and how a reply streams. What is the same is here:

- `RecordedRequest`: the path, the headers (lower-case names), the JSON body and the status
  answered (a fake's own record adds what only it knows);
- `ApiError`: an error response, its HTTP status and the provider's error body;
- `HttpError` / `http_error`: a scripted plain HTTP error;
- `FakeServer`: the script, the requests, and serving (`start`/`stop`, or `with`);
- `FakeHandler`: writing JSON, chunked SSE and a dropped connection.

Only the standard library is used.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Generic, Self, TypeVar, cast

JSONObject = dict[str, Any]
Entry = TypeVar("Entry")
Request = TypeVar("Request", bound="RecordedRequest")


@dataclass(frozen=True)
class HttpError:
    """A scripted plain HTTP error response; build it with `http_error`."""

    status: int
    body: Mapping[str, Any] | str
    """A JSON object, or a raw string (a proxy's HTML page)."""
    headers: Mapping[str, str] = field(default_factory=dict)


def http_error(status: int, body: Mapping[str, Any] | str, headers: Mapping[str, str] | None = None) -> HttpError:
    """A scripted HTTP error response with a JSON (or raw string) body and extra headers."""
    return HttpError(status, body, dict(headers or {}))


@dataclass
class RecordedRequest:
    """One HTTP request a fake received."""

    path: str
    headers: dict[str, str]
    """Header names are lower-case."""
    body: JSONObject
    """The parsed JSON body; `{}` if it was not a JSON object."""
    status: int = 0
    """The HTTP status the fake answered with (0 while still being handled)."""


class ApiError(Exception):
    """An error response: the HTTP status, the provider's word for the error (`kind`: its type,
    or Gemini's status such as `INVALID_ARGUMENT`), the message, and `body()` in its shape."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message

    def body(self) -> JSONObject:
        raise NotImplementedError


class FakeServer(Generic[Entry, Request]):
    """The script (entries of type `Entry`) and the requests recorded, served on 127.0.0.1."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._handler = handler
        self._script: list[Entry] = []
        self._requests: list[Request] = []
        self._changed = threading.Condition()
        self._closing = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> Self:
        """Start serving in a background thread; returns self."""
        if self._server is not None:
            raise RuntimeError(f"{type(self).__name__} already started")
        self._closing.clear()
        self._server = _Server(self, self._handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=type(self).__name__,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; slow streams still running are cut off."""
        if self._server is None:
            return
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def address(self) -> str:
        """`http://127.0.0.1:PORT` (a fake's `url` may add the path its clients take as the base)."""
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # script and records

    def script(self, *entries: Entry) -> None:
        """Append entries; each request the fake serves consumes the next one."""
        with self._changed:
            self._script.extend(entries)

    @property
    def remaining(self) -> int:
        """How many scripted entries have not been consumed yet."""
        with self._changed:
            return len(self._script)

    @property
    def requests(self) -> list[Request]:
        """The requests recorded so far, in order (which ones a fake records, its docstring says)."""
        with self._changed:
            return list(self._requests)

    def wait_for_requests(self, n: int, timeout: float = 30.0) -> list[Request]:
        """Block until at least `n` requests were recorded; raise TimeoutError if not."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._requests) >= n, timeout):
                raise TimeoutError(f"expected {n} requests, got {len(self._requests)} within {timeout}s")
            return list(self._requests)

    # used by the request handler

    def _record(self, request: Request) -> None:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()

    def _next_entry(self) -> Entry | None:
        with self._changed:
            return self._script.pop(0) if self._script else None

    def _sleep(self, seconds: float) -> bool:
        """Sleep; True if the server is shutting down meanwhile."""
        return self._closing.wait(seconds) if seconds > 0 else self._closing.is_set()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeServer[Any, Any], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.fake = fake

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


Fake = TypeVar("Fake", bound="FakeServer[Any, Any]")


class FakeHandler(BaseHTTPRequestHandler, Generic[Fake]):
    """A request to a fake (a `Fake`): the writing every fake does the same way."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    """Without it, small SSE writes meet delayed ACKs and every request waits ~40 ms."""
    timeout = 30
    json_type = "application/json"
    """The content-type of a JSON response."""

    @property
    def fake(self) -> Fake:
        """The fake this request was made to."""
        return cast(Fake, cast(_Server, self.server).fake)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def lower_case_headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def send_json(
        self,
        request: RecordedRequest | None,
        status: int,
        body: Mapping[str, Any] | str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """A whole JSON (or raw string) response; `request` records its status."""
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        self.start_response(request, status, self.json_type, {"content-length": str(len(data)), **(headers or {})})
        self.wfile.write(data)

    def start_response(
        self, request: RecordedRequest | None, status: int, content_type: str, headers: Mapping[str, str]
    ) -> None:
        if request is not None:
            request.status = status
        self.send_response(status)
        self.send_header("content-type", content_type)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def write_chunk(self, data: bytes) -> None:
        """One piece of a chunked (`transfer-encoding: chunked`) body, sent at once."""
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")

    def drop_connection(self) -> None:
        """Close the socket without finishing the response body."""
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
