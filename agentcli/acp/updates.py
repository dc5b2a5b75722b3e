"""agentcli's events as the Agent Client Protocol's `session/update` notifications.

    updates = SessionUpdates(cwd)
    for update in updates.of(event):       # zero or more `update` objects per event
        connection.notify("session/update", {"sessionId": sid, "update": update})

- the answer's text and the reasoning stream as `agent_message_chunk` and `agent_thought_chunk`;
- a call becomes a `tool_call` (pending, with its kind, title, the paths it names as
  locations and its raw input) when the model makes it, `in_progress` when it runs, and
  `completed` or `failed` with its result as text (and, for Write and Edit, the change as a
  `diff`) when it ends;
- the task list (TodoWrite) becomes a `plan` with every entry, each time it changes.

Only the session's own agent is shown: a sub-agent's work is summed up in its Task call's result.
`pending_call(tool, input)` names the call the gate is asking about, for the permission request.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from agentcli.contracts import JSON
from agentcli.events import (
    MAIN_AGENT,
    Event,
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolCallRunning,
    ToolCallStarted,
)
from agentcli.output.labels import PATH_FIELDS, call_label

TOOL_KINDS = {
    "Read": "read",
    "Write": "edit",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Bash": "execute",
    "Grep": "search",
    "Glob": "search",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "TodoWrite": "think",
    "Task": "think",
    "ExitPlanMode": "switch_mode",
}
"""ACP's `ToolKind` of each built-in tool (the client picks an icon by it); any other: `other`."""
PLAN_STATUSES = ("pending", "in_progress", "completed")


class SessionUpdates:
    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._unjudged: dict[str, tuple[str, JSON]] = {}
        """Calls made and not yet running or finished: the gate may be asking about one of them."""

    def of(self, event: Event) -> Iterator[JSON]:
        if event.agent_id != MAIN_AGENT:
            return
        if isinstance(event, TextDelta) and event.text:
            yield _chunk("agent_message_chunk", event.text)
        elif isinstance(event, ReasoningDelta) and event.text:
            yield _chunk("agent_thought_chunk", event.text)
        elif isinstance(event, ToolCallStarted):
            self._unjudged[event.id] = (event.name, event.input)
            yield self._tool_call(event)
        elif isinstance(event, ToolCallRunning):
            self._unjudged.pop(event.id, None)
            yield {"sessionUpdate": "tool_call_update", "toolCallId": event.id, "status": "in_progress"}
        elif isinstance(event, ToolCallFinished):
            self._unjudged.pop(event.id, None)
            yield self._finished(event)
            if event.name == "TodoWrite" and not event.result.is_error:
                yield from _plan(event.input)

    def pending_call(self, tool: str, tool_input: JSON) -> str | None:
        """The id of the call made and not yet running with this tool and input (the one the gate asks about)."""
        return next((i for i, call in self._unjudged.items() if call == (tool, tool_input)), None)

    def _tool_call(self, event: ToolCallStarted) -> JSON:
        return {
            "sessionUpdate": "tool_call",
            "toolCallId": event.id,
            "title": call_label(event.name, event.input, width=120, cwd=self.cwd),
            "kind": TOOL_KINDS.get(event.name, "other"),
            "status": "pending",
            "locations": self._locations(event.input),
            "rawInput": event.input,
        }

    def _finished(self, event: ToolCallFinished) -> JSON:
        result = event.result
        content: list[JSON] = []
        diff = self._diff(event.name, event.input) if not result.is_error else None
        if diff is not None:
            content.append(diff)
        text = result.content if result.is_error or diff is None else (result.summary or result.content)
        if text:
            content.append({"type": "content", "content": {"type": "text", "text": text}})
        return {
            "sessionUpdate": "tool_call_update",
            "toolCallId": event.id,
            "status": "failed" if result.is_error else "completed",
            "content": content,
            "rawOutput": {"content": result.content, "isError": result.is_error},
        }

    def _locations(self, tool_input: JSON) -> list[JSON]:
        paths = [tool_input[name] for name in PATH_FIELDS if isinstance(tool_input.get(name), str)]
        return [{"path": os.path.join(self.cwd, path)} for path in paths if path]

    def _diff(self, tool: str, tool_input: JSON) -> JSON | None:
        path = tool_input.get("file_path")
        if not isinstance(path, str):
            return None
        absolute = os.path.join(self.cwd, path)
        if tool == "Write" and isinstance(tool_input.get("content"), str):
            return {"type": "diff", "path": absolute, "oldText": None, "newText": tool_input["content"]}
        old, new = tool_input.get("old_string"), tool_input.get("new_string")
        if tool == "Edit" and isinstance(old, str) and isinstance(new, str):
            return {"type": "diff", "path": absolute, "oldText": old, "newText": new}
        return None


def _chunk(kind: str, text: str) -> JSON:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def _plan(tool_input: JSON) -> Iterator[JSON]:
    todos = tool_input.get("todos")
    if not isinstance(todos, list):
        return
    entries = [
        {"content": str(todo.get("content", "")), "priority": "medium", "status": todo["status"]}
        for todo in todos
        if isinstance(todo, dict) and todo.get("status") in PLAN_STATUSES
    ]
    yield {"sessionUpdate": "plan", "entries": entries}
