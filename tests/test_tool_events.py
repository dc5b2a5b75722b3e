"""What the loop and the executor report about tool calls: preparing, running, finished, interrupted."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.access import Access
from agentcli.agents.build import build_agent
from agentcli.agents.sources import ToolList
from agentcli.contracts import (
    JSON,
    Concurrency,
    Decision,
    ModelRequest,
    ModelResponse,
    StreamListener,
    Tool,
    ToolContext,
    ToolResult,
    Usage,
)
from agentcli.conversation import tool_calls
from agentcli.events import (
    AssistantMessage,
    Event,
    MessageAdded,
    TextDelta,
    ToolCallFinished,
    ToolCallRunning,
    ToolCallStarted,
    ToolCallStreaming,
    TurnStarting,
)
from agentcli.executor import ToolExecutor
from agentcli.loop import INTERRUPTED_MARKER, Agent, LoopConfig
from agentcli.providers.anthropic import _MessageAssembler
from agentcli.providers.call_repair import CallIds
from agentcli.tools import builtin_tools
from agentcli.tools.registry import ToolRegistry
from agentcli.workspace.local import LocalWorkspace


class DenyPath:
    """Allows every call except one touching `denied`."""

    def __init__(self, denied: str = "") -> None:
        self.denied = denied

    def check(self, tool: Tool, tool_input: JSON, ctx: ToolContext) -> Decision:
        if self.denied and tool_input.get("file_path") == self.denied:
            return Decision(False, f"Reading {self.denied} was denied.")
        return Decision(True)


def call(call_id: str, name: str, **tool_input: object) -> JSON:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def kinds(events: list[Event]) -> list[tuple[str, str]]:
    """(event type, call id) for the tool events, in order."""
    tool_events = (ToolCallStarted, ToolCallRunning, ToolCallFinished)
    return [(type(e).__name__, e.id) for e in events if isinstance(e, tool_events)]


def test_a_call_is_reported_running_once_admitted_then_finished(tmp_path: Path) -> None:
    events: list[Event] = []
    executor = ToolExecutor(builtin_tools(), DenyPath())

    executor.run_all(
        tool_calls([call("b1", "Bash", command="echo hi")]), ToolContext(LocalWorkspace(tmp_path)), events.append, {}
    )

    assert kinds(events) == [("ToolCallStarted", "b1"), ("ToolCallRunning", "b1"), ("ToolCallFinished", "b1")]
    running = next(e for e in events if isinstance(e, ToolCallRunning))
    assert running.parallel is False and running.input == {"command": "echo hi"}


def test_a_denied_call_is_never_reported_running(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    events: list[Event] = []
    executor = ToolExecutor(builtin_tools(), DenyPath("a.txt"))

    executor.run_all(
        tool_calls([call("r1", "Read", file_path="a.txt")]), ToolContext(LocalWorkspace(tmp_path)), events.append, {}
    )

    assert kinds(events) == [("ToolCallStarted", "r1"), ("ToolCallFinished", "r1")]


def test_concurrent_calls_report_all_running_then_every_result_in_call_order(tmp_path: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text(f"{name}\n")
    events: list[Event] = []
    executor = ToolExecutor(builtin_tools(), DenyPath("b.txt"))
    calls = [call(f"r{n}", "Read", file_path=name) for n, name in enumerate(("a.txt", "b.txt", "c.txt"))]

    executor.run_all(tool_calls(calls), ToolContext(LocalWorkspace(tmp_path)), events.append, {})

    assert kinds(events) == [
        ("ToolCallStarted", "r0"),
        ("ToolCallStarted", "r1"),
        ("ToolCallStarted", "r2"),
        ("ToolCallRunning", "r0"),
        ("ToolCallRunning", "r2"),
        ("ToolCallFinished", "r0"),
        ("ToolCallFinished", "r1"),  # the denied one, in its place
        ("ToolCallFinished", "r2"),
    ]
    assert all(e.parallel for e in events if isinstance(e, ToolCallRunning))


class ScriptedModel:
    """Replays turns: each is (tool names to report as started, the response)."""

    def __init__(self, *turns: tuple[list[str], ModelResponse]) -> None:
        self.turns = list(turns)

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        started, response = self.turns.pop(0)
        for block in response.content:
            if block["type"] == "text":
                listener.text(block["text"])
                listener.text("")
        for name in started:
            listener.tool_call_started(name)
        return response

    def close(self) -> None:
        pass


class Interrupting:
    """A Bash stand-in that is interrupted while it runs, as Ctrl-C does to the real one."""

    name = "Bash"
    description = "test"
    input_schema: JSON = {"type": "object", "properties": {"command": {"type": "string"}}}
    concurrency: Concurrency = "exclusive"

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        raise KeyboardInterrupt

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return Access(command=str(tool_input["command"]))


def agent(model: ScriptedModel, registry: ToolRegistry, events: list[Event], cwd: Path) -> Agent:
    return build_agent(
        sources=[ToolList("test", tuple(registry))],
        system=[],
        model=model,
        gate=DenyPath(),
        config=LoopConfig(model="test"),
        ctx=ToolContext(LocalWorkspace(cwd)),
        on_event=events.append,
    )


def test_a_tool_call_the_model_starts_writing_is_reported_before_the_turn_ends(tmp_path: Path) -> None:
    write = call("w1", "Write", file_path="big.txt", content="x")
    model = ScriptedModel(
        (["Write"], ModelResponse([{"type": "text", "text": "Writing it."}, write], "tool_use", Usage())),
        ([], ModelResponse([{"type": "text", "text": "Done."}], "end_turn", Usage())),
    )
    events: list[Event] = []

    agent(model, builtin_tools(), events, tmp_path).run([{"type": "text", "text": "write it"}])

    order = [type(e).__name__ for e in events if not isinstance(e, TextDelta | MessageAdded | TurnStarting)]
    assert order[:4] == ["ToolCallStreaming", "ModelResponded", "AssistantMessage", "ToolCallStarted"]
    assert next(e for e in events if isinstance(e, ToolCallStreaming)).name == "Write"
    assert isinstance(events[-1], AssistantMessage)


def test_an_interrupt_reports_every_unfinished_call_and_answers_it(tmp_path: Path) -> None:
    calls = [call("b1", "Bash", command="sleep 30"), call("b2", "Bash", command="echo later")]
    model = ScriptedModel(([], ModelResponse(calls, "tool_use", Usage())))
    events: list[Event] = []
    loop = agent(model, ToolRegistry([Interrupting()]), events, tmp_path)

    with pytest.raises(KeyboardInterrupt):
        loop.run([{"type": "text", "text": "wait"}])

    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.id, e.interrupted, e.result.summary) for e in finished] == [
        ("b1", True, "Interrupted"),
        ("b2", True, "Interrupted"),
    ]
    last = loop.messages[-1]["content"]
    assert [b.get("tool_use_id") for b in last] == ["b1", "b2", None]
    assert all(b["is_error"] for b in last[:2]) and last[2]["text"] == INTERRUPTED_MARKER


def test_calls_interrupted_before_they_ran_are_reported_too(tmp_path: Path) -> None:
    calls = [call("r1", "Read", file_path="a.txt")]
    events: list[Event] = []
    loop = agent(ScriptedModel(), builtin_tools(), events, tmp_path)
    loop.replace_conversation(
        [
            {"role": "user", "content": [{"type": "text", "text": "read"}]},
            {"role": "assistant", "content": calls},
        ],
        0,
    )

    loop.record_interrupt()

    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.id == "r1" and finished.interrupted
    assert [b.get("tool_use_id") for b in loop.messages[-1]["content"]] == ["r1", None]


class Recording:
    cancel = None

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def text(self, delta: str) -> None:
        self.seen.append(("text", delta))

    def tool_call_started(self, name: str) -> None:
        self.seen.append(("tool", name))

    def reasoning(self, delta: str) -> None:
        self.seen.append(("reasoning", delta))


def test_the_anthropic_provider_reports_a_tool_call_when_its_block_starts() -> None:
    listener = Recording()
    assembler = _MessageAssembler(listener, ModelRequest("m", [], [], [], 100), CallIds(set, "toolu_"))
    block = {"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {}}

    assembler.feed({"type": "content_block_start", "index": 0, "content_block": block})

    assert listener.seen == [("tool", "Write")]
    assembler.feed(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{"}}
    )
    assert listener.seen == [("tool", "Write")]
