"""Following sub-agents through their events, for the front ends.

A Task call's sub-agent announces itself with `SubagentStarted` (carrying the parent's
`agent_id`), then emits its own events under its own id, then ends with `SubagentFinished`.
`SubagentRuns.observe` sorts each event to the sub-agent it is about and keeps what a front
end shows of it: its type and description, the Task call that started it, a running count of
its tool calls and tokens, its latest action and, when asked, its conversation.

Sub-agents run in threads of their own, so `observe` may be called from several at once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from agentcli.contracts import Usage
from agentcli.conversation import text_block, text_of
from agentcli.events import (
    MAIN_AGENT,
    AssistantMessage,
    Event,
    MessageAdded,
    Notice,
    Retrying,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolCallStarted,
)
from agentcli.output.labels import call_label

KEPT = (AssistantMessage, ToolCallFinished, Notice)
"""The events of a sub-agent's conversation that `SubagentRuns(keep_conversations=True)` keeps."""


@dataclass
class SubagentRun:
    """One sub-agent, as far as its events have told."""

    started: SubagentStarted
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    last_action: str = ""
    """The latest call it made (`Grep(load_config)`), or the retry it waits for."""
    finished: SubagentFinished | None = None
    prompt: str = ""
    """The text of its first message: the Task call's prompt."""
    conversation: list[Event] = field(default_factory=list)
    """Its assistant messages, finished tool calls and notices, in order (when they are kept)."""

    @property
    def name(self) -> str:
        """Its type: `Explore`, `general-purpose`, a definition's name."""
        return self.started.subagent_type


class SubagentRuns:
    """The sub-agents of a session's turns. The conversation of the latest to finish is kept
    with `keep_conversations` (for `/agents last`); those of earlier ones are let go."""

    def __init__(self, *, keep_conversations: bool = False) -> None:
        self.keep_conversations = keep_conversations
        self.last_finished: SubagentRun | None = None
        self._by_agent: dict[str, SubagentRun] = {}
        """Running sub-agents, by their agent id."""
        self._by_call: dict[str, SubagentRun] = {}
        """Sub-agents by the Task call that started them, until `release`d."""
        self._lock = threading.Lock()

    def observe(self, event: Event) -> SubagentRun | None:
        """Take `event` into account; returns the sub-agent it is about (the one a
        `SubagentStarted` or `SubagentFinished` starts or ends, or the one whose own event it
        is), None for the main agent's own events and for a sub-agent never announced."""
        with self._lock:
            if isinstance(event, SubagentStarted):
                run = SubagentRun(event)
                self._by_agent[event.subagent_id] = self._by_call[event.parent_tool_use_id] = run
                return run
            if isinstance(event, SubagentFinished):
                finished = self._by_agent.pop(event.subagent_id, None)
                if finished is not None:
                    finished.finished = event
                    self.last_finished = finished
                return finished
            if event.agent_id == MAIN_AGENT:
                return None
            own = self._by_agent.get(event.agent_id)
            if own is not None:
                self._count(own, event)
            return own

    def _count(self, run: SubagentRun, event: Event) -> None:
        if isinstance(event, ToolCallStarted):
            run.tool_calls += 1
            run.last_action = call_label(event.name, event.input)
        elif isinstance(event, AssistantMessage):
            run.usage.add(event.usage)
        elif isinstance(event, Retrying):
            run.last_action = event.plan()
        elif isinstance(event, MessageAdded) and not run.prompt and event.message.get("role") == "user":
            content = event.message.get("content")
            blocks = content if isinstance(content, list) else [text_block(str(content))]
            run.prompt = text_of(b for b in blocks if isinstance(b, dict))
        if self.keep_conversations and isinstance(event, KEPT):
            run.conversation.append(event)

    def for_call(self, tool_use_id: str) -> SubagentRun | None:
        """The sub-agent the Task call `tool_use_id` started, if it started one."""
        with self._lock:
            return self._by_call.get(tool_use_id)

    def release(self, tool_use_id: str) -> SubagentRun | None:
        """Once the Task call `tool_use_id` has its result: its sub-agent, forgotten (but for
        `last_finished`)."""
        with self._lock:
            return self._by_call.pop(tool_use_id, None)
