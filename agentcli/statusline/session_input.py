"""The JSON a status line command reads on its stdin: Claude Code's fields, from what agentcli knows.

    {"hook_event_name": "Status", "session_id": …, "transcript_path": …, "cwd": …,
     "model": {"id": …, "display_name": …}, "workspace": {"current_dir", "project_dir", "added_dirs"},
     "version": …, "permission_mode": …,
     "cost": {"total_cost_usd", "total_duration_ms", "total_api_duration_ms",
              "total_lines_added", "total_lines_removed"},
     "context_window": {"total_input_tokens", "total_output_tokens", "context_window_size",
                        "used_percentage", "remaining_percentage", "current_usage": {…} or null},
     "exceeds_200k_tokens": …}

agentcli has no display names for models (`display_name` is the model's name) and no output
styles (`output_style` is left out), and knows no plan's rate limits (`rate_limits` is left
out). `SessionTally` counts what the session's events say and nothing else keeps: the time the
model requests took and the lines edits added and removed (sub-agents' included).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from agentcli import __version__
from agentcli.contracts import JSON, Usage
from agentcli.events import MAIN_AGENT, AssistantMessage, Event, ModelResponded, ToolCallFinished, ToolResultsMessage

LARGE_CONTEXT = 200_000
"""Claude Code's `exceeds_200k_tokens`."""


@dataclass
class SessionTally:
    """What the status line input says that only the events tell."""

    started: float = field(default_factory=time.monotonic)
    api_seconds: float = 0.0
    lines_added: int = 0
    lines_removed: int = 0
    last_usage: Usage | None = None
    """The usage of the main agent's latest response (`current_usage`)."""

    def observe(self, event: Event) -> bool:
        """Count `event`; True when the conversation changed (a message added to it)."""
        if isinstance(event, ModelResponded):
            self.api_seconds += event.duration
        elif isinstance(event, ToolCallFinished) and event.result.diff and not event.result.is_error:
            added, removed = changed_lines(event.result.diff)
            self.lines_added += added
            self.lines_removed += removed
        elif isinstance(event, AssistantMessage) and event.agent_id == MAIN_AGENT:
            self.last_usage = event.usage
            return True
        return isinstance(event, ToolResultsMessage) and event.agent_id == MAIN_AGENT


def changed_lines(diff: str) -> tuple[int, int]:
    """Lines a unified diff adds and removes (its `+++`/`---` headers not counted)."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


@dataclass(frozen=True)
class SessionFacts:
    """The session as the status line describes it, read by the REPL when something changed."""

    session_id: str
    transcript_path: Path
    cwd: Path
    added_dirs: tuple[Path, ...]
    model: str
    permission_mode: str
    usage: Usage
    """The conversation's tokens, its sub-agents' and a resumed transcript's earlier ones included."""
    cost_usd: float
    context_tokens: int
    """How much of the context window the conversation fills (0: nothing measured yet)."""
    context_window: int


def status_input(facts: SessionFacts, tally: SessionTally) -> JSON:
    used = facts.context_tokens
    window = max(1, facts.context_window)
    used_percentage = round(min(100.0, used * 100 / window), 1)
    current = tally.last_usage if used else None  # a new conversation has no current usage
    return {
        "hook_event_name": "Status",
        "session_id": facts.session_id,
        "transcript_path": str(facts.transcript_path),
        "cwd": str(facts.cwd),
        "model": {"id": facts.model, "display_name": facts.model},
        "workspace": {
            "current_dir": str(facts.cwd),
            "project_dir": str(facts.cwd),
            "added_dirs": [str(folder) for folder in facts.added_dirs],
        },
        "version": __version__,
        "permission_mode": facts.permission_mode,
        "cost": {
            "total_cost_usd": facts.cost_usd,
            "total_duration_ms": int((time.monotonic() - tally.started) * 1000),
            "total_api_duration_ms": int(tally.api_seconds * 1000),
            "total_lines_added": tally.lines_added,
            "total_lines_removed": tally.lines_removed,
        },
        "context_window": {
            "total_input_tokens": facts.usage.total_input,
            "total_output_tokens": facts.usage.output_tokens,
            "context_window_size": facts.context_window,
            "used_percentage": used_percentage,
            "remaining_percentage": round(100.0 - used_percentage, 1),
            "current_usage": None
            if current is None
            else {
                "input_tokens": current.input_tokens,
                "output_tokens": current.output_tokens,
                "cache_creation_input_tokens": current.cache_creation_input_tokens,
                "cache_read_input_tokens": current.cache_read_input_tokens,
            },
        },
        "exceeds_200k_tokens": used > LARGE_CONTEXT,
    }
