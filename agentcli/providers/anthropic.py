"""The Anthropic Messages API behind the `Model` seam: `POST /v1/messages`, `stream: true`, over
agentcli's own HTTP layer (`agentcli.providers.http`).

- **Where and who.** `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`); `x-api-key`
  with ANTHROPIC_API_KEY, else `Authorization: Bearer` with ANTHROPIC_AUTH_TOKEN, else both
  with the key `apiKeyHelper` prints (`agentcli.providers.key_helper`; after a 401 it is run
  again and the request sent once more);
  `anthropic-version`, `anthropic-beta` when betas are asked for, and the headers of
  `ANTHROPIC_CUSTOM_HEADERS` (one `Name: value` a line), which win, as the SDK let them.
- **The body** is assembled from JSON encoded once per message (`agentcli.providers.body`), with
  the prompt-cache breakpoints placed here (`agentcli.cache`): they are this API's business,
  not the loop's. Only the marked copies (a few blocks) are encoded afresh each turn.
- **Amazon Bedrock and Google Vertex AI** (`AGENTCLI_USE_BEDROCK=1`, `AGENTCLI_USE_VERTEX=1`)
  go through the `anthropic` SDK instead (`agentcli.providers.anthropic_cloud`), imported only
  then: it signs the requests and speaks those platforms' streams. Everything below is shared.
- **The answer.** Content blocks are rebuilt from the raw stream events as plain dicts, exactly
  as the API sent them, so they can go back verbatim (thinking signatures included). Only what
  an Anthropic-compatible server got wrong is mended (`agentcli.providers.call_repair`): a
  tool_use without a usable name becomes `invalid_tool_call`, and an id that is missing, unusable
  or already in the conversation a fresh `toolu_…` one; an input that is not JSON the API takes
  back (`NaN`, too deep) becomes `{}` (`agentcli.tool_input`); each such call gets an error result.
  Blocks of the API's own server tools (`server_tool_use`, `web_search_tool_result`) are kept as
  sent, and the searches it ran are counted (`usage.server_tool_use.web_search_requests`). An
  `error` event is retried when `STREAM_FAULTS` names its type, as are a dropped or silent
  stream and an event that does not parse (`TransientModelError`); the loop does the retrying,
  where the user sees it.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Protocol

from agentcli import __version__
from agentcli.bounds import token_count
from agentcli.cache import with_cache_breakpoints
from agentcli.contracts import JSON, Cancellation, ModelRequest, ModelResponse, StreamListener, Usage
from agentcli.credentials import MISSING_CREDENTIAL, AnthropicCredential, anthropic_credential, cloud_platform
from agentcli.errors import ModelAPIError, TransientModelError
from agentcli.providers.body import JsonFragments, encode, json_object
from agentcli.providers.call_repair import CallIds, ConversationIds, checked_name
from agentcli.providers.http import Endpoint, EventStream, HttpClient, stream_error
from agentcli.providers.key_helper import KeyHelper
from agentcli.providers.key_helper import headers as key_headers
from agentcli.providers.timeouts import Timeouts
from agentcli.tool_input import input_problem, parse_tool_input

DEFAULT_BASE_URL = "https://api.anthropic.com"
MESSAGES_PATH = "/v1/messages"
API_VERSION = "2026-10-21"
"""The `anthropic-version` sent (the one the SDK sent before; it rejects temperature, top_p and top_k)."""
HINTS = {
    400: "The API rejected the request as malformed. Re-run with --verbose for details.",
    401: "Check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN): the server did not accept it.",
    403: "Your API key is not allowed to do this (model access or organisation permissions).",
    404: "Check the model name (--model / AGENTCLI_MODEL) and ANTHROPIC_BASE_URL.",
    413: "The request is too large: start a new conversation or trim what you attached.",
    429: "Rate limited: wait a minute and try again.",
    529: "The API is overloaded: try again shortly.",
}
HELPER_KEY_REFUSED = "The server refused the key apiKeyHelper printed, also once run again: check the helper."

STREAM_FAULTS = {
    "overloaded_error": "overloaded",
    "api_error": "server error",
    "rate_limit_error": "rate limited",
    "timeout_error": "timed out",
}
"""Error events inside a stream that are retried, and the words the retry line uses for them."""
MAX_BLOCKS = 10_000
"""More content blocks than any turn has: a larger index is a broken stream, not a reason to allocate."""


class Route(Protocol):
    """How a request reaches the model: the raw stream events of its answer, as plain dicts."""

    def events(self, request: ModelRequest, cancel: Cancellation | None) -> AbstractContextManager[Iterator[JSON]]:
        """Setting `cancel` ends the events with `Cancelled` (`http.aborted_on`)."""
        ...

    def close(self) -> None: ...


class AnthropicModel:
    """Streams turns from any Anthropic-compatible server (ANTHROPIC_BASE_URL), or Bedrock or Vertex."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeouts: Timeouts | None = None,
        betas: Sequence[str] = (),
        key_helper: KeyHelper | None = None,
    ) -> None:
        """`key_helper`: where the key comes from when the environment holds none (`apiKeyHelper`)."""
        self._api_key = api_key
        self._key_helper = key_helper
        self._base_url = base_url
        self._timeouts = timeouts or Timeouts()
        self._betas = tuple(betas)
        self._route: Route | None = None
        self._ids = ConversationIds()
        self._lock = threading.Lock()

    def _connect(self) -> Route:
        with self._lock:
            if self._route is None:
                platform = cloud_platform() if self._api_key is None and self._base_url is None else None
                if platform is not None:
                    from agentcli.providers.anthropic_cloud import cloud_route

                    self._route = cloud_route(platform, self._timeouts, self._betas)
                else:
                    self._route = self._direct_route()
            return self._route

    def _direct_route(self) -> DirectRoute:
        credential = AnthropicCredential(self._api_key, None) if self._api_key else anthropic_credential()
        helper = self._key_helper if credential is None else None
        if helper is None and (credential is None or not (credential.api_key or credential.auth_token)):
            raise ModelAPIError(MISSING_CREDENTIAL)
        endpoint = Endpoint(
            base_url=(self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/"),
            headers=request_headers(credential or AnthropicCredential(None, None), self._betas),
            base_url_variable="ANTHROPIC_BASE_URL",
            hints=HINTS if helper is None else {**HINTS, 401: HELPER_KEY_REFUSED},
        )
        return DirectRoute(endpoint, self._timeouts, helper)

    def close(self) -> None:
        """Close the HTTP connections (new ones are made if the model is used again)."""
        with self._lock:
            if self._route is not None:
                self._route.close()
                self._route = None

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        assembler = _MessageAssembler(listener, request, CallIds(lambda: self._ids.taken(request.messages), "toolu_"))
        with self._connect().events(with_cache_breakpoints(request), listener.cancel) as events:
            for event in events:
                assembler.feed(event)
        return assembler.finish()


class DirectRoute:
    """The Messages API over our own HTTP layer; with a `key_helper`, each request carries its
    current key, and a request refused with a 401 is sent once more with a new one."""

    def __init__(self, endpoint: Endpoint, timeouts: Timeouts, key_helper: KeyHelper | None = None) -> None:
        self._http = HttpClient(endpoint, timeouts)
        self._fragments = JsonFragments()
        self._key_helper = key_helper
        self._fixed = frozenset(custom_headers())
        """Headers ANTHROPIC_CUSTOM_HEADERS sets, which win over the helper's, as over every other."""

    @contextmanager
    def events(self, request: ModelRequest, cancel: Cancellation | None) -> Iterator[Iterator[JSON]]:
        body = self.body(request)
        if self._key_helper is None:
            with self._http.stream(MESSAGES_PATH, body, cancel) as stream:
                yield _decoded(stream)
            return
        with ExitStack() as opened:
            key = self._key_helper.key()
            try:
                stream = opened.enter_context(self._http.stream(MESSAGES_PATH, body, cancel, self._keyed(key)))
            except ModelAPIError as error:
                if error.status != 401:
                    raise
                key = self._key_helper.refreshed(key)
                stream = opened.enter_context(self._http.stream(MESSAGES_PATH, body, cancel, self._keyed(key)))
            yield _decoded(stream)

    def _keyed(self, key: str) -> dict[str, str]:
        return {name: value for name, value in key_headers(key).items() if name not in self._fixed}

    def body(self, request: ModelRequest) -> bytes:
        """The request as JSON: what `messages.create(..., stream=True)` of the SDK sent, each message encoded once."""
        fields: list[tuple[str, str | list[bytes]]] = [
            ("model", encode(request.model)),
            ("max_tokens", encode(request.max_tokens)),
            ("system", self._fragments.array(request.system)),
        ]
        if request.tools:
            fields.append(("tools", self._fragments.array(request.tools)))
        fields += [("messages", self._fragments.array(request.messages)), ("stream", "true")]
        self._fragments.next_request()
        return json_object(fields)

    def close(self) -> None:
        self._http.close()


def request_headers(credential: AnthropicCredential, betas: Sequence[str] = ()) -> dict[str, str]:
    """The headers every request carries."""
    headers = {"user-agent": f"agentcli/{__version__}", "anthropic-version": API_VERSION, "accept": "application/json"}
    if credential.api_key:
        headers["x-api-key"] = credential.api_key
    elif credential.auth_token:
        headers["authorization"] = f"Bearer {credential.auth_token}"
    if betas:
        headers["anthropic-beta"] = ",".join(betas)
    return {**headers, **custom_headers()}


def custom_headers(value: str | None = None) -> dict[str, str]:
    """`ANTHROPIC_CUSTOM_HEADERS`: one `Name: value` a line; lines without a colon are skipped."""
    text = os.environ.get("ANTHROPIC_CUSTOM_HEADERS", "") if value is None else value
    headers: dict[str, str] = {}
    for line in text.splitlines():
        name, colon, rest = line.partition(":")
        if colon and name.strip():
            headers[name.strip().lower()] = rest.strip()
    return headers


def _decoded(stream: EventStream) -> Iterator[JSON]:
    """The stream's events as the dicts the API sent; an `error` event raised as one of our errors."""
    for event in stream:
        if event.event == "ping":
            continue
        try:
            data = json.loads(event.data)
        except (ValueError, RecursionError) as error:  # a `data:` line cut short or garbled, or nested too deep
            raise stream.fault(
                f"the stream sent an event that is not valid JSON ({error})", "malformed stream"
            ) from None
        if not isinstance(data, dict):
            raise stream.fault(
                f"the stream sent an event that is not a JSON object ({type(data).__name__})", "malformed stream"
            )
        if event.event == "error" or data.get("type") == "error":
            raise stream_error(data, STREAM_FAULTS, stream.request_id)
        yield data


class _MessageAssembler:
    """Rebuilds the assistant message from raw stream events.

    An event that does not fit the stream so far (a delta for a block that never started, a
    field missing or of the wrong type) is a stream fault: `TransientModelError`, and the
    loop asks again, as for a dropped connection.
    """

    def __init__(self, listener: StreamListener, request: ModelRequest, ids: CallIds) -> None:
        self.listener = listener
        self.tools = request.tools
        self.ids = ids
        self.blocks: list[JSON] = []
        self.started: set[int] = set()
        self.partial_json: dict[int, list[str]] = {}
        self.pieces: dict[tuple[int, str], list[str]] = {}
        """The deltas of each open block's `text` or `thinking`, joined into it when it closes (adding
        each to the block's string would copy all of it per delta: quadratic in a long answer)."""
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
                self._check_call(block)
                self.partial_json[index] = []
                self.listener.tool_call_started(block["name"])
            elif block.get("type") == "server_tool_use":  # a search the API runs itself: kept as sent
                self.partial_json[index] = []
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

    def _check_call(self, block: JSON) -> None:
        """Give a call a usable id and name (`agentcli.providers.call_repair`) before anything is keyed by its id."""
        block["id"] = self.ids.claim(block.get("id"))
        block["name"], problem = checked_name(block.get("name"), self.tools)
        if problem is not None:
            self.invalid_inputs[block["id"]] = problem

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
        for field in ("text", "thinking"):
            self.pieces.pop((index, field), None)  # a block started again starts from its new start

    def _apply_delta(self, block: JSON, index: int, delta: JSON) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            self._add(index, "text", delta["text"])
            self.listener.text(delta["text"])
        elif kind == "input_json_delta":
            self.partial_json[index].append(str(delta.get("partial_json", "")))
        elif kind == "thinking_delta":
            self._add(index, "thinking", delta["thinking"])
        elif kind == "signature_delta":
            block["signature"] = delta["signature"]
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta["citation"])

    def _add(self, index: int, field: str, piece: object) -> None:
        if not isinstance(piece, str):
            raise TypeError(f"its {field} is {type(piece).__name__}, not a string")
        self.pieces.setdefault((index, field), []).append(piece)

    def _join(self, index: int) -> None:
        """Put the deltas of block `index` into it."""
        block = self.blocks[index]
        for field in ("text", "thinking"):
            if pieces := self.pieces.pop((index, field), None):
                block[field] = block.get(field, "") + "".join(pieces)

    def _close(self, index: int) -> None:
        self._join(index)
        block = self.blocks[index]
        if index in self.partial_json:
            raw = "".join(self.partial_json.pop(index))
            if not raw.strip() and block.get(
                "input"
            ):  # came whole with the start: a server tool's, some servers' calls
                given = block["input"]
                problem = input_problem(given) if block.get("type") == "tool_use" else None
                parsed = given if problem is None else {}
            else:
                try:
                    parsed, problem = parse_tool_input(raw)
                except json.JSONDecodeError:
                    return  # left unclosed: treated as cut off
            block["input"] = parsed
            if problem is not None and block.get("type") == "tool_use":
                self.invalid_inputs.setdefault(block["id"], problem)
        elif block.get("type") == "text":
            self.listener.text("")  # the block is whole: a front end can show all of it now
        self.closed.add(index)

    def _take_usage(self, usage: JSON) -> None:
        """A count given replaces the one before (`message_delta` repeats or revises `message_start`'s),
        clamped to a whole number of tokens (`bounds.token_count`): a garbled one costs no answer."""
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"):
            if usage.get(name) is not None:
                setattr(self.usage, name, token_count(usage[name]))
        server = usage.get("server_tool_use")
        if isinstance(server, dict) and server.get("web_search_requests") is not None:
            self.usage.web_search_requests = token_count(server["web_search_requests"])

    def finish(self) -> ModelResponse:
        if not self.stopped or self.stop_reason is None:
            raise TransientModelError("the stream ended before the message was complete", fault="stream cut short")
        for index in range(len(self.blocks)):
            try:
                self._join(index)  # a block cut off keeps what came of it
            except TypeError as error:
                raise TransientModelError(
                    f"the stream sent a malformed content block ({error!r})", fault="malformed stream"
                ) from error
        incomplete = next((i for i in range(len(self.blocks)) if i not in self.closed), None)
        return ModelResponse(self.blocks, self.stop_reason, self.usage, incomplete, self.invalid_inputs)


def _block_index(event: JSON) -> int:
    index = event["index"]
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < MAX_BLOCKS:
        raise TransientModelError(
            f"the stream sent a {event['type']} with an invalid index {index!r}", fault="malformed stream"
        )
    return index
