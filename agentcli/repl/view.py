"""What the terminal shows during a turn: streamed Markdown, tool lines, diffs, a spinner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.live import Live

from agentcli.events import (
    AssistantMessage,
    Event,
    Retrying,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolResultsMessage,
)
from agentcli.output.labels import call_label
from agentcli.tools.todo import Todo
from agentcli.ui.markdown_stream import MarkdownStream
from agentcli.ui.tool_render import Spinner, ToolCallLine, render_event

INTERRUPT_HINT = "esc to interrupt"


class TurnView:
    """An event sink for one session; call `begin()` before a turn and `end()` after it."""

    def __init__(self, console: Console, cwd: Path) -> None:
        self.console = console
        self.cwd = cwd
        self.live_ok = console.is_terminal and not console.is_dumb_terminal
        self._answer: MarkdownStream | None = None
        self._spinner: Spinner | None = None
        self._live: Live | None = None
        self.turn_tokens = 0
        self.current_task: Callable[[], Todo | None] = lambda: None
        """The task in progress in the model's task list: the spinner says it while the model works."""

    def begin(self) -> None:
        self.turn_tokens = 0
        self._wait(self._working_label())

    def end(self) -> None:
        self._close_answer()
        self._stop_spinner()

    def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            if not event.text:  # a text block ended: draw all of it (a tool call may stream for a while)
                if self._answer is not None:
                    self._answer.flush()
                return
            self._stop_spinner()
            if self._answer is None:
                self._answer = MarkdownStream(self.console)
            self._answer.feed(event.text)
            return
        if isinstance(event, Retrying) and self._answer is not None:
            self._close_answer()
            self.console.print("  (the partial answer above was cut off; it is being asked for again)", style="dim")
        self._close_answer()
        if isinstance(event, AssistantMessage):
            self.turn_tokens += event.usage.output_tokens
            if event.stop_reason != "tool_use":
                self._stop_spinner()
            return
        if isinstance(event, ToolCallStarted):
            self._wait(f"Running {call_label(event.name, event.input, width=50)}…")
            return
        if isinstance(event, ToolResultsMessage):  # the results go back: wait for the model again
            self._wait(self._working_label())
            return
        self._stop_spinner()
        if isinstance(event, ToolCallFinished):
            self.console.print(ToolCallLine.from_event(event, cwd=self.cwd))
        renderable = render_event(event, cwd=self.cwd)
        if renderable is not None:
            self.console.print(renderable)
        if isinstance(event, ToolCallFinished):
            self._wait(self._working_label())

    def pause(self) -> None:
        """Take the spinner down (e.g. while the permission prompt is on screen)."""
        self._stop_spinner()

    def _working_label(self) -> str:
        task = self.current_task()
        return f"{task.active_form}…" if task is not None else "Thinking…"

    def _close_answer(self) -> None:
        if self._answer is not None:
            self._answer.finish()
            self._answer = None

    def _wait(self, label: str) -> None:
        if not self.live_ok:
            return
        if self._spinner is not None and self._live is not None:
            self._spinner.label = label
            return
        self._spinner = Spinner(label, hint=INTERRUPT_HINT)
        self._spinner.tokens = self.turn_tokens
        self._live = Live(self._spinner, console=self.console, transient=True, refresh_per_second=8)
        self._live.start()

    def _stop_spinner(self) -> None:
        if self._live is not None:
            self._live.stop()
        self._live = None
        self._spinner = None
