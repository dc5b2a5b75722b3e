"""What the terminal shows during a turn: streamed Markdown, tool lines, diffs, a spinner.

A tool call's line is live while it runs: `● Bash(make)` above the spinner ("Running… 3s ·
esc to interrupt"), several lines for read-only calls running side by side. When a call
finishes, its line and result are printed for good, in call order, so lines never
interleave; while the model is still writing a call's input the spinner says "Preparing
Write…". A call the user interrupts keeps its line, with `⎿ Interrupted` under it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

from agentcli.events import (
    AssistantMessage,
    Event,
    Retrying,
    TextDelta,
    ToolCallFinished,
    ToolCallRunning,
    ToolCallStarted,
    ToolCallStreaming,
    ToolResultsMessage,
)
from agentcli.tools.todo import Todo
from agentcli.ui.markdown_stream import MarkdownStream
from agentcli.ui.tool_render import InterruptedLine, Spinner, ToolCallLine, ToolResultView, render_event

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
        self._running: tuple[ToolCallRunning, ...] = ()
        """Calls whose tool runs now: their lines are live above the spinner."""
        self._stopped: list[ToolCallFinished] = []
        """Calls the user interrupted in this turn, shown by `interrupted()`."""
        self._expandable: ToolCallFinished | None = None
        """The latest result whose preview left lines out: Ctrl-O shows it in full."""

    def begin(self) -> None:
        self.turn_tokens = 0
        self._running, self._stopped = (), []
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
        if isinstance(event, (ToolCallStreaming, ToolCallStarted, ToolCallRunning, ToolCallFinished)):
            self._tool_event(event)
            return
        if isinstance(event, ToolResultsMessage):  # the results go back: wait for the model again
            self._wait(self._working_label())
            return
        self._stop_spinner()
        renderable = render_event(event, cwd=self.cwd)
        if renderable is not None:
            self.console.print(renderable)

    def _tool_event(self, event: ToolCallStreaming | ToolCallStarted | ToolCallRunning | ToolCallFinished) -> None:
        if isinstance(event, ToolCallStreaming):
            self._wait(f"Preparing {event.name}…")
        elif isinstance(event, ToolCallRunning):
            self._running += (event,)
            if len(self._running) == 1:  # a new spinner: its seconds are the call's
                self._stop_spinner()
                self._wait("Running…")
        elif isinstance(event, ToolCallFinished):
            self._running = tuple(call for call in self._running if call.id != event.id)
            if event.interrupted:
                self._stopped.append(event)
                return
            result = ToolResultView(event, cwd=self.cwd)
            if result.hidden:
                self._expandable = event
            self.console.print(Group(ToolCallLine.from_event(event, cwd=self.cwd), result))
            if not self._running:
                self._stop_spinner()
                self._wait(self._working_label())
        # ToolCallStarted: nothing to show until the gate has decided (it may ask first)

    def interrupted(self) -> None:
        """After an interrupt: each call it stopped keeps its line with `⎿ Interrupted` under it,
        and the last line says what to do next."""
        self.end()
        stopped, self._stopped, self._running = self._stopped, [], ()
        for event in stopped:
            self.console.print(ToolCallLine(event.name, event.input, cwd=self.cwd))
            self.console.print(InterruptedLine(hint=event is stopped[-1]))
        if not stopped:
            self.console.print(InterruptedLine(hint=True))

    def expand_last_result(self) -> None:
        """Ctrl-O at the prompt: the latest result whose preview left lines out, in full."""
        event = self._expandable
        if event is None:
            self.console.print("No tool output was cut short yet.", style="dim")
            return
        self.console.print(ToolCallLine.from_event(event, cwd=self.cwd))
        self.console.print(ToolResultView(event, cwd=self.cwd, full=True))

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
        self._live = Live(
            console=self.console, transient=True, refresh_per_second=8, get_renderable=self._live_renderable
        )
        self._live.start()

    def _live_renderable(self) -> RenderableType:
        """The running calls' lines, then the spinner (read by the Live's refresh thread)."""
        lines = [ToolCallLine(call.name, call.input, cwd=self.cwd) for call in self._running]
        return Group(*lines, self._spinner or Text())

    def _stop_spinner(self) -> None:
        if self._live is not None:
            self._live.stop()
        self._live = None
        self._spinner = None
