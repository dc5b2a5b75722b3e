"""Turn loop events into what `agentcli run` prints, per --output-format."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from agentcli.contracts import JSON
from agentcli.events import (
    MAIN_AGENT,
    AssistantMessage,
    Event,
    Notice,
    ReasoningDelta,
    Retrying,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolResultsMessage,
)
from agentcli.output.labels import call_label, subagent_counts
from agentcli.output.reasoning import ReasoningLines
from agentcli.output.streams import write_err, write_out
from agentcli.output.subagents import SubagentRun, SubagentRuns
from agentcli.safe_text import for_terminal


@dataclass
class Outcome:
    """How a run ended, for the final report."""

    subtype: str
    result: str
    is_error: bool
    session_id: str
    num_turns: int
    duration_ms: int
    usage: dict[str, int]
    total_cost_usd: float

    def as_json(self) -> JSON:
        return {"type": "result", **self.__dict__}


class TextReporter:
    """Final answer alone on stdout; one progress line per tool call (and notices) on stderr.

    A sub-agent's lines start with its name, `[Explore] ● Grep(load_config)`, and it ends
    with one: `[Explore] done · 3 turns · 6 tool calls · 12.4k tokens` (or `✗` and the error).

    What goes to a terminal is shown through `safe_text.for_terminal` (a command's escape
    sequences are printed visibly); a final answer piped elsewhere is written as it is.

    With `verbose`, the main agent's streamed reasoning goes to stderr too, a line at a time
    under `✻ Thinking…`, dimmed when stderr is a terminal.
    """

    def __init__(
        self, out: TextIO | None = None, err: TextIO | None = None, *, cwd: Path | None = None, verbose: bool = False
    ) -> None:
        self.out = out or sys.stdout  # looked up now, not at import: a redirected stdout is honoured
        self.err = err or sys.stderr
        self.cwd = cwd
        """The project: files inside it are named relative to it."""
        self.subagents = SubagentRuns()
        self._reasoning = ReasoningLines() if verbose else None

    def start(self, init: JSON) -> None:
        pass

    def __call__(self, event: Event) -> None:
        prefix = _whose(event, self.subagents.observe(event))
        if self._reasoning is not None and event.agent_id == MAIN_AGENT:
            if isinstance(event, ReasoningDelta):
                self._dimmed(self._reasoning.feed(event.text))
                return
            if self._reasoning.active:
                self._dimmed(self._reasoning.end())
        if isinstance(event, ToolCallFinished):
            mark = "✗" if event.result.is_error else "●"
            summary = (event.result.summary or "").splitlines()
            tail = f" — {summary[0]}" if summary else ""
            self._progress(f"{prefix}{mark} {call_label(event.name, event.input, cwd=self.cwd)}{tail}")
            if event.agent_id == MAIN_AGENT:
                self.subagents.release(event.id)
        elif isinstance(event, Retrying):
            self._progress(f"{prefix}… {event.reason}; {event.plan()}")
        elif isinstance(event, Notice):
            self._progress(f"{prefix}! {event.text}")
        elif isinstance(event, SubagentFinished):
            counts = subagent_counts(event.tool_calls, event.usage, event.turns)
            self._progress(f"{prefix}✗ {event.error} · {counts}" if event.error else f"{prefix}done · {counts}")

    def finish(self, outcome: Outcome) -> None:
        if outcome.is_error:
            self._progress(f"Error: {outcome.result}")
        elif outcome.result:
            result = for_terminal(outcome.result) if self.out.isatty() else outcome.result
            write_out(self.out, result.rstrip("\n") + "\n")

    def _progress(self, line: str) -> None:
        write_err(self.err, for_terminal(line))

    def _dimmed(self, lines: list[str]) -> None:
        """Reasoning lines (already safe to print), dimmed on a terminal."""
        dim = self.err.isatty() and not os.environ.get("NO_COLOR")
        for line in lines:
            write_err(self.err, f"\x1b[2m{line}\x1b[0m" if dim else line)


def _whose(event: Event, run: SubagentRun | None) -> str:
    """`[Explore] ` before a sub-agent's lines (its end's included), nothing before the main agent's."""
    if run is not None:
        return f"[{run.name}] "
    return "" if event.agent_id == MAIN_AGENT else f"[{event.agent_id}] "


class JsonReporter:
    """One result object at the end (errors and notices also go to stderr as text)."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None, *, cwd: Path | None = None) -> None:
        self.out = out or sys.stdout
        self.text = TextReporter(self.out, err, cwd=cwd)

    def start(self, init: JSON) -> None:
        pass

    def __call__(self, event: Event) -> None:
        if isinstance(event, (Retrying, Notice, SubagentStarted)):  # a sub-agent's notice is named after it
            self.text(event)

    def finish(self, outcome: Outcome) -> None:
        _write_json(self.out, outcome.as_json())


class StreamJsonReporter:
    """One JSON object per line: system init, each message, then the result.

    As in Claude Code, each message says whose it is: `parent_tool_use_id` is null for the
    main agent's and the id of the Task call that started the sub-agent for a sub-agent's.
    """

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.session_id = ""
        self.subagents = SubagentRuns()

    def start(self, init: JSON) -> None:
        self.session_id = init["session_id"]
        _write_json(self.out, {"type": "system", "subtype": "init", **init})

    def __call__(self, event: Event) -> None:
        run = self.subagents.observe(event)
        parent = run.started.parent_tool_use_id if run is not None and event.agent_id != MAIN_AGENT else None
        if isinstance(event, AssistantMessage):
            self._message("assistant", event.message, parent)
        elif isinstance(event, ToolResultsMessage):
            self._message("user", event.message, parent)
        elif isinstance(event, ToolCallFinished) and event.agent_id == MAIN_AGENT:
            self.subagents.release(event.id)

    def system(self, subtype: str, **fields: object) -> None:
        """A `system` line of the session's own (`input_error`: a line of stream-json input refused)."""
        _write_json(self.out, {"type": "system", "subtype": subtype, **fields, "session_id": self.session_id})

    def _message(self, kind: str, message: JSON, parent_tool_use_id: str | None) -> None:
        line = {"type": kind, "message": message, "parent_tool_use_id": parent_tool_use_id}
        _write_json(self.out, {**line, "session_id": self.session_id})

    def finish(self, outcome: Outcome) -> None:
        _write_json(self.out, outcome.as_json())


def _write_json(out: TextIO, value: Any) -> None:
    write_out(out, json.dumps(value, ensure_ascii=False) + "\n")
