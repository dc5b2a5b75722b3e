"""What the manager tells the rest of agentcli about servers, in agentcli's own types (no SDK)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agentcli.contracts import JSON
from agentcli.mcp.config import ServerConfig

State = Literal["connecting", "connected", "failed", "needs login", "needs approval", "disabled"]


@dataclass(frozen=True)
class ToolInfo:
    """One tool as the server lists it."""

    name: str
    description: str
    input_schema: JSON
    read_only: bool
    """The server annotated it `readOnlyHint: true`."""
    title: str = ""


@dataclass(frozen=True)
class ServerStatus:
    """One server at one moment (a snapshot: ask the manager again for news)."""

    config: ServerConfig
    state: State
    error: str = ""
    """Why it failed, or how to approve, enable or log in to it."""
    tools: tuple[ToolInfo, ...] = ()
    """Its tools while connected (the last listing)."""
    offers: frozenset[str] = field(default_factory=frozenset)
    """What else it offers: "prompts", "resources"."""

    @property
    def name(self) -> str:
        return self.config.name


@dataclass(frozen=True)
class CallOutcome:
    """A tool call's answer: text parts, images as (media type, base64 data), and whether it is an error."""

    texts: tuple[str, ...] = ()
    images: tuple[tuple[str, str], ...] = ()
    is_error: bool = False


class CallCancelled(Exception):
    """The user interrupted (the call's cancel event was set) before the server answered."""


class CallTimedOut(Exception):
    """The server did not answer within the time given; the request was abandoned (the server is
    told to cancel it). `seconds` is that time."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no answer within {seconds:g} s")
        self.seconds = seconds


class ServerDown(Exception):
    """The server is not connected (it failed, stopped, or was never started); the message says so
    and what to do."""


@dataclass(frozen=True)
class PromptInfo:
    """One prompt as the server lists it: `/mcp__<server>__<name>` in the REPL."""

    name: str
    description: str = ""
    arguments: tuple[str, ...] = ()
    """Its declared arguments, in order."""
    required: frozenset[str] = field(default_factory=frozenset)
