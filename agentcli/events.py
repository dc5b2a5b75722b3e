"""Typed events the agent loop emits. Front ends (terminal, json, stream-json) consume them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentcli.contracts import JSON, ToolResult, Usage


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class AssistantMessage:
    """A complete assistant turn, exactly as appended to the conversation."""

    message: JSON
    stop_reason: str
    usage: Usage


@dataclass(frozen=True)
class ToolCallStarted:
    id: str
    name: str
    input: JSON


@dataclass(frozen=True)
class ToolCallFinished:
    id: str
    name: str
    input: JSON
    result: ToolResult


@dataclass(frozen=True)
class ToolResultsMessage:
    """The one user message carrying every tool result of a turn."""

    message: JSON


@dataclass(frozen=True)
class Retrying:
    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True)
class Notice:
    """Something the user should know that is not an error ending the run."""

    text: str


Event = TextDelta | AssistantMessage | ToolCallStarted | ToolCallFinished | ToolResultsMessage | Retrying | Notice
EventSink = Callable[[Event], None]
