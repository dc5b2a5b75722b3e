"""Building agents (`build_agent` from tool sources), the events they emit, and their lifecycle.

In-process: the real loop, executor and tools with a scripted model whose requests are
checked as the API checks them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from agentcli.access import NOTHING, Access
from agentcli.agents.build import build_agent
from agentcli.agents.sources import ToolList, ToolSource, builtin_source, collect_tools
from agentcli.contracts import JSON, Concurrency, PermissionGate, ToolContext, ToolResult
from agentcli.events import MAIN_AGENT, Event, MessageAdded, ToolCallFinished, TurnStarting
from agentcli.loop import Agent, LoopConfig
from agentcli.permissions.gate import Gate
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.workspace.local import LocalWorkspace
from tests.fake_anthropic import validation_error


class Echo:
    """A tool of a source other than the built-ins."""

    name = "Echo"
    description = "Echoes its input."
    input_schema: JSON = {"type": "object", "properties": {"words": {"type": "string"}}, "required": ["words"]}
    concurrency: Concurrency = "shared"

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        return ToolResult(str(tool_input["words"]))

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return NOTHING


def agent(
    model: ScriptedModel,
    cwd: Path,
    events: list[Event],
    *,
    sources: Sequence[ToolSource] | None = None,
    gate: PermissionGate | None = None,
    agent_id: str = MAIN_AGENT,
    only: set[str] | None = None,
) -> Agent:
    return build_agent(
        sources=[builtin_source()] if sources is None else sources,
        system=[{"type": "text", "text": f"You are {agent_id}."}],
        model=model,
        gate=gate or Gate(mode="acceptEdits"),
        config=LoopConfig(model="claude-test"),
        ctx=ToolContext(LocalWorkspace(cwd)),
        on_event=events.append,
        agent_id=agent_id,
        only=only,
    )


def tool_names(request_tools: list[JSON]) -> list[str]:
    return [tool["name"] for tool in request_tools]


def tool_threads() -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name.startswith("tool")}


# ------------------------------------------------------------------ tool sources


def test_an_agent_is_offered_its_sources_tools_in_order(tmp_path: Path) -> None:
    model = ScriptedModel(reply(text("hello")), check=validation_error)
    extra = ToolList("extra", (Echo(),))

    agent(model, tmp_path, [], sources=[builtin_source(), extra]).run([{"type": "text", "text": "hi"}])

    assert tool_names(model.requests[0].tools) == ["Read", "Write", "Edit", "Bash", "Grep", "Glob", "Echo"]


def test_an_agent_built_with_a_subset_has_only_those_tools(tmp_path: Path) -> None:
    model = ScriptedModel(
        reply(tool_use("Write", {"file_path": "new.txt", "content": "x"}, id="toolu_w")),
        reply(text("I cannot write here.")),
        check=validation_error,
    )
    events: list[Event] = []
    explorer = agent(model, tmp_path, events, only={"Glob", "Read", "Grep"}, gate=Gate(mode="bypassPermissions"))

    explorer.run([{"type": "text", "text": "write new.txt"}])

    assert tool_names(model.requests[0].tools) == ["Read", "Grep", "Glob"]  # the sources' order
    assert not (tmp_path / "new.txt").exists()
    [result] = model.requests[1].messages[-1]["content"]
    assert result["is_error"] and "Unknown tool 'Write'. Available tools: Read, Grep, Glob." in result["content"]


def test_two_sources_with_a_tool_of_the_same_name_are_refused() -> None:
    with pytest.raises(ValueError, match="Both the builtin and the mcp:files tools have a tool named 'Read'"):
        collect_tools([builtin_source(), ToolList("mcp:files", tuple(t for t in builtin_source().tools()[:1]))])


def test_a_subset_naming_a_tool_no_source_has_is_refused_with_the_tools_there_are() -> None:
    with pytest.raises(ValueError, match=r"No tool named Task; the tools are: Read, Write, Edit, Bash, Grep, Glob\."):
        collect_tools([builtin_source()], only={"Read", "Task"})


# ------------------------------------------------------------------ events


def test_every_event_carries_the_id_of_the_agent_that_emitted_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    events: list[Event] = []
    for agent_id in (MAIN_AGENT, "explore-1"):
        model = ScriptedModel(
            reply(text("Looking."), tool_use("Read", {"file_path": "a.txt"}), tool_use("Glob", {"pattern": "*.txt"})),
            reply(text("It says alpha.")),
            check=validation_error,
        )
        agent(model, tmp_path, events, agent_id=agent_id).run([{"type": "text", "text": "what is in a.txt?"}])

    by_agent = {name: [type(e).__name__ for e in events if e.agent_id == name] for name in ("main", "explore-1")}
    assert by_agent["main"] == by_agent["explore-1"]
    assert len(by_agent["main"]) * 2 == len(events)  # no other id
    kinds = set(by_agent["explore-1"])
    assert {"MessageAdded", "TurnStarting", "TextDelta", "ToolCallStreaming", "AssistantMessage"} <= kinds
    assert {"ToolCallStarted", "ToolCallRunning", "ToolCallFinished", "ToolResultsMessage"} <= kinds  # the executor's


def test_subscribers_see_each_message_and_each_request_before_the_front_end_does(tmp_path: Path) -> None:
    model = ScriptedModel(reply(tool_use("Echo", {"words": "ping"})), reply(text("pong")), check=validation_error)
    seen: list[str] = []
    loop = build_agent(
        sources=[ToolList("extra", (Echo(),))],
        system=[],
        model=model,
        gate=Gate(mode="default"),
        config=LoopConfig(model="claude-test"),
        ctx=ToolContext(LocalWorkspace(tmp_path)),
        on_event=lambda event: seen.append(f"front end: {type(event).__name__}"),
    )

    def subscriber(event: Event) -> None:
        if isinstance(event, MessageAdded):
            seen.append(f"subscriber: {event.message['role']} message")
        elif isinstance(event, TurnStarting):
            seen.append("subscriber: turn")

    loop.subscribe(subscriber)
    loop.run([{"type": "text", "text": "echo ping"}])

    mine = [line for line in seen if line.startswith("subscriber") or line.endswith(("MessageAdded", "TurnStarting"))]
    each_seen_by_the_subscriber_then_the_front_end = [
        ("user message", "MessageAdded"),  # the prompt
        ("turn", "TurnStarting"),
        ("assistant message", "MessageAdded"),  # the Echo call
        ("user message", "MessageAdded"),  # its result
        ("turn", "TurnStarting"),
        ("assistant message", "MessageAdded"),  # the answer
    ]
    assert mine == [
        line
        for subscriber_saw, front_end_saw in each_seen_by_the_subscriber_then_the_front_end
        for line in (f"subscriber: {subscriber_saw}", f"front end: {front_end_saw}")
    ]


def test_a_subscriber_may_replace_the_conversation_before_a_request(tmp_path: Path) -> None:
    model = ScriptedModel(reply(text("first")), reply(text("second")), check=validation_error)
    loop = agent(model, tmp_path, [])
    summary = {"role": "user", "content": [{"type": "text", "text": "Summary: we said hello."}]}

    def compact_before_the_second_prompt(event: Event) -> None:
        if isinstance(event, TurnStarting) and len(loop.messages) > 2:
            loop.replace_conversation([summary, loop.messages[-1]], 0)

    loop.subscribe(compact_before_the_second_prompt)
    loop.run([{"type": "text", "text": "hello"}])
    loop.run([{"type": "text", "text": "and again"}])

    assert model.requests[1].messages[0]["content"][0]["text"] == "Summary: we said hello."
    assert [m["role"] for m in model.requests[1].messages] == ["user", "user"]
    assert loop.messages[-1]["content"][0]["text"] == "second"


# ------------------------------------------------------------------ lifecycle


def test_closing_an_agent_stops_its_tool_threads(tmp_path: Path) -> None:
    for name in "abc":
        (tmp_path / f"{name}.txt").write_text(f"{name}\n")
    model = ScriptedModel(
        reply(*(tool_use("Read", {"file_path": f"{name}.txt"}) for name in "abc")),  # run concurrently
        reply(text("Read all three.")),
        check=validation_error,
    )
    events: list[Event] = []
    before = tool_threads()
    loop = agent(model, tmp_path, events)

    loop.run([{"type": "text", "text": "read a, b and c"}])
    started = tool_threads() - before
    loop.close()

    assert [e.result.is_error for e in events if isinstance(e, ToolCallFinished)] == [False, False, False]
    assert started and not any(thread.is_alive() for thread in started)
    assert model.closed == 0  # the model is its owner's: a sub-agent shares its parent's
