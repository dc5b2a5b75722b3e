"""The scripted model double: it answers as a provider would and checks requests as the fake server does."""

from __future__ import annotations

import pytest

from agentcli.contracts import JSON, ModelRequest, Unwatched
from agentcli.errors import ModelAPIError, TransientModelError
from agentcli.providers.scripted import ScriptedModel, reply, text, thinking, tool_use
from tests.fake_anthropic import validation_error


def request(*messages: JSON, tools: list[JSON] | None = None) -> ModelRequest:
    return ModelRequest("claude-test", [{"type": "text", "text": "system"}], tools or [], list(messages), 1000)


def user(words: str) -> JSON:
    return {"role": "user", "content": [{"type": "text", "text": words}]}


class Heard:
    """A StreamListener that keeps what it was told."""

    cancel = None

    def __init__(self) -> None:
        self.deltas: list[str] = []
        self.calls: list[str] = []
        self.reasoned: list[str] = []

    def text(self, delta: str) -> None:
        self.deltas.append(delta)

    def tool_call_started(self, name: str) -> None:
        self.calls.append(name)

    def reasoning(self, delta: str) -> None:
        self.reasoned.append(delta)


def test_a_reply_streams_its_text_and_comes_back_as_the_api_sends_it() -> None:
    model = ScriptedModel(
        reply(thinking("Plan.", signature="sig-1"), text("Hello there, friend."), tool_use("Read", {"a": 1}, id="t1"))
    )
    heard = Heard()

    response = model.stream(request(user("hi")), heard)

    deltas = heard.deltas
    assert "".join(deltas) == "Hello there, friend." and deltas[-1] == "" and len(deltas) > 2
    assert heard.calls == ["Read"]
    assert response.content == [
        {"type": "thinking", "thinking": "Plan.", "signature": "sig-1"},
        {"type": "text", "text": "Hello there, friend."},
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"a": 1}},
    ]
    assert response.stop_reason == "tool_use"
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0


def test_each_request_is_recorded_as_sent_and_later_changes_do_not_reach_the_record() -> None:
    model = ScriptedModel(reply(text("one")))
    messages = [user("first")]
    sent = ModelRequest("claude-test", [], [], messages, 1000)

    model.stream(sent, Unwatched())
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "one"}]})

    assert model.requests == [ModelRequest("claude-test", [], [], [user("first")], 1000)]


def test_a_request_the_api_would_reject_fails_as_a_400_and_consumes_nothing() -> None:
    model = ScriptedModel(reply(text("never")), check=validation_error)
    unanswered = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}

    with pytest.raises(ModelAPIError, match=r"API error 400: .*tool_use` ids were found without `tool_result`"):
        model.stream(request(user("hi"), unanswered, user("and?")), Unwatched())

    assert model.remaining == 1 and len(model.requests) == 1
    assert len(model.rejected) == 1 and "without `tool_result` blocks" in model.rejected[0]


def test_text_that_json_cannot_carry_is_rejected_like_the_wire_does() -> None:
    model = ScriptedModel(reply(text("never")))

    with pytest.raises(ModelAPIError, match="error parsing the body"):
        model.stream(request(user("caf\udce9")), Unwatched())


def test_stop_reasons_cut_off_calls_and_unusable_inputs_come_back_as_a_provider_reports_them() -> None:
    model = ScriptedModel(
        reply(text("Writing."), tool_use("Write", {"file_path": "x"}, partial=True)),
        reply(tool_use("Bash", {}, id="bad", raw_json="[1, 2]"), tool_use("Bash", {}, id="cut", raw_json='{"comm')),
        reply(text("partial"), stop_reason="refusal", usage={"input_tokens": 900}),
    )

    cut = model.stream(request(user("a")), Unwatched())
    odd = model.stream(request(user("b")), Unwatched())
    refused = model.stream(request(user("c")), Unwatched())

    assert cut.stop_reason == "max_tokens" and cut.incomplete_block == 1 and cut.content[1]["input"] == {}
    assert odd.invalid_inputs == {"bad": "the input must be a JSON object, not a list"}
    assert odd.incomplete_block == 1  # input JSON that never completed
    assert refused.stop_reason == "refusal" and refused.usage.input_tokens == 900


def test_exceptions_and_functions_of_the_request_are_entries_too() -> None:
    model = ScriptedModel(
        TransientModelError("the connection dropped mid-stream"),
        lambda sent: reply(text(f"{len(sent.messages)} message(s)")),
    )

    with pytest.raises(TransientModelError):
        model.stream(request(user("a")), Unwatched())
    answer = model.stream(request(user("a")), Unwatched())

    assert answer.content == [{"type": "text", "text": "1 message(s)"}]
    with pytest.raises(ModelAPIError, match="the script ran out"):
        model.stream(request(user("a")), Unwatched())


def test_an_unknown_usage_field_is_refused_when_the_reply_is_built() -> None:
    with pytest.raises(ValueError, match="unknown usage fields"):
        reply(text("x"), usage={"input_token": 1})
