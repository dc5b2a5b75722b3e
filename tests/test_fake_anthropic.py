"""Tests of the fake Anthropic server itself, driven by the real SDK and by raw HTTP."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from tests.fake_anthropic import (
    OVERLOADED_ERROR,
    FakeAnthropic,
    RecordedRequest,
    Reply,
    http_error,
    reply,
    text,
    thinking,
    tool_use,
    validation_error,
)
from tests.waiting import CEILING, wait_until

MODEL = "claude-test"
HELLO: list[Any] = [{"role": "user", "content": "hi"}]


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture
def client(api: FakeAnthropic) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(api_key="test-key", base_url=api.url, max_retries=0) as sdk:
        yield sdk


def raw_events(client: anthropic.Anthropic, messages: list[Any] = HELLO) -> list[Any]:
    """All stream events of one request made with ``create(stream=True)``."""
    with client.messages.create(model=MODEL, max_tokens=100, messages=messages, stream=True) as stream:
        return list(stream)


def post(
    api: FakeAnthropic, body: object, headers: dict[str, str] | None = None, path: str = "/v1/messages"
) -> tuple[int, dict[str, Any]]:
    """A raw HTTP POST; returns (status, parsed JSON body)."""
    default = {"x-api-key": "k", "anthropic-version": "2026-10-21", "content-type": "application/json"}
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(api.url + path, data=data, headers={**default, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        with err:
            return err.code, json.loads(err.read())


def user_says(raw: bytes) -> bytes:
    """A request body whose one user message is `raw`, spliced in as bytes (no encoder checks them)."""
    return b'{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"' + raw + b'"}]}'


def error_message(body: dict[str, Any]) -> str:
    return str(body["error"]["message"])


# --------------------------------------------------------------------------- streaming


def test_streamed_text_reassembles_from_small_deltas(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("Hello, streaming world!"), chunk=3))
    events = raw_events(client)
    deltas = [e.delta.text for e in events if e.type == "content_block_delta"]
    assert "".join(deltas) == "Hello, streaming world!"
    assert len(deltas) == 8
    assert [e.type for e in events][:2] == ["message_start", "content_block_start"]
    assert [e.type for e in events][-2:] == ["message_delta", "message_stop"]
    assert events[-2].delta.stop_reason == "end_turn"


def test_stream_helper_final_message(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("done")))
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        message = stream.get_final_message()
    assert message.content[0].type == "text"
    assert message.content[0].text == "done"
    assert message.model == MODEL
    assert message.id.startswith("msg_")
    assert message.usage.output_tokens >= 1
    assert api.requests[-1].body["messages"] == HELLO
    assert api.requests[-1].headers["authorization"] == "Bearer test-key"
    assert api.requests[-1].status == 200


def test_tool_use_input_reassembles_from_partial_json(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    tool_input = {"file_path": "a.txt", "content": 'quote " and \\ backslash ' * 3}
    api.script(reply(text("Let me look."), tool_use("Write", tool_input, id="toolu_1"), chunk=5))
    events = raw_events(client)
    starts = [e.content_block for e in events if e.type == "content_block_start"]
    assert starts[1].type == "tool_use"
    assert (starts[1].id, starts[1].name, starts[1].input) == ("toolu_1", "Write", {})
    partial = [e.delta.partial_json for e in events if e.type == "content_block_delta" and e.index == 1]
    assert len(partial) > 1
    assert json.loads("".join(partial)) == tool_input
    assert events[-2].delta.stop_reason == "tool_use"


def test_thinking_and_signature(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(thinking("pondering the question", signature="sig_abc"), text("answer")))
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        message = stream.get_final_message()
    block = message.content[0]
    assert block.type == "thinking"
    assert (block.thinking, block.signature) == ("pondering the question", "sig_abc")


def test_partial_tool_use_stops_with_max_tokens(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("partial"), tool_use("Write", {"file_path": "b", "content": "x" * 40}, partial=True)))
    events = raw_events(client)
    streamed = "".join(e.delta.partial_json for e in events if e.type == "content_block_delta" and e.index == 1)
    with pytest.raises(json.JSONDecodeError):
        json.loads(streamed)
    assert events[-2].delta.stop_reason == "max_tokens"


def test_partial_tool_use_never_cuts_inside_an_escape(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    sizes = range(3, 12)
    api.script(*[reply(tool_use("Write", {"content": "é\\" * n}, partial=True)) for n in sizes])
    for _ in sizes:
        streamed = "".join(e.delta.partial_json for e in raw_events(client) if e.type == "content_block_delta")
        assert json.loads(streamed + '"}')["content"]


def test_error_event_mid_stream(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("abcdefghijklmnop"), chunk=4, error_after=2))
    received: list[str] = []
    with pytest.raises(anthropic.APIStatusError) as caught:
        for event in client.messages.create(model=MODEL, max_tokens=100, messages=HELLO, stream=True):
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                received.append(event.delta.text)
    assert received == ["abcd", "efgh"]
    assert caught.value.body == OVERLOADED_ERROR


def test_dropped_connection_breaks_the_stream(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("abcdefghijklmnop"), chunk=4, drop_after=1), reply(text("after")))
    with pytest.raises((httpx2.TransportError, anthropic.APIConnectionError)):
        raw_events(client)
    assert [e.type for e in raw_events(client)][-1] == "message_stop"


def test_client_hanging_up_on_slow_stream(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("x" * 50), chunk=1, delay=0.02), reply(text("next")))
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        for event in stream:
            if event.type == "text":
                break
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        assert stream.get_final_text() == "next"
    wait_until(lambda: api.requests[0].disconnected, "the fake noticing the client hang up")


def test_stalled_stream_sends_nothing_until_the_client_hangs_up(api: FakeAnthropic) -> None:
    api.script(reply(text("abcdefghijklmnop"), chunk=4, stall_after=2))
    received: list[str] = []
    with (
        anthropic.Anthropic(api_key="k", base_url=api.url, max_retries=0, timeout=httpx2.Timeout(5, read=0.3)) as sdk,
        pytest.raises((httpx2.TimeoutException, anthropic.APITimeoutError)),
    ):
        for event in sdk.messages.create(model=MODEL, max_tokens=100, messages=HELLO, stream=True):
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                received.append(event.delta.text)
    assert received == ["abcd", "efgh"]
    wait_until(lambda: api.requests[0].disconnected, "the fake noticing the client hang up")


def test_garbled_event_is_a_data_line_cut_mid_json(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("abcdefgh"), chunk=4, garble_after=1))
    with pytest.raises(json.JSONDecodeError):
        raw_events(client)


def test_stray_delta_names_a_block_that_never_started(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("abcdefgh"), chunk=4, stray_delta_after=1))
    events = raw_events(client)
    started = {e.index for e in events if e.type == "content_block_start"}
    deltas = [e for e in events if e.type == "content_block_delta"]
    assert [e.index in started for e in deltas] == [True, False, True]
    assert events[-1].type == "message_stop"


def test_raw_json_is_streamed_as_the_tool_input(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(tool_use("Bash", {}, id="toolu_1", raw_json="[1, 2]"), chunk=2))
    events = raw_events(client)
    streamed = "".join(
        e.delta.partial_json for e in events if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
    )
    assert streamed == "[1, 2]"


def test_stop_cuts_off_a_slow_stream() -> None:
    api = FakeAnthropic().start()
    api.script(reply(text("slow"), chunk=1, delay=60))
    errors: list[BaseException] = []

    def consume() -> None:
        with anthropic.Anthropic(api_key="k", base_url=api.url, max_retries=0) as sdk:
            try:
                raw_events(sdk)
            except (httpx2.TransportError, anthropic.APIError) as err:
                errors.append(err)

    worker = threading.Thread(target=consume)
    worker.start()
    api.wait_for_requests(1)
    api.stop()
    worker.join(timeout=CEILING)  # the reply would take 4 minutes to stream: ending sooner means it was cut off
    assert not worker.is_alive()
    assert len(errors) == 1


def test_non_streaming_request_gets_a_message(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("plain"), tool_use("Read", {"file_path": "a"}, id="toolu_9")))
    message = client.messages.create(model=MODEL, max_tokens=100, messages=HELLO)
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.stop_reason == "tool_use"


# --------------------------------------------------------------------------- script


def test_http_error_then_retry(api: FakeAnthropic) -> None:
    api.script(
        http_error(529, OVERLOADED_ERROR, headers={"retry-after-ms": "10"}),
        reply(text("recovered")),
    )
    with (
        anthropic.Anthropic(api_key="k", base_url=api.url, max_retries=1) as sdk,
        sdk.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream,
    ):
        assert stream.get_final_text() == "recovered"
    assert [r.status for r in api.requests] == [529, 200]
    assert len(api.usage_log) == 1


@pytest.mark.parametrize(
    ("status", "error_type", "exception"),
    [
        (429, "rate_limit_error", anthropic.RateLimitError),
        (401, "authentication_error", anthropic.AuthenticationError),
        (404, "not_found_error", anthropic.NotFoundError),
        (529, "overloaded_error", anthropic.InternalServerError),
    ],
)
def test_scripted_http_errors(
    api: FakeAnthropic, client: anthropic.Anthropic, status: int, error_type: str, exception: type[Exception]
) -> None:
    body = {"type": "error", "error": {"type": error_type, "message": "nope"}}
    api.script(http_error(status, body, headers={"retry-after": "3"}))
    with pytest.raises(exception) as caught:
        raw_events(client)
    assert isinstance(caught.value, anthropic.APIStatusError)
    assert caught.value.status_code == status
    assert caught.value.response.headers["retry-after"] == "3"


def test_script_running_out_is_a_500(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.InternalServerError, match="script ran out"):
        raw_events(client)
    assert api.requests[0].status == 500


def test_callable_entry_sees_the_request(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    def echo(request: RecordedRequest) -> Reply:
        return reply(text("echo: " + request.body["messages"][-1]["content"]))

    api.script(echo)
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        assert stream.get_final_text() == "echo: hi"


def test_callable_that_raises_is_a_500_and_kept(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    def broken(request: RecordedRequest) -> Reply:
        raise AssertionError("unexpected request")

    api.script(broken)
    with pytest.raises(anthropic.InternalServerError, match="unexpected request"):
        raw_events(client)
    assert [str(e) for e in api.errors] == ["unexpected request"]


def test_wait_for_requests(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("a")))
    raw_events(client)
    assert len(api.wait_for_requests(1)) == 1
    with pytest.raises(TimeoutError):
        api.wait_for_requests(2, timeout=0.05)


# --------------------------------------------------------------------------- auth and HTTP


def test_x_api_key_and_bearer_are_both_accepted(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("a")), reply(text("b")))
    status, _ = post(api, {"model": MODEL, "max_tokens": 10, "messages": HELLO})
    assert status == 200
    raw_events(client)
    assert api.requests[0].headers["x-api-key"] == "k"
    assert api.requests[1].headers["authorization"] == "Bearer test-key"


def test_missing_key_is_401(api: FakeAnthropic) -> None:
    status, body = post(api, {"model": MODEL, "max_tokens": 10, "messages": HELLO}, {"x-api-key": ""})
    assert (status, body["error"]["type"]) == (401, "authentication_error")
    assert error_message(body) == "invalid x-api-key"


def test_wrong_key_is_401_when_a_key_is_configured() -> None:
    with FakeAnthropic(api_key="right") as api:
        api.script(reply(text("ok")))
        with (
            anthropic.Anthropic(api_key="wrong", base_url=api.url, max_retries=0) as sdk,
            pytest.raises(anthropic.AuthenticationError, match="invalid x-api-key"),
        ):
            raw_events(sdk)
        with anthropic.Anthropic(api_key="right", base_url=api.url, max_retries=0) as sdk:
            assert raw_events(sdk)[-1].type == "message_stop"


@pytest.mark.parametrize(
    ("body", "headers", "path", "status", "message"),
    [
        ({"max_tokens": 1, "messages": HELLO}, {}, "/v1/messages", 400, "model: Field required"),
        ({"model": MODEL, "messages": HELLO}, {}, "/v1/messages", 400, "max_tokens: Field required"),
        ({"model": MODEL, "max_tokens": 1}, {}, "/v1/messages", 400, "messages: Field required"),
        ({"model": MODEL, "max_tokens": -1, "messages": HELLO}, {}, "/v1/messages", 400, "greater than or equal to 0"),
        ({"model": MODEL, "max_tokens": 1, "messages": []}, {}, "/v1/messages", 400, "at least 1 item"),
        (b"{not json", {}, "/v1/messages", 400, "parsing the body"),
        # What the real API cannot decode: bytes that are not UTF-8, a lone surrogate escaped or encoded.
        (user_says(b"caf\xe9"), {}, "/v1/messages", 400, "parsing the body"),
        (user_says(b"caf\\udce9"), {}, "/v1/messages", 400, "parsing the body"),
        (user_says(b"caf\xed\xb3\xa9"), {}, "/v1/messages", 400, "parsing the body"),
        (
            {"model": MODEL, "max_tokens": 1, "messages": HELLO},
            {"anthropic-version": ""},
            "/v1/messages",
            400,
            "anthropic-version",
        ),
        ({}, {}, "/v1/complete", 404, "Not found"),
    ],
)
def test_raw_http_rejections(
    api: FakeAnthropic, body: object, headers: dict[str, str], path: str, status: int, message: str
) -> None:
    api.script(reply(text("unused")))
    got_status, got_body = post(api, body, headers, path)
    assert got_status == status
    assert message in error_message(got_body)
    assert api.remaining == 1


def test_count_tokens(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    counted = client.messages.count_tokens(model=MODEL, messages=HELLO)
    assert counted.input_tokens > 0
    assert api.remaining == 0


# --------------------------------------------------------------------------- validation


def tool_turn(*ids: str) -> dict[str, Any]:
    """An assistant message with some text and one tool_use per id."""
    uses = [{"type": "tool_use", "id": i, "name": "Read", "input": {"file_path": "a"}} for i in ids]
    return {"role": "assistant", "content": [{"type": "text", "text": "Looking."}, *uses]}


def result(tool_use_id: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": "ok", **extra}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def cached(block: dict[str, Any]) -> dict[str, Any]:
    return {**block, "cache_control": {"type": "ephemeral"}}


TEXT = {"type": "text", "text": "go on"}
READ_TOOL = {"name": "Read", "description": "read", "input_schema": {"type": "object"}}

INVALID: list[tuple[str, dict[str, Any], str]] = [
    (
        "orphan tool_use",
        {"messages": [*HELLO, tool_turn("toolu_a", "toolu_b"), user(TEXT)]},
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_a, toolu_b. Each `tool_use` block must have a corresponding `tool_result` block "
        "in the next message.",
    ),
    (
        "partly answered tool_use",
        {"messages": [*HELLO, tool_turn("toolu_a", "toolu_b"), user(result("toolu_b"))]},
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a.",
    ),
    (
        "trailing tool_use",
        {"messages": [*HELLO, tool_turn("toolu_a")]},
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a.",
    ),
    (
        "unknown tool_use_id",
        {"messages": [*HELLO, tool_turn("toolu_a"), user(result("toolu_a"), result("toolu_zz"))]},
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_zz. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    ),
    (
        "tool_result without any tool_use",
        {"messages": [user(result("toolu_a"))]},
        "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_a.",
    ),
    (
        "text before tool_result",
        {"messages": [*HELLO, tool_turn("toolu_a"), user(TEXT, result("toolu_a"))]},
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message.",
    ),
    (
        "duplicate tool_result",
        {"messages": [*HELLO, tool_turn("toolu_a"), user(result("toolu_a"), result("toolu_a"))]},
        "messages.2.content.1: each tool_use must have a single result.",
    ),
    (
        "duplicate tool_use id",
        {
            "messages": [
                *HELLO,
                tool_turn("toolu_a"),
                user(result("toolu_a")),
                tool_turn("toolu_a"),
                user(result("toolu_a")),
            ]
        },
        "messages.3.content.1: `tool_use` ids must be unique",
    ),
    (
        "tool input not an object",
        {
            "messages": [
                *HELLO,
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": "a"}]},
                user(result("t")),
            ]
        },
        "messages.1.content.0.tool_use.input: Input should be a valid dictionary",
    ),
    (
        "empty text block",
        {"messages": [user({"type": "text", "text": ""})]},
        "messages: text content blocks must be non-empty",
    ),
    (
        "empty string content",
        {"messages": [{"role": "user", "content": ""}]},
        "messages: text content blocks must be non-empty",
    ),
    (
        "empty text inside tool_result",
        {"messages": [*HELLO, tool_turn("t"), user(result("t", content=[{"type": "text", "text": ""}]))]},
        "messages: text content blocks must be non-empty",
    ),
    (
        "empty content list",
        {"messages": [{"role": "user", "content": []}, {"role": "assistant", "content": "x"}, *HELLO]},
        "messages.0: all messages must have non-empty content",
    ),
    (
        "whitespace-only final assistant text",
        {"messages": [*HELLO, {"role": "assistant", "content": "  \n"}]},
        "messages: text content blocks must contain non-whitespace text",
    ),
    (
        "final assistant trailing whitespace",
        {"messages": [*HELLO, {"role": "assistant", "content": "The answer is "}]},
        "messages: final assistant content cannot end with trailing whitespace",
    ),
    (
        "five cache_control blocks",
        {
            "tools": [cached(READ_TOOL)],
            "system": [cached({"type": "text", "text": "sys"}), cached({"type": "text", "text": "more"})],
            "messages": [user(cached(TEXT)), {"role": "assistant", "content": "ok"}, user(cached(TEXT))],
        },
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    ),
    (
        "top-level cache_control counts too",
        {
            "cache_control": {"type": "ephemeral"},
            "system": [cached({"type": "text", "text": "s"}), cached({"type": "text", "text": "t"})],
            "messages": [user(cached(TEXT), cached({"type": "text", "text": "x"}))],
        },
        "Found 5.",
    ),
    ("temperature", {"temperature": 0.2, "messages": HELLO}, "`temperature` is deprecated for this model."),
    ("top_k", {"top_k": 5, "messages": HELLO}, "`top_k` is deprecated"),
    (
        "assistant first",
        {"messages": [{"role": "assistant", "content": "hi"}, *HELLO]},
        'first message must use the "user" role',
    ),
    (
        "bad role",
        {"messages": [*HELLO, {"role": "tool", "content": "x"}]},
        "messages.1.role: Input should be 'user', 'assistant' or 'system'",
    ),
    (
        "a system message with an image",
        {"messages": [*HELLO, {"role": "system", "content": [{"type": "image", "source": {}}]}]},
        "messages.1.content: a system message holds text blocks only",
    ),
    (
        "bad tool name",
        {"tools": [{**READ_TOOL, "name": "read file"}], "messages": HELLO},
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
    ),
    ("duplicate tool names", {"tools": [READ_TOOL, READ_TOOL], "messages": HELLO}, "tools: Tool names must be unique."),
]


@pytest.mark.parametrize(("body", "message"), [case[1:] for case in INVALID], ids=[case[0] for case in INVALID])
def test_invalid_conversation_is_rejected_without_consuming_the_script(
    api: FakeAnthropic, client: anthropic.Anthropic, body: dict[str, Any], message: str
) -> None:
    api.script(reply(text("unused")))
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model=MODEL, max_tokens=100, stream=True, extra_body=body, messages=[])
    assert caught.value.status_code == 400
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["error"]["type"] == "invalid_request_error"
    assert message in caught.value.body["error"]["message"]
    assert api.remaining == 1
    assert api.requests[-1].status == 400


def test_valid_tool_round_trip_is_accepted(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    messages = [
        *HELLO,
        tool_turn("toolu_a", "toolu_b"),
        user(result("toolu_b"), result("toolu_a", is_error=True), TEXT),
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "text", "text": "Done"}],
        },
    ]
    assert validation_error({"model": MODEL, "max_tokens": 1, "messages": messages}) is None
    api.script(reply(text("ok")))
    assert raw_events(client, messages)[-1].type == "message_stop"


def test_a_system_message_in_the_conversation_is_accepted_as_the_api_now_does() -> None:
    """Messages of role `system` (text only) give instructions from where they stand, with no
    turn of their own: Claude Code sends one after the first user message."""
    messages = [
        *HELLO,
        {"role": "system", "content": [{"type": "text", "text": "Answer briefly."}]},
        {"role": "assistant", "content": "Hi."},
        {"role": "system", "content": "Use tools when asked."},
        user(TEXT),
    ]
    assert validation_error({"model": MODEL, "max_tokens": 1, "messages": messages}) is None


def test_validation_error_is_usable_without_a_server() -> None:
    body = {"model": MODEL, "max_tokens": 1, "messages": [*HELLO, tool_turn("toolu_a")]}
    message = validation_error(body)
    assert message is not None
    assert message.startswith("messages.1: `tool_use` ids were found")


# --------------------------------------------------------------------------- prompt caching


def cached_request(client: anthropic.Anthropic, messages: list[Any]) -> anthropic.types.Usage:
    system: Any = [
        {"type": "text", "text": "You are a careful assistant. " * 20, "cache_control": {"type": "ephemeral"}}
    ]
    with client.messages.stream(model=MODEL, max_tokens=100, system=system, messages=messages) as stream:
        return stream.get_final_message().usage


def test_identical_prefix_is_read_from_cache(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("a")), reply(text("b")))
    first = cached_request(client, HELLO)
    second = cached_request(client, [user({"type": "text", "text": "something else"})])
    assert first.cache_read_input_tokens == 0
    assert first.cache_creation_input_tokens and first.cache_creation_input_tokens > 100
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    assert second.input_tokens > 0
    assert api.usage_log[1]["cache_read_input_tokens"] == second.cache_read_input_tokens


def test_growing_conversation_reads_previous_breakpoint(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    turn1 = [user(cached({"type": "text", "text": "first question " * 10}))]
    turn2 = [
        user({"type": "text", "text": "first question " * 10}),
        {"role": "assistant", "content": "an answer"},
        user(cached({"type": "text", "text": "second question"})),
    ]
    api.script(reply(text("a")), reply(text("b")))
    first = cached_request(client, turn1)
    second = cached_request(client, turn2)
    assert first.cache_creation_input_tokens is not None
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens and second.cache_creation_input_tokens > 0


def test_cache_lookback_is_limited_to_20_blocks(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    start = [user(cached(TEXT))]
    filler = [{"type": "text", "text": f"line {i}"} for i in range(25)]
    longer = [user(TEXT, *filler[:-1], cached(filler[-1]))]
    api.script(reply(text("a")), reply(text("b")))
    cached_request(client, start)
    usage = cached_request(client, longer)
    assert usage.cache_read_input_tokens and usage.cache_read_input_tokens > 0
    assert api.usage_log[1]["cache_read_input_tokens"] < api.usage_log[0]["cache_creation_input_tokens"]


def test_min_cache_tokens_disables_caching_of_short_prompts() -> None:
    with FakeAnthropic(min_cache_tokens=100_000) as api:
        api.script(reply(text("a")), reply(text("b")))
        with anthropic.Anthropic(api_key="k", base_url=api.url, max_retries=0) as sdk:
            cached_request(sdk, HELLO)
            usage = cached_request(sdk, HELLO)
        assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (0, 0)


def test_usage_override(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(reply(text("a"), usage={"output_tokens": 777, "input_tokens": 5}))
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        usage = stream.get_final_message().usage
    assert (usage.input_tokens, usage.output_tokens) == (5, 777)
