"""Prompt-cache breakpoints: the tools+system prefix, the newest block, never more than 4."""

from __future__ import annotations

import copy
import itertools
import json

from agentcli.cache import MAX_BREAKPOINTS, count_breakpoints, with_cache_breakpoints
from agentcli.contracts import JSON, ModelRequest
from tests.fake_anthropic import validation_error

TOOLS = [{"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("Read", "Bash", "Skill")]
SYSTEM = [{"type": "text", "text": "core"}, {"type": "text", "text": "session"}]


def request(messages: list[JSON], system: list[JSON] = SYSTEM, tools: list[JSON] = TOOLS) -> ModelRequest:
    return ModelRequest("m", system, tools, messages, 100)


def user(*blocks: JSON) -> JSON:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: JSON) -> JSON:
    return {"role": "assistant", "content": list(blocks)}


def t(value: str) -> JSON:
    return {"type": "text", "text": value}


def call(n: int) -> JSON:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {}}


def result(n: int) -> JSON:
    return {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "ok"}


def marked(blocks: list[JSON]) -> list[int]:
    return [i for i, b in enumerate(blocks) if "cache_control" in b]


def conversation(steps: int, calls_per_step: int) -> list[JSON]:
    messages = [user(t("<system-reminder>x</system-reminder>"), t("go"))]
    n = 0
    for _ in range(steps):
        ids = range(n, n + calls_per_step)
        n += calls_per_step
        messages.append(assistant(t("looking"), *(call(i) for i in ids)))
        messages.append(user(*(result(i) for i in ids)))
    return messages


def test_prefix_and_newest_and_previous_turn_are_marked() -> None:
    messages = conversation(steps=2, calls_per_step=2)
    sent = with_cache_breakpoints(request(messages))

    assert marked(sent.system) == [0, 1]
    assert marked(sent.tools) == []  # the system marks cache the tools in front of them
    marks = [(i, j) for i, m in enumerate(sent.messages) for j in marked(m["content"])]
    assert marks == [(2, 1), (4, 1)]  # the previous request's last block, and the newest one
    assert count_breakpoints(sent) == MAX_BREAKPOINTS


def test_never_more_than_four_for_any_shape() -> None:
    shapes = itertools.product(range(0, 6), range(1, 13), (SYSTEM, SYSTEM[:1], []), (TOOLS, []))
    for steps, calls, system, tools in shapes:
        messages = conversation(steps, calls)
        sent = with_cache_breakpoints(request(messages, system, tools))
        assert 1 <= count_breakpoints(sent) <= MAX_BREAKPOINTS
        body = {"model": "m", "max_tokens": 10, "system": sent.system, "tools": sent.tools, "messages": sent.messages}
        assert validation_error(body) is None


def test_caller_marks_are_replaced_not_added() -> None:
    system = [{**b, "cache_control": {"type": "ephemeral"}} for b in [*SYSTEM, t("third")]]
    tools = [{**tool, "cache_control": {"type": "ephemeral"}} for tool in TOOLS]
    sent = with_cache_breakpoints(request(conversation(3, 1), system, tools))
    assert count_breakpoints(sent) == MAX_BREAKPOINTS
    assert marked(sent.system) == [0, 2]


def test_without_system_the_tools_are_the_prefix() -> None:
    sent = with_cache_breakpoints(request([user(t("hi"))], system=[]))
    assert marked(sent.tools) == [2]


def test_stored_messages_are_never_changed() -> None:
    messages = conversation(3, 2)
    before = copy.deepcopy(messages)
    with_cache_breakpoints(request(messages))
    assert json.dumps(messages) == json.dumps(before)


def test_thinking_blocks_and_string_content() -> None:
    thinking = {"type": "thinking", "thinking": "hm", "signature": "sig"}
    sent = with_cache_breakpoints(request([user(t("a")), assistant(t("x"), thinking)]))
    assert marked(sent.messages[-1]["content"]) == [0]
    sent = with_cache_breakpoints(request([{"role": "user", "content": "plain"}]))
    assert sent.messages[0]["content"] == [{"type": "text", "text": "plain", "cache_control": {"type": "ephemeral"}}]
