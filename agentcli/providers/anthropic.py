"""The Anthropic Messages API behind the `Model` seam, streaming with the official SDK.

The SDK is imported when the first request is made, never at start-up (it costs ~1.5 s).
Content blocks are rebuilt from the raw stream events as plain dicts, exactly as the
API sent them, so they can go back verbatim (thinking signatures included).

The SDK's own retries are off. A failure worth retrying (which ones:
`agentcli.providers.retry`) is raised as `TransientModelError`, with the server's
`retry-after` when it sent one, and the loop retries it where the user can see it.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING

from agentcli.contracts import JSON, ModelRequest, ModelResponse, StreamListener, Usage
from agentcli.credentials import MISSING_CREDENTIAL, AnthropicCredential, anthropic_credential
from agentcli.errors import ModelAPIError, TransientModelError
from agentcli.providers.retry import retry_after, should_retry, status_fault
from agentcli.providers.timeouts import Timeouts
from agentcli.tool_input import parse_tool_input

if TYPE_CHECKING:
    import anthropic
    from anthropic import Stream
    from anthropic.types import RawMessageStreamEvent

HINTS = {
    400: "The API rejected the request as malformed. Re-run with --verbose for details.",
    401: "Check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN): the server did not accept it.",
    403: "Your API key is not allowed to do this (model access or organisation permissions).",
    404: "Check the model name (--model / AGENTCLI_MODEL) and ANTHROPIC_BASE_URL.",
    413: "The request is too large: start a new conversation or trim what you attached.",
    429: "Rate limited: wait a minute and try again.",
    529: "The API is overloaded: try again shortly.",
}
SERVER_ERROR_HINT = "The API failed on its side: try again shortly."

STREAM_FAULTS = {
    "overloaded_error": "overloaded",
    "api_error": "server error",
    "rate_limit_error": "rate limited",
    "timeout_error": "timed out",
}
"""Error events inside a stream that are retried, and the words the retry line uses for them."""
MAX_BLOCKS = 10_000
"""More content blocks than any turn has: a larger index is a broken stream, not a reason to allocate."""


class AnthropicModel:
    """Streams turns from any Anthropic-compatible server (ANTHROPIC_BASE_URL)."""

    def __init__(
        self, *, api_key: str | None = None, base_url: str | None = None, timeouts: Timeouts | None = None
    ) -> None:
        self._api_key = api_key
        self._base_url = base_url
        self._timeouts = timeouts or Timeouts()
        self._client: anthropic.Anthropic | None = None

    def _sdk(self) -> anthropic.Anthropic:
        if self._client is None:
            import anthropic
            import httpx2

            credential = AnthropicCredential(self._api_key, None) if self._api_key else anthropic_credential()
            if credential is None:
                raise ModelAPIError(MISSING_CREDENTIAL)
            self._client = anthropic.Anthropic(
                api_key=credential.api_key,
                auth_token=credential.auth_token,
                base_url=self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
                max_retries=0,  # the loop retries, so that every retry is shown (providers.retry)
                # read: the longest silence between two reads of a response, stream events included
                timeout=httpx2.Timeout(self._timeouts.stream_idle, connect=self._timeouts.connect),
            )
        return self._client

    def close(self) -> None:
        """Close the HTTP connections (a new client is made if the model is used again)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        import anthropic
        import httpx2

        client = self._sdk()
        try:
            events: Stream[RawMessageStreamEvent] = client.messages.create(
                model=request.model,
                max_tokens=request.max_tokens,
                system=request.system,  # type: ignore[arg-type]
                tools=request.tools or anthropic.omit,  # type: ignore[arg-type]
                messages=request.messages,  # type: ignore[arg-type]
                stream=True,
            )  # type: ignore[assignment]
        except anthropic.APIStatusError as error:
            raise _status_error(error) from error
        except anthropic.APIConnectionError as error:
            problem = _connection_problem(error)
            if _never_connected(error):  # a wrong address or no network: retrying would only delay the news
                raise ModelAPIError(
                    f"Could not reach the API at {client.base_url} ({problem}). "
                    "Check ANTHROPIC_BASE_URL and your network."
                ) from error
            if isinstance(error, anthropic.APITimeoutError):
                idle = self._timeouts.stream_idle
                raise TransientModelError(
                    f"the API sent no response for {idle:g} s (streamIdleTimeoutSeconds)", fault="no response"
                ) from error
            raise TransientModelError(
                f"the connection failed before the response came ({problem})", fault="connection failed"
            ) from error
        assembler = _MessageAssembler(listener)
        try:
            with events:
                for event in events:
                    assembler.feed(_event_dict(event))
        except json.JSONDecodeError as error:  # a `data:` line cut short or garbled
            raise TransientModelError(
                f"the stream sent an event that is not valid JSON ({error})", fault="malformed stream"
            ) from error
        except anthropic.APIStatusError as error:
            kind = _error_type(error.body)
            if kind in STREAM_FAULTS or kind is None:
                raise TransientModelError(
                    f"the stream reported an error: {_api_message(error)}",
                    fault=STREAM_FAULTS.get(kind or "", "stream error"),
                ) from error
            raise _fatal(error) from error
        except (anthropic.APITimeoutError, httpx2.TimeoutException) as error:
            idle = self._timeouts.stream_idle
            raise TransientModelError(
                f"the stream sent nothing for {idle:g} s (streamIdleTimeoutSeconds)", fault="stream went silent"
            ) from error
        except (anthropic.APIConnectionError, httpx2.TransportError) as error:
            raise TransientModelError(
                f"the connection dropped mid-stream ({error})", fault="connection dropped"
            ) from error
        return assembler.finish()


class _MessageAssembler:
    """Rebuilds the assistant message from raw stream events.

    An event that does not fit the stream so far (a delta for a block that never started, a
    field missing or of the wrong type) is a stream fault: `TransientModelError`, and the
    loop asks again, as for a dropped connection.
    """

    def __init__(self, listener: StreamListener) -> None:
        self.listener = listener
        self.blocks: list[JSON] = []
        self.started: set[int] = set()
        self.partial_json: dict[int, str] = {}
        self.closed: set[int] = set()
        self.invalid_inputs: dict[str, str] = {}
        self.usage = Usage()
        self.stop_reason: str | None = None
        self.stopped = False

    def feed(self, event: JSON) -> None:
        kind = event.get("type")
        try:
            self._feed(kind, event)
        except (KeyError, TypeError, AttributeError, ValueError) as error:
            raise TransientModelError(
                f"the stream sent a malformed {kind} event ({error!r})", fault="malformed stream"
            ) from error

    def _feed(self, kind: object, event: JSON) -> None:
        if kind == "message_start":
            self._take_usage(event["message"].get("usage") or {})
        elif kind == "content_block_start":
            block = dict(event["content_block"])
            index = _block_index(event)
            self._place(index, block)
            if block.get("type") == "tool_use":
                self.partial_json[index] = ""
                self.listener.tool_call_started(str(block.get("name", "")))
        elif kind == "content_block_delta":
            index = self._started_index(event)
            self._apply_delta(self.blocks[index], index, event["delta"])
        elif kind == "content_block_stop":
            self._close(self._started_index(event))
        elif kind == "message_delta":
            self.stop_reason = event["delta"].get("stop_reason")
            self._take_usage(event.get("usage") or {})
        elif kind == "message_stop":
            self.stopped = True

    def _started_index(self, event: JSON) -> int:
        index = _block_index(event)
        if index not in self.started:
            raise TransientModelError(
                f"the stream sent a {event['type']} for content block {index}, which never started",
                fault="malformed stream",
            )
        return index

    def _place(self, index: int, block: JSON) -> None:
        while len(self.blocks) <= index:
            self.blocks.append({})
        self.blocks[index] = block
        self.started.add(index)

    def _apply_delta(self, block: JSON, index: int, delta: JSON) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
            self.listener.text(delta["text"])
        elif kind == "input_json_delta":
            self.partial_json[index] += str(delta.get("partial_json", ""))
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
        elif kind == "signature_delta":
            block["signature"] = delta["signature"]
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta["citation"])

    def _close(self, index: int) -> None:
        block = self.blocks[index]
        if index in self.partial_json:
            raw = self.partial_json.pop(index)
            try:
                block["input"], problem = parse_tool_input(raw)
            except json.JSONDecodeError:
                return  # left unclosed: treated as cut off
            if problem is not None:
                self.invalid_inputs[str(block.get("id"))] = problem
        elif block.get("type") == "text":
            self.listener.text("")  # the block is whole: a front end can show all of it now
        self.closed.add(index)

    def _take_usage(self, usage: JSON) -> None:
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
            if usage.get(name) is not None:
                setattr(self.usage, name, usage[name])
        if usage.get("output_tokens") is not None:
            self.usage.output_tokens = usage["output_tokens"]

    def finish(self) -> ModelResponse:
        if not self.stopped or self.stop_reason is None:
            raise TransientModelError("the stream ended before the message was complete", fault="stream cut short")
        incomplete = next((i for i in range(len(self.blocks)) if i not in self.closed), None)
        return ModelResponse(self.blocks, self.stop_reason, self.usage, incomplete, self.invalid_inputs)


def _event_dict(event: RawMessageStreamEvent) -> JSON:
    """A stream event as the plain dict the API sent."""
    value: object
    try:
        value = event.to_dict()
    except AttributeError:  # data the SDK could not type (a JSON list, a number) is passed on as it is
        value = event
    if not isinstance(value, dict):
        raise TransientModelError(
            f"the stream sent an event that is not a JSON object ({type(value).__name__})", fault="malformed stream"
        )
    return value


def _block_index(event: JSON) -> int:
    index = event["index"]
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < MAX_BLOCKS:
        raise TransientModelError(
            f"the stream sent a {event['type']} with an invalid index {index!r}", fault="malformed stream"
        )
    return index


def _connection_problem(error: anthropic.APIConnectionError) -> str:
    """`connection refused`, `timed out`…: what the transport said, without the errno noise."""
    import anthropic

    if isinstance(error, anthropic.APITimeoutError):
        return "timed out"
    cause = str(error.__cause__ or error)
    return re.sub(r"^\[Errno -?\d+\]\s*", "", cause).strip().rstrip(".").lower() or "connection error"


def _error_type(body: object) -> str | None:
    if isinstance(body, dict):
        error = body.get("error")
        kind = error.get("type") if isinstance(error, dict) else None
        if isinstance(kind, str):
            return kind
    return None


def _api_message(error: anthropic.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
        if message:
            return str(message)
    return str(error.message)


def _status_error(error: anthropic.APIStatusError) -> ModelAPIError | TransientModelError:
    """An HTTP error response: retried (overloaded, rate limited…) or the end of the turn."""
    status, headers = error.status_code, error.response.headers
    if not should_retry(status, headers):
        return _fatal(error)
    return TransientModelError(
        f"API error {status}: {_api_message(error)}",
        fault=status_fault(status),
        retry_after=retry_after(headers),
        status=status,
        hint=_hint(status),
    )


def _fatal(error: anthropic.APIStatusError) -> ModelAPIError:
    status = error.status_code
    return ModelAPIError(f"API error {status}: {_api_message(error)}", status=status, hint=_hint(status))


def _hint(status: int) -> str:
    return HINTS.get(status) or (SERVER_ERROR_HINT if status >= 500 else "")


def _never_connected(error: anthropic.APIConnectionError) -> bool:
    """True when no connection was made at all (refused, unknown host, connect timeout)."""
    import httpx2

    cause = error.__cause__
    for _ in range(8):  # a few links of the chain are enough (and a cycle ends)
        if cause is None:
            return False
        if isinstance(cause, httpx2.ConnectError | httpx2.ConnectTimeout):
            return True
        cause = cause.__cause__
    return False
