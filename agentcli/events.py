"""Typed events an agent emits. Front ends (terminal, json, stream-json) and the session's
bookkeeping (transcript recorder, auto-compaction) subscribe to them.

Every event carries `agent_id`, the id of the agent that produced it: `MAIN_AGENT` for the
session's own, a sub-agent's own id otherwise. The agent stamps it on each event as it emits
it (`Agent.emit`), so whoever builds an event leaves it at its default.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from agentcli.contracts import JSON, ToolResult, Usage

MAIN_AGENT = "main"
"""The id of the session's own agent (the one the user talks to)."""


@dataclass(frozen=True)
class AgentEvent:
    """What every event has: the id of the agent that produced it."""

    agent_id: str = field(default=MAIN_AGENT, kw_only=True)


@dataclass(frozen=True)
class MessageAdded(AgentEvent):
    """A message joined the conversation (`Agent.messages`), exactly as it will be sent."""

    message: JSON


@dataclass(frozen=True)
class TurnStarting(AgentEvent):
    """The agent is about to send a request. A subscriber may still replace `Agent.messages`
    (auto-compaction): subscribers run synchronously, before the request is built."""


@dataclass(frozen=True)
class TextDelta(AgentEvent):
    text: str


@dataclass(frozen=True)
class ReasoningDelta(AgentEvent):
    """A piece of the model's reasoning as it streams: for the user's eyes (dimmed), not the answer."""

    text: str


@dataclass(frozen=True)
class AssistantMessage(AgentEvent):
    """A complete assistant turn, exactly as appended to the conversation."""

    message: JSON
    stop_reason: str
    usage: Usage


@dataclass(frozen=True)
class ModelResponded(AgentEvent):
    """A model request was answered (also one the loop then discards and asks again): what the
    transcript records of it for `agentcli stats`."""

    model: str
    stop_reason: str
    first_token: float | None
    """Seconds from sending the request to the first text or tool call streamed back; None when
    the response streamed neither (thinking only, or a model that does not stream)."""
    duration: float
    """Seconds from sending the request to the whole response (of the attempt that succeeded)."""
    retries: int
    """Failed attempts before this one (each followed by a `Retrying`)."""


@dataclass(frozen=True)
class ToolCallStreaming(AgentEvent):
    """The model began writing a call to the tool `name`; its input is still streaming in."""

    name: str


@dataclass(frozen=True)
class ToolCallStarted(AgentEvent):
    """The executor took up a call; the permission gate has not judged it yet (it may ask)."""

    id: str
    name: str
    input: JSON


@dataclass(frozen=True)
class ToolCallRunning(AgentEvent):
    """The call was admitted (by a rule, a mode or the user's yes) and its tool is running now."""

    id: str
    name: str
    input: JSON
    parallel: bool = False
    """True when it runs alongside other calls of its turn (read-only ones, or Task calls); their
    `ToolCallFinished` events come in call order once each is done."""


@dataclass(frozen=True)
class ToolCallFinished(AgentEvent):
    """A call's result, exactly one per call: also for a call that was denied, invalid or interrupted."""

    id: str
    name: str
    input: JSON
    result: ToolResult
    interrupted: bool = False
    """The user interrupted the turn before this call finished (it may never have started)."""
    duration: float | None = None
    """Seconds the tool ran (its PostToolUse hooks and the permission question not included);
    None for a call that never ran (denied, invalid, unknown, interrupted before it started)."""


@dataclass(frozen=True)
class ToolResultsMessage(AgentEvent):
    """The one user message carrying every tool result of a turn."""

    message: JSON


@dataclass(frozen=True)
class Retrying(AgentEvent):
    """A request failed and is tried again after `delay` seconds."""

    attempt: int
    """1 for the first retry."""
    delay: float
    reason: str
    """What went wrong, in a sentence: `API error 529: Overloaded`."""
    fault: str
    """The same in a few words: `overloaded`."""
    retries: int
    """How many retries there are in all before the error ends the turn."""

    def plan(self, seconds: float | None = None) -> str:
        """`retrying in 2s (overloaded, attempt 1 of 3)`; `seconds` for a countdown (default: `delay`)."""
        wait = self.delay if seconds is None else seconds
        shown = f"{math.ceil(wait)}" if wait >= 1 or seconds is not None else f"{wait:.2g}"
        return f"retrying in {shown}s ({self.fault}, attempt {self.attempt} of {self.retries})"


@dataclass(frozen=True)
class Notice(AgentEvent):
    """Something the user should know that is not an error ending the run."""

    text: str


@dataclass(frozen=True)
class SubagentStarted(AgentEvent):
    """A Task call started a sub-agent. `agent_id` is the parent's; the sub-agent's own events
    carry `subagent_id` as their `agent_id` until its `SubagentFinished`."""

    subagent_id: str
    parent_tool_use_id: str
    """The id of the Task call that started it."""
    subagent_type: str
    """`Explore`, `general-purpose` or a definition's name."""
    description: str
    """The Task call's 3-5 words, for the UI."""
    color: str = ""
    """The colour its definition gives its name (`color:`), as the terminal names it; "" for none."""


@dataclass(frozen=True)
class SubagentFinished(AgentEvent):
    """A sub-agent ended: with its final answer, or with `error` saying what stopped it."""

    subagent_id: str
    parent_tool_use_id: str
    turns: int
    tool_calls: int
    usage: Usage
    error: str | None = None
    transcript: str | None = None
    """The path of the sub-agent's own transcript, when one was written."""


Event = (
    MessageAdded
    | TurnStarting
    | TextDelta
    | ReasoningDelta
    | AssistantMessage
    | ModelResponded
    | ToolCallStreaming
    | ToolCallStarted
    | ToolCallRunning
    | ToolCallFinished
    | ToolResultsMessage
    | Retrying
    | Notice
    | SubagentStarted
    | SubagentFinished
)
EventSink = Callable[[Event], None]


class SerializedSink:
    """Hands events to `sink` one at a time, whichever thread emits them (sub-agents run in threads
    of their own), so a front end never handles two at once."""

    def __init__(self, sink: EventSink) -> None:
        self._sink = sink
        self._lock = threading.RLock()

    def __call__(self, event: Event) -> None:
        with self._lock:
            self._sink(event)
