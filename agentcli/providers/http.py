"""The HTTP layer under every model provider: JSON POSTed, server-sent events streamed back,
and every way that can fail turned into one of our errors.

Provider-neutral: a provider names its base URL, headers and hints (`Endpoint`) and reads
the events; nothing here knows a wire format beyond HTTP, SSE and the error body the model
APIs share (`{"error": {"type" or "status": ..., "message": ...}}`).

- **One kept client.** An `httpx2.Client` per `HttpClient`, made at the first request and
  kept, so connections are reused turn after turn; `close()` ends it. Proxies come from the
  environment (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`), as curl reads them.
- **Timeouts** (`agentcli.providers.timeouts`): `connect`, and `stream_idle` for the longest
  silence between two reads, stream events included.
- **Before the response.** A server that cannot be reached is a `ModelAPIError` at once
  (retrying would only delay the news). An error status is a `TransientModelError` when
  `agentcli.providers.retry` says it is worth asking again (with the server's `retry-after-ms`
  or `retry-after`), else a `ModelAPIError`; its message is the server's own.
- **During the stream.** Silence, a dropped connection or an event beyond `MAX_EVENT_BYTES`
  are `TransientModelError`s.
- **Interrupted.** With a cancel event (`StreamListener.cancel`: a sub-agent's, whose thread
  Ctrl-C does not reach), setting it shuts the connection's socket down, which wakes the read
  at once, and the stream raises `Cancelled`; the server sees the client hang up and stops
  generating. (Before the response's headers arrive there is no socket to reach: the request
  is stopped as soon as they do.)
- **Nothing is retried here**: the loop retries, where the user sees each attempt.
- Every error carries the response's request id (`Endpoint.request_id_headers`), which
  `--verbose` shows, for a report to the API's provider.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from agentcli.contracts import JSON, Cancellation
from agentcli.errors import Cancelled, ModelAPIError, TransientModelError
from agentcli.providers.retry import retry_after, should_retry, status_fault
from agentcli.providers.timeouts import Timeouts

if TYPE_CHECKING:  # httpx2 is imported at the first request, not with this module (it is on the REPL's paint path)
    import httpx2
    from httpx2 import ServerSentEvent

__all__ = [
    "MAX_EVENT_BYTES",
    "SERVER_ERROR_HINT",
    "Endpoint",
    "EventStream",
    "HttpClient",
    "LazyHttpClient",
    "aborted_on",
    "cancellable",
    "connection_error",
    "error_message",
    "error_type",
    "problem",
    "request_id_of",
    "status_error",
    "stream_error",
]

MAX_EVENT_BYTES = 16 * 1024 * 1024
"""The largest single event accepted (a whole Write of a big file arrives in deltas, so no event is near this)."""
SERVER_ERROR_HINT = "The API failed on its side: try again shortly."
T = TypeVar("T")
_ERROR_TEXT_LIMIT = 300
"""How much of an error body that is not JSON (a proxy's HTML page) goes into the message."""


@dataclass(frozen=True)
class Endpoint:
    """Where a provider's requests go and what they carry."""

    base_url: str
    headers: Mapping[str, str]
    """Sent with every request: credentials, API version, user-agent."""
    base_url_variable: str
    """The setting that moves `base_url`, named when the server cannot be reached."""
    hints: Mapping[int, str]
    """What to do next, by HTTP status (a 5xx without one gets `SERVER_ERROR_HINT`)."""
    request_id_headers: tuple[str, ...] = ("request-id", "x-request-id")


class EventStream:
    """The events of one streamed response; faults while reading are `TransientModelError`s."""

    def __init__(
        self,
        response: httpx2.Response,
        timeouts: Timeouts,
        request_id: str | None,
        cancel: Cancellation | None = None,
    ) -> None:
        self._response = response
        self._timeouts = timeouts
        self._cancel = cancel
        self.request_id = request_id
        """The server's id for this response, for errors the provider finds in the events."""

    def __iter__(self) -> Iterator[ServerSentEvent]:
        return cancellable(self._events(), self._cancel)

    def _events(self) -> Iterator[ServerSentEvent]:
        import httpx2

        try:
            yield from httpx2.EventSource(self._response, max_event_size=MAX_EVENT_BYTES)
        except httpx2.TimeoutException as error:
            idle = self._timeouts.stream_idle
            raise self.fault(
                f"the stream sent nothing for {idle:g} s (streamIdleTimeoutSeconds)", "stream went silent"
            ) from error
        except httpx2.SSEError as error:
            raise self.fault(f"the stream sent an event it could not finish ({error})", "malformed stream") from error
        except httpx2.TransportError as error:
            raise self.fault(f"the connection dropped mid-stream ({problem(error)})", "connection dropped") from error

    def fault(self, message: str, fault: str) -> TransientModelError:
        """A retryable fault of this stream, carrying its request id."""
        return TransientModelError(message, fault=fault, request_id=self.request_id)

    def json_chunks(self, faults: Mapping[str, str], *, done: str | None = None) -> Iterator[JSON]:
        """Each event's data as a JSON object (events without data skipped), up to one whose data
        is `done` (OpenAI's `[DONE]`). A one-element array is read as the object in it (how Gemini
        sends an error). An object with an `error` is raised as `stream_error(…, faults)`;
        data that is not a JSON object is a malformed stream."""
        for event in self:
            data = event.data.strip()
            if done is not None and data == done:
                return
            if not data:
                continue
            try:
                chunk = json.loads(data)
            except (ValueError, RecursionError) as error:  # not JSON, or nested too deep to read
                raise self.fault(
                    f"the stream sent a chunk that is not valid JSON ({error})", "malformed stream"
                ) from None
            if isinstance(chunk, list) and len(chunk) == 1:
                chunk = chunk[0]
            if not isinstance(chunk, dict):
                raise self.fault(
                    f"the stream sent a chunk that is not a JSON object ({type(chunk).__name__})", "malformed stream"
                )
            if "error" in chunk:
                raise stream_error(chunk, faults, self.request_id)
            yield chunk


class HttpClient:
    """POSTs JSON to one endpoint over a kept connection and streams the answer's events."""

    def __init__(self, endpoint: Endpoint, timeouts: Timeouts) -> None:
        self.endpoint = endpoint
        self.timeouts = timeouts
        self._client: httpx2.Client | None = None

    def _http(self) -> httpx2.Client:
        import httpx2

        if self._client is None:
            self._client = httpx2.Client(
                base_url=self.endpoint.base_url,
                headers=dict(self.endpoint.headers),
                # read and write: the longest silence between two reads (or writes), stream events included
                timeout=httpx2.Timeout(self.timeouts.stream_idle, connect=self.timeouts.connect),
                trust_env=True,
                follow_redirects=False,
            )
        return self._client

    def close(self) -> None:
        """Close the connections (a new client is made if this one is used again)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    @contextmanager
    def stream(
        self, path: str, body: bytes, cancel: Cancellation | None = None, headers: Mapping[str, str] | None = None
    ) -> Iterator[EventStream]:
        """POST `body` (JSON) to `path` and yield the response's events; the response is closed on
        exit. Setting `cancel` ends the stream with `Cancelled` (see the module's docstring).
        `headers`: sent with this request only, beside the endpoint's (a key that changes)."""
        import httpx2

        client = self._http()
        request = client.build_request(
            "POST", path, content=body, headers={"content-type": "application/json", **(headers or {})}
        )
        try:
            response = client.send(request, stream=True)
        except httpx2.TransportError as error:
            raise connection_error(error, self.endpoint, self.timeouts) from error
        try:
            request_id = request_id_of(response, self.endpoint)
            if response.status_code >= 400:
                raise status_error(response, _body_text(response), self.endpoint, request_id)
            kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
            if kind != "text/event-stream":
                raise ModelAPIError(
                    f"The API answered with {kind or 'no content type'} instead of a stream of events "
                    f"(HTTP {response.status_code}). Check {self.endpoint.base_url_variable}.",
                    request_id=request_id,
                )
            with aborted_on(cancel, response):
                yield EventStream(response, self.timeouts, request_id, cancel)
        finally:
            response.close()


class LazyHttpClient:
    """The `HttpClient` of a provider, made at its first request (the endpoint reads the
    credentials only then) and again after `close`; shared by the threads of every agent using it."""

    def __init__(self, endpoint: Callable[[], Endpoint], timeouts: Timeouts) -> None:
        self._endpoint = endpoint
        self._timeouts = timeouts
        self._client: HttpClient | None = None
        self._lock = threading.Lock()

    def get(self) -> HttpClient:
        with self._lock:
            if self._client is None:
                self._client = HttpClient(self._endpoint(), self._timeouts)
            return self._client

    def close(self) -> None:
        """Close the connections; new ones are made if the provider is used again."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def cancellable(events: Iterator[T], cancel: Cancellation | None) -> Iterator[T]:
    """`events`; a fault after `cancel` was set (`aborted_on` shut the connection down) is `Cancelled`."""
    try:
        yield from events
    except TransientModelError:
        if cancel is not None and cancel.is_set():
            raise Cancelled("Interrupted by the user.") from None
        raise
    if cancel is not None and cancel.is_set():  # the connection shut down read as the stream's end
        raise Cancelled("Interrupted by the user.")


@contextmanager
def aborted_on(cancel: Cancellation | None, response: httpx2.Response) -> Iterator[None]:
    """While inside, setting `cancel` shuts `response`'s connection down (from the setting thread),
    so a read blocked on it returns at once; `Cancelled` at once if it is set already."""
    if cancel is None:
        yield
        return
    if cancel.is_set():
        raise Cancelled("Interrupted by the user.")
    network = response.extensions.get("network_stream")
    connection = network.get_extra_info("socket") if network is not None else None

    def shut_down() -> None:
        if isinstance(connection, socket.socket):
            with contextlib.suppress(OSError):  # closed already
                # socket.socket's own shutdown, also for a TLS socket: it leaves the TLS state to the reader
                socket.socket.shutdown(connection, socket.SHUT_RDWR)

    with cancel.when_set(shut_down):
        yield


def connection_error(
    error: httpx2.TransportError, endpoint: Endpoint, timeouts: Timeouts
) -> ModelAPIError | TransientModelError:
    """A request that got no response: the server unreachable (not retried), or the exchange broken off."""
    import httpx2

    if isinstance(error, httpx2.ConnectError | httpx2.ConnectTimeout):
        return ModelAPIError(
            f"Could not reach the API at {endpoint.base_url} ({problem(error)}). "
            f"Check {endpoint.base_url_variable} and your network."
        )
    if isinstance(error, httpx2.TimeoutException):
        return TransientModelError(
            f"the API sent no response for {timeouts.stream_idle:g} s (streamIdleTimeoutSeconds)", fault="no response"
        )
    return TransientModelError(
        f"the connection failed before the response came ({problem(error)})", fault="connection failed"
    )


def status_error(
    response: httpx2.Response, body: str, endpoint: Endpoint, request_id: str | None
) -> ModelAPIError | TransientModelError:
    """An HTTP error response with its `body`: retried (overloaded, rate limited…) or the end of the turn."""
    status, headers = response.status_code, response.headers
    text = f"API error {status}: {_body_message(body) or response.reason_phrase or 'no details'}"
    hint = endpoint.hints.get(status) or (SERVER_ERROR_HINT if status >= 500 else "")
    if should_retry(status, headers):
        return TransientModelError(
            text,
            fault=status_fault(status),
            retry_after=retry_after(headers),
            status=status,
            hint=hint,
            request_id=request_id,
        )
    return ModelAPIError(text, status=status, hint=hint, request_id=request_id)


def request_id_of(response: httpx2.Response, endpoint: Endpoint) -> str | None:
    """The server's id for `response`, from the first of `endpoint.request_id_headers` it sent."""
    return next((value for name in endpoint.request_id_headers if (value := response.headers.get(name))), None)


def stream_error(
    body: object, faults: Mapping[str, str], request_id: str | None = None
) -> ModelAPIError | TransientModelError:
    """An error reported inside a stream: retried when its type is one of `faults` (each named in
    a few words for the retry line) or has none; otherwise asking again cannot help."""
    kind = error_type(body)
    message = error_message(body) or "no details"
    if kind is None or kind in faults:
        fault = faults.get(kind or "", "stream error")
        return TransientModelError(f"the stream reported an error: {message}", fault=fault, request_id=request_id)
    return ModelAPIError(f"The stream reported an error ({kind}): {message}", request_id=request_id)


def error_message(value: object) -> str | None:
    """`error.message` of a parsed error body, if it has one."""
    error = value.get("error") if isinstance(value, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return str(message) if message else None


def error_type(value: object) -> str | None:
    """`error.type` (Anthropic, OpenAI) or `error.status` (Gemini) of a parsed error body."""
    error = value.get("error") if isinstance(value, dict) else None
    if isinstance(error, dict):
        kind = error.get("type") or error.get("status")
        if isinstance(kind, str):
            return kind
    return None


def _body_message(body: str) -> str:
    """What an error body says: its JSON's `error.message`, else the start of its text."""
    try:
        message = error_message(json.loads(body))
    except ValueError:
        message = None
    return message or " ".join(body.split())[:_ERROR_TEXT_LIMIT]


def _body_text(response: httpx2.Response) -> str:
    """The body of an error response; empty when it broke off (its status says enough)."""
    import httpx2

    try:
        response.read()
    except httpx2.TransportError:
        return ""
    return response.text


def problem(error: Exception) -> str:
    """`connection refused`, `timed out`…: what the transport said, without the errno noise."""
    import httpx2

    if isinstance(error, httpx2.TimeoutException):
        return "timed out"
    text = re.sub(r"^\[Errno -?\d+\]\s*", "", str(error)).strip().rstrip(".").lower()
    return text or type(error).__name__
