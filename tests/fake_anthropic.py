"""A fake Anthropic Messages API server for wire-level tests.

Real HTTP and real server-sent events on 127.0.0.1, so the real ``anthropic`` SDK (or any
other client) can be pointed at it with ``base_url`` / ``ANTHROPIC_BASE_URL``::

    with FakeAnthropic() as api:
        api.script(
            reply(text("Let me look."), tool_use("Read", {"file_path": "a.txt"}, id="toolu_1")),
            http_error(529, OVERLOADED_ERROR, headers={"retry-after": "0"}),
            reply(text("done")),
        )
        ...  # run the client against api.url
        assert api.requests[-1].body["messages"][-1]["role"] == "user"

Each ``POST /v1/messages`` that passes validation consumes one scripted entry, as does a
``POST`` to Vertex AI's ``…/publishers/anthropic/models/{model}:streamRawPredict`` (the model in
the path, ``anthropic_version`` in the body, a bearer token). Requests
are checked first, and a malformed conversation gets the same 400 the real API gives
(see :func:`validation_error`); a rejected request does not consume an entry. Prompt
caching is simulated (see :class:`PromptCache`) so tests can measure cache hits. The web search
server tool is run from the script (:func:`web_search`): its ``server_tool_use`` and
``web_search_tool_result`` blocks stream as the API sends them, the searches are counted in
the usage, and a request must offer the tool for a reply that searches.

Only the standard library is used.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import select
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

from tests import fake_server
from tests.fake_server import FakeHandler, FakeServer, HttpError, JSONObject, http_error

__all__ = [
    "OVERLOADED_ERROR",
    "FakeAnthropic",
    "HttpError",
    "PromptCache",
    "RecordedRequest",
    "Reply",
    "ScriptEntry",
    "TextBlock",
    "ThinkingBlock",
    "ToolUseBlock",
    "WebSearchBlock",
    "http_error",
    "reply",
    "text",
    "thinking",
    "tool_use",
    "validation_error",
    "web_search",
]

OVERLOADED_ERROR: Final[JSONObject] = {
    "type": "error",
    "error": {"type": "overloaded_error", "message": "Overloaded"},
}
"""The body of a 529 response, and of the ``error`` event sent by ``reply(error_after=N)``."""

MESSAGES_PATH: Final = "/v1/messages"
COUNT_TOKENS_PATH: Final = "/v1/messages/count_tokens"
VERTEX_PATH: Final = re.compile(
    r"^/v1/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/([^/:]+):streamRawPredict$"
)
"""Vertex AI's streaming route; the group is the model."""
MAX_CACHE_BREAKPOINTS: Final = 4
CACHE_LOOKBACK_BLOCKS: Final = 20
_SAMPLING_PARAMS: Final = ("temperature", "top_p", "top_k")
_TOOL_NAME_PATTERN: Final = "^[a-zA-Z0-9_-]{1,128}$"
_TOOL_NAME_RE: Final = re.compile(_TOOL_NAME_PATTERN)
_TOOL_USE_ID_PATTERN: Final = "^[a-zA-Z0-9_-]+$"
_TOOL_USE_ID_RE: Final = re.compile(_TOOL_USE_ID_PATTERN)


# --------------------------------------------------------------------------- script


@dataclass(frozen=True)
class TextBlock:
    """A text content block, streamed as ``text_delta`` chunks."""

    text: str


@dataclass(frozen=True)
class ToolUseBlock:
    """A tool_use block, streamed as ``input_json_delta`` chunks of its JSON input.

    ``partial=True`` streams only the first half of the JSON, as when ``max_tokens``
    cuts the model off in the middle of a tool call. ``raw_json`` is streamed instead of
    ``input``'s JSON when set: an input a real model would not send (a list, nesting
    100,000 levels deep, ``NaN``). ``name`` and ``id`` may be what a broken server sends
    (an empty string, a number; a ``None`` name is left out). ``input_at_start=True`` sends
    the input whole in ``content_block_start`` and no deltas, as some Anthropic-compatible
    servers do (the API itself starts with ``{}`` and streams the JSON).
    """

    name: Any
    input: Mapping[str, Any]
    id: Any
    partial: bool = False
    raw_json: str | None = None
    input_at_start: bool = False


@dataclass(frozen=True)
class ThinkingBlock:
    """A thinking block, streamed as ``thinking_delta`` chunks then a ``signature_delta``."""

    thinking: str
    signature: str


@dataclass(frozen=True)
class WebSearchBlock:
    """A search the API ran itself (the web search server tool): a ``server_tool_use`` block,
    its ``query`` streamed as ``input_json_delta`` chunks, then the ``web_search_tool_result``
    block with ``results`` (title, url) whole, or with the error ``error_code``."""

    query: str
    results: tuple[tuple[str, str], ...]
    id: str
    error_code: str | None = None


Block = TextBlock | ToolUseBlock | ThinkingBlock | WebSearchBlock
SERVER_TOOL_TYPES: Final = {"web_search_20250305": "web_search", "web_search_20260209": "web_search"}
"""The server tools the fake runs: type → the name it must have."""


@dataclass(frozen=True)
class Reply:
    """A scripted successful response; build it with :func:`reply`."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    usage: Mapping[str, int] | None = None
    error_after: int | None = None
    drop_after: int | None = None
    delay: float = 0.0
    chunk: int = 8
    stall_after: int | None = None
    garble_after: int | None = None
    stray_delta_after: int | None = None

    def final_stop_reason(self) -> str:
        """The explicit stop reason, else ``max_tokens``/``tool_use``/``end_turn``."""
        if self.stop_reason is not None:
            return self.stop_reason
        if any(isinstance(b, ToolUseBlock) and b.partial for b in self.blocks):
            return "max_tokens"
        if any(isinstance(b, ToolUseBlock) for b in self.blocks):
            return "tool_use"
        return "end_turn"


def text(value: str) -> TextBlock:
    """A text block for :func:`reply`."""
    return TextBlock(value)


def tool_use(
    name: Any,
    input: Mapping[str, Any],
    *,
    id: Any = None,
    partial: bool = False,
    raw_json: str | None = None,
    input_at_start: bool = False,
) -> ToolUseBlock:
    """A tool_use block for :func:`reply`; ``id`` defaults to a fresh ``toolu_…`` id.

    ``raw_json`` is the input's JSON text exactly as streamed, for inputs a real model would
    not send: ``tool_use("Bash", {}, raw_json="[1, 2]")``. Streamed replies only.
    ``input_at_start``: the input comes whole with the block's start, with no deltas.
    """
    call_id = _new_id("toolu_") if id is None else id
    return ToolUseBlock(name, dict(input), call_id, partial, raw_json, input_at_start)


def web_search(query: str, results: Sequence[tuple[str, str]] = (), *, error_code: str | None = None) -> WebSearchBlock:
    """A server-side web search for :func:`reply`: results as (title, url) pairs, or an error
    (``max_uses_exceeded``, ``too_many_requests``…). Counted in the usage's
    ``server_tool_use.web_search_requests``. The request must offer the web_search tool."""
    return WebSearchBlock(query, tuple(results), _new_id("srvtoolu_"), error_code)


def thinking(value: str, signature: str | None = None) -> ThinkingBlock:
    """A thinking block for :func:`reply`; ``signature`` defaults to a fresh opaque string."""
    return ThinkingBlock(value, signature or _new_id("sig_"))


def reply(
    *blocks: Block,
    stop_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
    error_after: int | None = None,
    drop_after: int | None = None,
    delay: float = 0.0,
    chunk: int = 8,
    stall_after: int | None = None,
    garble_after: int | None = None,
    stray_delta_after: int | None = None,
) -> Reply:
    """A scripted streamed response.

    Args:
        blocks: content blocks, streamed in order.
        stop_reason: defaults to ``tool_use`` if a tool_use block is present (``max_tokens``
            if one is partial), else ``end_turn``.
        usage: overrides for the simulated usage (``input_tokens``, ``output_tokens``, ...).
        error_after: after this many content deltas send an ``error`` event
            (overloaded_error) and end the response; the HTTP status stays 200.
        drop_after: after this many content deltas close the connection abruptly.
        delay: seconds to sleep before each content delta.
        chunk: characters per text/thinking/JSON delta.
        stall_after: after this many content deltas send nothing more, keeping the
            connection open until the client hangs up (or the server stops).
        garble_after: after this many content deltas send one event whose ``data:`` line is
            cut off mid-JSON, then go on with the rest of the stream.
        stray_delta_after: after this many content deltas send a delta for a content block
            index that never started, then go on with the rest of the stream.
    """
    if chunk < 1:
        raise ValueError("chunk must be at least 1")
    return Reply(
        tuple(blocks),
        stop_reason,
        usage,
        error_after,
        drop_after,
        delay,
        chunk,
        stall_after,
        garble_after,
        stray_delta_after,
    )


@dataclass
class RecordedRequest(fake_server.RecordedRequest):
    """One HTTP request the fake received, whether it was served or rejected."""

    method: str = "POST"
    raw: bytes = b""
    received_at: float = field(default_factory=time.monotonic)
    """``time.monotonic()`` when the request arrived."""
    usage: dict[str, int] | None = None
    """The usage reported to the client, for served replies."""
    disconnected: bool = False
    """True if the client hung up before the response was fully written."""
    answered: bool = False
    """True once the fake is done with the request: the response written, or cut off as scripted."""
    request_id: str = ""
    """The ``request-id`` header of the response (set once the response started)."""


ScriptEntry = Reply | HttpError | Callable[[RecordedRequest], Reply | HttpError]
"""A scripted reply, an HTTP error, or a callable computing either from the request."""


# --------------------------------------------------------------------------- validation


class ApiError(fake_server.ApiError):
    """An error response: HTTP status, error type and message."""

    def body(self) -> JSONObject:
        """The JSON body the real API sends for this error."""
        return {
            "type": "error",
            "error": {"type": self.kind, "message": self.message},
            "request_id": _new_id("req_"),
        }


def _invalid(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


def validation_error(body: Mapping[str, Any], *, count_tokens: bool = False) -> str | None:
    """The message of the 400 the real API gives for this request body, or None if valid.

    Usable on its own to check a conversation a client builds, without a server.
    """
    try:
        _validate(body, count_tokens=count_tokens)
    except ApiError as err:
        return err.message
    return None


def _validate(body: Mapping[str, Any], *, count_tokens: bool = False) -> None:
    _check_strict_json(body)
    _check_required_fields(body, need_max_tokens=not count_tokens)
    _check_sampling_params(body)
    _check_tools(body.get("tools"))
    messages = cast(list[Any], body["messages"])
    _check_message_shapes(messages)
    _check_system(body.get("system"))
    messages = [m for m in messages if m["role"] != "system"]  # instructions from that point on: no turn of their own
    _check_non_empty_content(messages)
    _check_tool_pairing(messages)
    _check_cache_control_count(body)


def _check_strict_json(body: Mapping[str, Any]) -> None:
    """A body given as a value (not bytes) must still be one JSON can carry: no NaN or Infinity."""
    try:
        json.dumps(body, allow_nan=False)
    except (ValueError, RecursionError):
        raise _invalid("There was an error parsing the body of your request as JSON.") from None


def _check_required_fields(body: Mapping[str, Any], *, need_max_tokens: bool) -> None:
    required = ("model", "max_tokens", "messages") if need_max_tokens else ("model", "messages")
    for name in required:
        if name not in body:
            raise _invalid(f"{name}: Field required")
    if not isinstance(body["model"], str) or not body["model"]:
        raise _invalid("model: Input should be a valid string")
    if need_max_tokens:
        max_tokens = body["max_tokens"]
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            raise _invalid("max_tokens: Input should be a valid integer")
        if max_tokens < 0:
            raise _invalid("max_tokens: Input should be greater than or equal to 0")
    if not isinstance(body["messages"], list):
        raise _invalid("messages: Input should be a valid list")
    if not body["messages"]:
        raise _invalid("messages: List should have at least 1 item after validation, not 0")


def _check_sampling_params(body: Mapping[str, Any]) -> None:
    for name in _SAMPLING_PARAMS:
        if name in body:
            raise _invalid(f"`{name}` is deprecated for this model.")


def _check_tools(tools: object) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise _invalid("tools: Input should be a valid list")
    names: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise _invalid(f"tools.{i}: Input should be a valid dictionary")
        if "type" in tool and tool["type"] != "custom":
            _check_server_tool(i, tool)
        name = tool.get("name")
        if not isinstance(name, str) or not _TOOL_NAME_RE.match(name):
            raise _invalid(f"tools.{i}.custom.name: String should match pattern '{_TOOL_NAME_PATTERN}'")
        if name in names:
            raise _invalid("tools: Tool names must be unique.")
        names.add(name)


def _check_server_tool(i: int, tool: JSONObject) -> None:
    kind = tool["type"]
    if kind not in SERVER_TOOL_TYPES:
        raise _invalid(f"tools.{i}: Input tag '{kind}' found using 'type' does not match any of the expected tags")
    if tool.get("name") != SERVER_TOOL_TYPES[kind]:
        raise _invalid(f"tools.{i}.{kind}.name: Input should be '{SERVER_TOOL_TYPES[kind]}'")
    uses = tool.get("max_uses")
    if uses is not None and (type(uses) is not int or uses < 1):
        raise _invalid(f"tools.{i}.{kind}.max_uses: Input should be greater than 0")
    if tool.get("allowed_domains") and tool.get("blocked_domains"):
        raise _invalid(f"tools.{i}.{kind}: cannot specify both allowed_domains and blocked_domains")


def _check_message_shapes(messages: list[Any]) -> None:
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise _invalid(f"messages.{i}: Input should be a valid dictionary")
        if message.get("role") not in ("user", "assistant", "system"):
            raise _invalid(f"messages.{i}.role: Input should be 'user', 'assistant' or 'system'")
        if "content" not in message:
            raise _invalid(f"messages.{i}.content: Field required")
        content = message["content"]
        if not isinstance(content, (str, list)):
            raise _invalid(f"messages.{i}.content: Input should be a valid string or list")
        text_only = isinstance(content, str) or all(isinstance(b, dict) and b.get("type") == "text" for b in content)
        if message["role"] == "system" and not text_only:
            raise _invalid(f"messages.{i}.content: a system message holds text blocks only")
        if isinstance(content, list):
            for k, block in enumerate(content):
                if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                    raise _invalid(f"messages.{i}.content.{k}: Input should be a valid content block")
    if messages[0]["role"] != "user":
        raise _invalid('messages: first message must use the "user" role')


def _check_system(system: object) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise _invalid("system: Input should be a valid string or list")
    for block in system:
        if isinstance(block, dict) and block.get("type") == "text" and block.get("text") == "":
            raise _invalid("system: text content blocks must be non-empty")


def _check_non_empty_content(messages: list[Any]) -> None:
    last = len(messages) - 1
    for i, message in enumerate(messages):
        final_assistant = i == last and message["role"] == "assistant"
        if message["content"] == [] and not final_assistant:
            raise _invalid(
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        blocks = _blocks(message["content"])
        if any(block.get("text") == "" for block in _texts(blocks)):
            raise _invalid("messages: text content blocks must be non-empty")
        if final_assistant:
            _check_final_assistant_text(blocks)


def _check_final_assistant_text(blocks: list[JSONObject]) -> None:
    texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
    if any(not t.strip() for t in texts):
        raise _invalid("messages: text content blocks must contain non-whitespace text")
    if blocks and blocks[-1].get("type") == "text" and texts[-1] != texts[-1].rstrip():
        raise _invalid("messages: final assistant content cannot end with trailing whitespace")


def _check_tool_pairing(messages: list[Any]) -> None:
    seen_tool_use_ids: set[str] = set()
    for i, message in enumerate(messages):
        blocks = _blocks(message["content"])
        if message["role"] == "assistant":
            _check_server_results(i, blocks)
            ids = _collect_tool_uses(i, blocks, seen_tool_use_ids)
            if ids:
                _check_answered(i, ids, messages)
        else:
            previous = messages[i - 1] if i > 0 else None
            expected = _tool_use_ids(previous) if previous and previous["role"] == "assistant" else []
            _check_tool_results(i, blocks, expected)


def _check_server_results(i: int, blocks: list[JSONObject]) -> None:
    """A server tool's result answers a server_tool_use earlier in the same message."""
    started: set[str] = set()
    for k, block in enumerate(blocks):
        if block["type"] == "server_tool_use":
            started.add(str(block.get("id")))
        elif block["type"] == "web_search_tool_result" and str(block.get("tool_use_id")) not in started:
            raise _invalid(
                f"messages.{i}.content.{k}: `web_search_tool_result` block(s) provided when previous message "
                "does not contain a corresponding `server_tool_use` block"
            )


def _collect_tool_uses(i: int, blocks: list[JSONObject], seen: set[str]) -> list[str]:
    ids: list[str] = []
    for k, block in enumerate(blocks):
        if block["type"] != "tool_use":
            continue
        if not isinstance(block.get("input"), dict):
            raise _invalid(f"messages.{i}.content.{k}.tool_use.input: Input should be a valid dictionary")
        if not isinstance(block.get("name"), str) or not _TOOL_NAME_RE.match(block["name"]):
            raise _invalid(
                f"messages.{i}.content.{k}.tool_use.name: String should match pattern '{_TOOL_NAME_PATTERN}'"
            )
        if not isinstance(block.get("id"), str) or not _TOOL_USE_ID_RE.match(block["id"]):
            raise _invalid(
                f"messages.{i}.content.{k}.tool_use.id: String should match pattern '{_TOOL_USE_ID_PATTERN}'"
            )
        tool_use_id = str(block.get("id", ""))
        if tool_use_id in seen:
            raise _invalid(f"messages.{i}.content.{k}: `tool_use` ids must be unique")
        seen.add(tool_use_id)
        ids.append(tool_use_id)
    return ids


def _check_answered(i: int, ids: list[str], messages: list[Any]) -> None:
    following = messages[i + 1] if i + 1 < len(messages) else None
    answered: set[str] = set()
    if following is not None and following["role"] == "user":
        answered = {str(b.get("tool_use_id")) for b in _blocks(following["content"]) if b["type"] == "tool_result"}
    missing = [tool_use_id for tool_use_id in ids if tool_use_id not in answered]
    if missing:
        raise _invalid(
            f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
            f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
            "`tool_result` block in the next message."
        )


def _check_tool_results(i: int, blocks: list[JSONObject], expected: list[str]) -> None:
    answered: set[str] = set()
    for k, block in enumerate(blocks):
        if block["type"] != "tool_result":
            continue
        tool_use_id = str(block.get("tool_use_id"))
        if tool_use_id not in expected:
            raise _invalid(
                f"messages.{i}.content.{k}: unexpected `tool_use_id` found in `tool_result` "
                f"blocks: {tool_use_id}. Each `tool_result` block must have a corresponding "
                "`tool_use` block in the previous message."
            )
        if tool_use_id in answered:
            raise _invalid(
                f"messages.{i}.content.{k}: each tool_use must have a single result. "
                f"Found multiple `tool_result` blocks with id: {tool_use_id}"
            )
        answered.add(tool_use_id)
    if expected and not _tool_results_come_first(blocks):
        raise _invalid(
            f"messages.{i}: Did not find {len(expected)} `tool_result` block(s) at the beginning "
            "of this message. Messages following `tool_use` blocks must begin with a matching "
            "number of `tool_result` blocks."
        )


def _tool_results_come_first(blocks: list[JSONObject]) -> bool:
    kinds = [b["type"] == "tool_result" for b in blocks]
    return kinds == sorted(kinds, reverse=True)


def _check_cache_control_count(body: Mapping[str, Any]) -> None:
    found = sum(1 for block in _cacheable_blocks(body) if block.get("cache_control"))
    if body.get("cache_control"):
        found += 1
    if found > MAX_CACHE_BREAKPOINTS:
        raise _invalid(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {found}."
        )


def _blocks(content: object) -> list[JSONObject]:
    """Message content as a list of blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in cast(list[Any], content) if isinstance(b, dict)]


def _nested(block: JSONObject) -> list[JSONObject]:
    """The content blocks inside a tool_result block."""
    inner = block.get("content")
    if block.get("type") == "tool_result" and isinstance(inner, list):
        return [b for b in inner if isinstance(b, dict)]
    return []


def _texts(blocks: list[JSONObject]) -> Iterator[JSONObject]:
    for block in blocks:
        if block.get("type") == "text":
            yield block
        yield from (b for b in _nested(block) if b.get("type") == "text")


def _tool_use_ids(message: Mapping[str, Any]) -> list[str]:
    return [str(b.get("id")) for b in _blocks(message["content"]) if b.get("type") == "tool_use"]


def _cacheable_blocks(body: Mapping[str, Any]) -> Iterator[JSONObject]:
    """Every block that may carry cache_control: tools, system, message content."""
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            yield tool
    system = body.get("system")
    if isinstance(system, list):
        yield from (b for b in system if isinstance(b, dict))
    for message in body["messages"]:
        for block in _blocks(message["content"]):
            yield block
            yield from _nested(block)


# --------------------------------------------------------------------------- prompt caching


@dataclass(frozen=True)
class _Segment:
    tokens: int
    prefix_hash: str
    breakpoint: bool


class PromptCache:
    """Simulated prompt caching, shared by all requests to one fake server.

    The prompt is the ordered sequence tools -> system blocks -> message content blocks,
    each costing ``ceil(len(canonical JSON) / 4)`` tokens. Every block with
    ``cache_control`` (and the last block, if the request has top-level ``cache_control``)
    is a breakpoint. A request reads from cache the longest prefix, ending at most
    ``CACHE_LOOKBACK_BLOCKS`` blocks before one of its breakpoints, that an earlier
    request stored; it writes everything from there up to its last breakpoint, and stores
    the prefix at each breakpoint. Prefixes shorter than ``min_tokens`` are not cached.
    """

    def __init__(self, min_tokens: int = 0) -> None:
        self.min_tokens = min_tokens
        self._stored: set[str] = set()
        self._lock = threading.Lock()

    def account(self, body: Mapping[str, Any]) -> dict[str, int]:
        """Usage for this request (without output tokens), storing its breakpoints."""
        segments = _segments(body)
        totals = _running_totals(segments)
        total = totals[-1] if totals else 0
        breakpoints = [i for i, s in enumerate(segments) if s.breakpoint and totals[i] >= max(self.min_tokens, 1)]
        if not breakpoints:
            return _usage(total, 0, 0)
        with self._lock:
            hit = self._longest_stored_prefix(segments, breakpoints)
            self._stored.update(segments[i].prefix_hash for i in breakpoints)
        read = totals[hit] if hit >= 0 else 0
        written = totals[breakpoints[-1]] - read
        return _usage(total - read - written, written, read)

    def _longest_stored_prefix(self, segments: list[_Segment], breakpoints: list[int]) -> int:
        candidates = {j for bp in breakpoints for j in range(max(0, bp - CACHE_LOOKBACK_BLOCKS), bp + 1)}
        stored = [j for j in candidates if segments[j].prefix_hash in self._stored]
        return max(stored, default=-1)


def _usage(input_tokens: int, creation: int, read: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": creation,
        "cache_read_input_tokens": read,
    }


def _running_totals(segments: list[_Segment]) -> list[int]:
    totals: list[int] = []
    for segment in segments:
        totals.append((totals[-1] if totals else 0) + segment.tokens)
    return totals


def _segments(body: Mapping[str, Any]) -> list[_Segment]:
    digest = hashlib.sha256(str(body.get("model")).encode())
    segments: list[_Segment] = []
    for block, is_breakpoint in _prompt_blocks(body):
        encoded = _canonical(block)
        digest.update(encoded.encode() + b"\x00")
        tokens = math.ceil(len(encoded) / 4)
        segments.append(_Segment(tokens, digest.hexdigest(), is_breakpoint))
    if segments and body.get("cache_control"):
        segments[-1] = _Segment(segments[-1].tokens, segments[-1].prefix_hash, True)
    return segments


def _prompt_blocks(body: Mapping[str, Any]) -> Iterator[tuple[JSONObject, bool]]:
    """(block without cache_control markers, is-breakpoint) in prompt order."""
    for tool in body.get("tools") or []:
        yield _strip_cache_control(tool), bool(tool.get("cache_control"))
    system = body.get("system")
    if isinstance(system, str):
        yield {"type": "text", "text": system}, False
    elif isinstance(system, list):
        for block in system:
            yield _strip_cache_control(block), bool(block.get("cache_control"))
    for message in body["messages"]:
        for block in _blocks(message["content"]):
            marked = bool(block.get("cache_control")) or any(b.get("cache_control") for b in _nested(block))
            yield {"role": message["role"], **_strip_cache_control(block)}, marked


def _strip_cache_control(block: JSONObject) -> JSONObject:
    stripped = {k: v for k, v in block.items() if k != "cache_control"}
    if isinstance(stripped.get("content"), list):
        stripped["content"] = [_strip_cache_control(b) if isinstance(b, dict) else b for b in stripped["content"]]
    return stripped


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------- responses


Event = tuple[str, JSONObject]


def _stream_events(scripted: Reply, model: str, usage: Mapping[str, int]) -> list[Event]:
    """The full SSE event sequence for a scripted reply."""
    start_usage = {**usage, "output_tokens": 1}
    events: list[Event] = [
        ("message_start", {"type": "message_start", "message": _message(model, [], None, start_usage)}),
        ("ping", {"type": "ping"}),
    ]
    index = 0
    for block in scripted.blocks:
        for part in _wire_blocks(block):
            events.extend(_block_events(index, part, scripted.chunk))
            index += 1
    delta = {"stop_reason": scripted.final_stop_reason(), "stop_sequence": None}
    final_usage: JSONObject = {"output_tokens": usage["output_tokens"]}
    if searches := sum(isinstance(block, WebSearchBlock) for block in scripted.blocks):
        final_usage["server_tool_use"] = {"web_search_requests": searches}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": final_usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _wire_blocks(block: Block) -> list[Block | JSONObject]:
    """The content blocks a scripted block is on the wire: a web search is two."""
    if not isinstance(block, WebSearchBlock):
        return [block]
    return [block, _search_result(block)]


def _search_result(block: WebSearchBlock) -> JSONObject:
    content: object = (
        {"type": "web_search_tool_result_error", "error_code": block.error_code}
        if block.error_code
        else [
            {"type": "web_search_result", "title": title, "url": url, "encrypted_content": f"enc-{i}", "page_age": None}
            for i, (title, url) in enumerate(block.results)
        ]
    )
    return {"type": "web_search_tool_result", "tool_use_id": block.id, "content": content}


def _block_events(index: int, block: Block | JSONObject, chunk: int) -> list[Event]:
    deltas: list[JSONObject]
    if isinstance(block, dict):  # sent whole, as the API sends a server tool's result
        start: JSONObject = dict(block)
        deltas = []
    elif isinstance(block, WebSearchBlock):
        start = {"type": "server_tool_use", "id": block.id, "name": "web_search", "input": {}}
        query = json.dumps({"query": block.query})
        deltas = [{"type": "input_json_delta", "partial_json": part} for part in _chunks(query, chunk)]
    elif isinstance(block, TextBlock):
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": part} for part in _chunks(block.text, chunk)]
    elif isinstance(block, ToolUseBlock):
        start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
        if block.name is None:
            del start["name"]
        deltas = [{"type": "input_json_delta", "partial_json": part} for part in _chunks(_tool_json(block), chunk)]
        if block.input_at_start:
            start["input"] = json.loads(block.raw_json) if block.raw_json is not None else dict(block.input)
            deltas = []
    else:
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": part} for part in _chunks(block.thinking, chunk)]
        deltas.append({"type": "signature_delta", "signature": block.signature})
    return [
        ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
        *(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas),
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


def _tool_json(block: ToolUseBlock) -> str:
    """The tool input as streamed: whole, or cut in the middle when partial."""
    encoded = block.raw_json if block.raw_json is not None else json.dumps(block.input)
    if not block.partial:
        return encoded
    return encoded[: max(1, _escape_boundary(encoded, len(encoded) // 2))]


def _escape_boundary(encoded: str, target: int) -> int:
    """The last position at or before ``target`` that is not inside an escape like ``\\u00e9``."""
    position = 0
    while position < target:
        step = (6 if encoded[position + 1 : position + 2] == "u" else 2) if encoded[position] == "\\" else 1
        if position + step > target:
            break
        position += step
    return position


def _chunks(value: str, size: int) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)]


def _content_json(block: Block) -> JSONObject:
    """A block as it appears in a non-streamed Message."""
    if isinstance(block, WebSearchBlock):
        return {"type": "server_tool_use", "id": block.id, "name": "web_search", "input": {"query": block.query}}
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {
            "type": "tool_use",
            "id": block.id,
            "name": block.name,
            "input": {} if block.partial else dict(block.input),
        }
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def _message(model: str, content: list[JSONObject], stop_reason: str | None, usage: Mapping[str, int]) -> JSONObject:
    return {
        "id": _new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": dict(usage),
    }


def _output_tokens(scripted: Reply) -> int:
    size = sum(
        len(_tool_json(b) if isinstance(b, ToolUseBlock) else _canonical(_content_json(b))) for b in scripted.blocks
    )
    return max(1, math.ceil(size / 4))


def _failure_point(events: list[Event], scripted: Reply) -> tuple[str, int] | None:
    """("error" | "drop" | "stall", index of the first event not sent), if the reply fails mid-stream."""
    failures = [
        (n, kind)
        for kind, n in (("error", scripted.error_after), ("drop", scripted.drop_after), ("stall", scripted.stall_after))
        if n is not None
    ]
    if not failures:
        return None
    after, kind = min(failures)
    return kind, _after_deltas(events, after)


def _insertions(events: list[Event], scripted: Reply) -> dict[int, bytes]:
    """Malformed events to send before the event at each index (``garble_after``, ``stray_delta_after``)."""
    inserted: dict[int, bytes] = {}
    if scripted.garble_after is not None:
        whole = _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {}})
        cut = whole.index(b"data: ") + 20  # inside the JSON object
        inserted[_after_deltas(events, scripted.garble_after)] = whole[:cut] + b"\n\n"
    if scripted.stray_delta_after is not None:
        stray = {"type": "text_delta", "text": "from nowhere"}
        index = len(scripted.blocks) + 5
        event = {"type": "content_block_delta", "index": index, "delta": stray}
        inserted[_after_deltas(events, scripted.stray_delta_after)] = _sse("content_block_delta", event)
    return inserted


def _after_deltas(events: list[Event], count: int) -> int:
    """The index of the event after ``count`` content deltas (at most the ``message_delta``)."""
    delta_positions = [i for i, (name, _) in enumerate(events) if name == "content_block_delta"]
    if count < len(delta_positions):
        return delta_positions[count]
    return next(i for i, (name, _) in enumerate(events) if name == "message_delta")


def _sse(name: str, data: JSONObject) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _json_object(raw: bytes) -> JSONObject | None:
    """The body parsed as the real API parses it: UTF-8 JSON whose strings are valid Unicode
    (a lone surrogate, encoded or escaped as ``\\udce9``, is rejected), holding an object."""
    try:
        parsed = json.loads(raw.decode("utf-8"), parse_constant=_not_json)
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")  # raises on a lone surrogate
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _not_json(constant: str) -> Any:
    """`NaN`, `Infinity` and `-Infinity`, which Python's decoder reads and JSON does not have."""
    raise ValueError(f"{constant} is not JSON")


def _new_id(prefix: str) -> str:
    return prefix + "01" + uuid.uuid4().hex[:22]


# --------------------------------------------------------------------------- server


class FakeAnthropic(FakeServer[ScriptEntry, RecordedRequest]):
    """A scripted fake of the Anthropic Messages API, served on 127.0.0.1.

    Use as a context manager (or call :meth:`start` / :meth:`stop`). Queue responses with
    :meth:`script`; inspect what the client sent in :attr:`requests` (every request received,
    rejected ones included).

    Args:
        api_key: if set, requests must carry exactly this key (``x-api-key`` or
            ``Authorization: Bearer``); otherwise any non-empty key is accepted.
        min_cache_tokens: prefixes shorter than this are not cached (the real API needs
            1024+ tokens); 0 caches everything.
    """

    def __init__(self, *, api_key: str | None = None, min_cache_tokens: int = 0) -> None:
        super().__init__(_Handler)
        self.api_key = api_key
        self.cache = PromptCache(min_cache_tokens)
        self._usage_log: list[dict[str, int]] = []
        self._errors: list[Exception] = []

    @property
    def url(self) -> str:
        """Base URL for the client, ``http://127.0.0.1:PORT``."""
        return self.address

    @property
    def env(self) -> dict[str, str]:
        """Environment variables pointing a subprocess's SDK at this fake."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": self.api_key or "test-key"}

    # script and records

    @property
    def usage_log(self) -> list[dict[str, int]]:
        """The usage reported for each served reply, in order."""
        with self._changed:
            return [dict(u) for u in self._usage_log]

    @property
    def errors(self) -> list[Exception]:
        """Exceptions raised by scripted callables (each was answered with a 500)."""
        with self._changed:
            return list(self._errors)

    # used by the request handler

    def _record_error(self, error: Exception) -> None:
        with self._changed:
            self._errors.append(error)

    def _log_usage(self, usage: dict[str, int]) -> None:
        with self._changed:
            self._usage_log.append(dict(usage))

    def _check_auth(self, headers: Mapping[str, str]) -> None:
        key = headers.get("x-api-key", "")
        scheme, _, token = headers.get("authorization", "").partition(" ")
        offered = [k for k in (key, token if scheme.lower() == "bearer" else "") if k]
        if not offered or (self.api_key is not None and self.api_key not in offered):
            raise ApiError(401, "authentication_error", "invalid x-api-key")


class _Handler(FakeHandler[FakeAnthropic]):
    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        request = self._read_request()
        self.fake._record(request)
        try:
            self._serve(request)
        except ApiError as err:
            self.send_json(request, err.status, err.body())
        except (BrokenPipeError, ConnectionResetError):
            request.disconnected = True
            self.close_connection = True
        finally:
            request.answered = True

    def _read_request(self) -> RecordedRequest:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.split("?", 1)[0]
        return RecordedRequest(path, headers, _json_object(raw) or {}, method=self.command, raw=raw)

    def _serve(self, request: RecordedRequest) -> None:
        vertex = VERTEX_PATH.match(request.path)
        if vertex is not None and self.command == "POST":
            self._serve_vertex(request, vertex.group(1))
            return
        if self.command != "POST" or request.path not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
            raise ApiError(404, "not_found_error", f"Not found: {self.command} {request.path}")
        self.fake._check_auth(request.headers)
        if not request.headers.get("anthropic-version"):
            raise _invalid("anthropic-version: header is required")
        if _json_object(request.raw) is None:
            raise _invalid("There was an error parsing the body of your request as JSON.")
        _validate(request.body, count_tokens=request.path == COUNT_TOKENS_PATH)
        if request.path == COUNT_TOKENS_PATH:
            tokens = sum(s.tokens for s in _segments(request.body))
            self.send_json(request, 200, {"input_tokens": tokens})
            return
        self._serve_scripted(request, str(request.body["model"]))

    def _serve_vertex(self, request: RecordedRequest, model: str) -> None:
        """Vertex AI's streamRawPredict: a Messages body without `model`, with `anthropic_version`."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token or (self.fake.api_key is not None and token != self.fake.api_key):
            raise ApiError(401, "authentication_error", "Request had invalid authentication credentials.")
        if _json_object(request.raw) is None:
            raise _invalid("There was an error parsing the body of your request as JSON.")
        if "model" in request.body:
            raise _invalid("model: Extra inputs are not permitted")
        if not request.body.get("anthropic_version"):
            raise _invalid("anthropic_version: Field required")
        if not request.body.get("stream"):
            raise _invalid("stream: streamRawPredict streams; send `stream: true`")
        body = {k: v for k, v in request.body.items() if k != "anthropic_version"}
        _validate({**body, "model": model})
        self._serve_scripted(request, model)

    def _serve_scripted(self, request: RecordedRequest, model: str) -> None:
        entry = self.fake._next_entry()
        if entry is None:
            raise ApiError(500, "api_error", "FakeAnthropic: the script ran out; no reply for this request")
        scripted = entry if isinstance(entry, (Reply, HttpError)) else self._call(entry, request)
        if isinstance(scripted, HttpError):
            self.send_json(request, scripted.status, scripted.body, scripted.headers)
            return
        offered = any(
            isinstance(t, dict) and t.get("type") in SERVER_TOOL_TYPES for t in request.body.get("tools") or []
        )
        if any(isinstance(block, WebSearchBlock) for block in scripted.blocks) and not offered:
            raise ApiError(
                500, "api_error", "FakeAnthropic: the script searches, but the request offers no web_search tool"
            )
        usage = {**self.fake.cache.account(request.body), "output_tokens": _output_tokens(scripted)}
        usage.update(scripted.usage or {})
        request.usage = usage
        self.fake._log_usage(usage)
        if request.body.get("stream"):
            self._send_stream(request, model, scripted, usage)
        else:
            self._send_message(request, model, scripted, usage)

    def _call(
        self, entry: Callable[[RecordedRequest], Reply | HttpError], request: RecordedRequest
    ) -> Reply | HttpError:
        """Run a scripted callable; if it raises, keep the error for the test and answer 500."""
        try:
            return entry(request)
        except Exception as err:
            self.fake._record_error(err)
            raise ApiError(500, "api_error", f"FakeAnthropic: the scripted callable raised {err!r}") from err

    # writing responses

    def start_response(
        self, request: fake_server.RecordedRequest | None, status: int, content_type: str, headers: Mapping[str, str]
    ) -> None:
        """Every response carries a `request-id`, recorded with the request."""
        request_id = _new_id("req_")
        if isinstance(request, RecordedRequest):
            request.request_id = request_id
        super().start_response(request, status, content_type, {"request-id": request_id, **headers})

    def _send_message(self, request: RecordedRequest, model: str, scripted: Reply, usage: Mapping[str, int]) -> None:
        """A non-streamed reply: one JSON Message."""
        if scripted.error_after is not None:
            raise ApiError(529, "overloaded_error", "Overloaded")
        content = [_content_json(b) for b in scripted.blocks]
        data = json.dumps(_message(model, content, scripted.final_stop_reason(), usage)).encode()
        self.start_response(request, 200, "application/json", {"content-length": str(len(data))})
        if scripted.drop_after is not None:
            self.wfile.write(data[: len(data) // 2])
            self.drop_connection()
            return
        self.wfile.write(data)

    def _send_stream(self, request: RecordedRequest, model: str, scripted: Reply, usage: Mapping[str, int]) -> None:
        """A streamed reply: SSE over chunked transfer-encoding."""
        events = _stream_events(scripted, model, usage)
        failure = _failure_point(events, scripted)
        inserted = _insertions(events, scripted)
        stop_at = failure[1] if failure else len(events)
        headers = {"transfer-encoding": "chunked", "cache-control": "no-cache"}
        self.start_response(request, 200, "text/event-stream; charset=utf-8", headers)
        for position, (name, data) in enumerate(events[:stop_at]):
            if name == "content_block_delta" and self.fake._sleep(scripted.delay):
                self.drop_connection()
                return
            if position in inserted:
                self.write_chunk(inserted[position])
            self.write_chunk(_sse(name, data))
        if failure and failure[0] == "drop":
            self.drop_connection()
            return
        if failure and failure[0] == "stall":
            request.disconnected = self._wait_for_hang_up()
            self.close_connection = True
            return
        if failure:
            self.write_chunk(_sse("error", dict(OVERLOADED_ERROR)))
        self.end_chunks()

    def _wait_for_hang_up(self) -> bool:
        """Send nothing until the client closes the connection (True) or the server stops (False)."""
        while not self.fake._sleep(0.02):
            readable, _, _ = select.select([self.connection], [], [], 0)
            try:
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return True
            except OSError:  # reset by the client
                return True
        return False
