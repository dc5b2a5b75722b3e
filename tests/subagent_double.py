"""A stand-in for the Task tool, for testing what front ends show of sub-agents.

`FakeTask` emits what the sub-agent runner emits: `SubagentStarted` (as the parent), the
sub-agent's own events stamped with its id (its prompt, assistant turns, tool calls, tool
results), then `SubagentFinished`; and it returns the final text as the call's result. The
sub-conversation is scripted in the call's `prompt`, a JSON list of steps:

    {"call": "Grep", "input": {"pattern": "x"}, "summary": "Found 2 files"}   one turn, one call
    {"wait": "release"}     wait until the file `release` exists in the project (then go on)
    {"say": "It is in config.py"}                                             the final answer
    {"fail": "the sub-agent hit its turn limit (50)"}                    end with this error

Each assistant turn reports `TURN_USAGE`. `install` puts the tool beside the session's own
(in-process, through `monkeypatch`); `python -m tests.subagent_double [ARGS]` starts the
REPL with it, for pty tests.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentcli.agents.sources import ToolList
from agentcli.contracts import JSON, ToolContext, ToolResult, Usage
from agentcli.events import (
    MAIN_AGENT,
    AssistantMessage,
    Event,
    EventSink,
    MessageAdded,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallRunning,
    ToolCallStarted,
    ToolResultsMessage,
)
from agentcli.loop import Agent

TURN_USAGE = Usage(input_tokens=1000, output_tokens=100, cache_read_input_tokens=4000)
"""What each of the stand-in's turns reports it used: 5.1k tokens."""
WAIT_CEILING = 60.0


Step = Mapping[str, Any]


def script(*steps: Step) -> str:
    """A `prompt` for `FakeTask`."""
    return json.dumps(list(steps))


class FakeTask:
    name = "Task"
    description = "Starts a scripted stand-in sub-agent (tests only)."
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "description": {"type": "string"},
            "prompt": {"type": "string"},
            "subagent_type": {"type": "string"},
        },
        "required": ["description", "prompt", "subagent_type"],
    }
    read_only = True  # so that two calls of one turn run side by side, as Task calls will

    def __init__(self) -> None:
        self.front_end: EventSink = lambda event: None
        self.parent: Agent | None = None

    def touched_paths(self, tool_input: JSON, ctx: ToolContext) -> list[Path]:
        return []

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        call_id = self._call_id(tool_input)
        agent = f"sub-{call_id}"
        kind = tool_input["subagent_type"]
        self.front_end(SubagentStarted(agent, call_id, kind, tool_input["description"], agent_id=MAIN_AGENT))
        prompt = {"role": "user", "content": [{"type": "text", "text": tool_input["prompt"]}]}
        self._emit(agent, MessageAdded(prompt))
        turns = calls = 0
        usage = Usage()
        answer, error = "", None
        for number, step in enumerate(json.loads(tool_input["prompt"])):
            if "wait" in step:
                _wait_for(ctx.cwd / step["wait"])
                continue
            if "fail" in step:
                error = step["fail"]
                break
            turns += 1
            usage.add(TURN_USAGE)
            if "say" in step:
                answer = step["say"]
                self._emit(agent, TextDelta(answer))
                self._emit(agent, TextDelta(""))
                message = {"role": "assistant", "content": [{"type": "text", "text": answer}]}
                self._emit(agent, AssistantMessage(message, "end_turn", TURN_USAGE))
                continue
            calls += 1
            self._call(agent, f"{agent}-{number}", step)
        finished = SubagentFinished(agent, call_id, turns, calls, usage, error, agent_id=MAIN_AGENT)
        self.front_end(finished)
        if error is not None:
            return ToolResult(f"The sub-agent stopped: {error}", is_error=True)
        return ToolResult(f"{answer}\n\n({turns} turns, {calls} tool calls)", summary="Done")

    def _call(self, agent: str, call_id: str, step: Step) -> None:
        name, tool_input = step["call"], step.get("input", {})
        block = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
        self._emit(agent, AssistantMessage({"role": "assistant", "content": [block]}, "tool_use", TURN_USAGE))
        self._emit(agent, ToolCallStarted(call_id, name, tool_input))
        self._emit(agent, ToolCallRunning(call_id, name, tool_input))
        result = ToolResult(step.get("output", "found"), summary=step.get("summary"))
        self._emit(agent, ToolCallFinished(call_id, name, tool_input, result))
        content = [{"type": "tool_result", "tool_use_id": call_id, "content": result.content}]
        self._emit(agent, ToolResultsMessage({"role": "user", "content": content}))

    def _emit(self, agent: str, event: Event) -> None:
        self.front_end(replace(event, agent_id=agent))

    def _call_id(self, tool_input: JSON) -> str:
        """The id of the Task call being run: the parent's latest message holds it."""
        assert self.parent is not None, "install() wires the stand-in to the session's agent"
        blocks = self.parent.messages[-1]["content"]
        return str(next(b["id"] for b in blocks if b.get("type") == "tool_use" and b["input"] == tool_input))


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_CEILING
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path.name} never appeared")
        time.sleep(0.02)


def install(setattr_: Callable[[object, str, object], None]) -> FakeTask:
    """Offer `FakeTask` to the session's agent (beside its own tools), wired to its front end;
    `setattr_` is `monkeypatch.setattr` (or `setattr` in a process of its own)."""
    import agentcli.session
    from agentcli.agents.build import build_agent as build

    fake = FakeTask()

    def build_with_task(**options: Any) -> Agent:
        others = [source for source in options["sources"] if source.name != "task"]  # the real Task tool
        options["sources"] = [*others, ToolList("test", (fake,))]
        agent = build(**options)
        fake.front_end, fake.parent = options["on_event"], agent
        return agent

    setattr_(agentcli.session, "build_agent", build_with_task)
    return fake


if __name__ == "__main__":
    from agentcli.repl.app import run_repl
    from agentcli.session import SessionOptions

    install(setattr)
    sys.exit(run_repl(SessionOptions(permission_mode=sys.argv[1] if len(sys.argv) > 1 else None)))
