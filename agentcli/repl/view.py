"""What the terminal shows during a turn: streamed Markdown, tool lines, diffs, and at the
bottom a live region: the running calls, the spinner, the text typed ahead, the status line.

    ● Bash(make test)
    ⠋ Running… 4s · 1.2k tokens · esc to interrupt
    » run the tests next   (queued for your next prompt)
     claude-sonnet-5-5 · plan · 2.7k/1M context · $0.01

A tool call's line is live while it runs (several lines for read-only calls running side by
side). When a call finishes, its line and result are printed for good, in call order, so
lines never interleave; while the model is still writing a call's input the spinner says
"Preparing Write…". A call the user interrupts keeps its line, with `⎿ Interrupted` under it.

Reasoning an OpenAI-compatible server streams (`ReasoningDelta`) is printed dimmed, a line
at a time under `✻ Thinking…` (`agentcli.output.reasoning`), before the answer or the calls.

A Task call's line is its sub-agent's (`agentcli.ui.subagent_render`): its description, a
count of its tool calls and tokens and its latest action, kept up to date as the sub-agent's
own events arrive, then one summary line. The sub-agent's text and tool calls are not
printed; they are kept in memory for `/agents last` (`show_last_subagent`). Sub-agents run
in threads of their own: their events only update what the region draws.

Everything else is printed above the region (rich draws prints above a live display), and
the streaming tail of an answer (`MarkdownStream`'s own live display, which rich nests in
this one) is drawn above it too, cropped so that the region always fits the screen.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleDimensions, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.segment import Segment

from agentcli.contracts import JSON
from agentcli.conversation import text_of
from agentcli.events import (
    MAIN_AGENT,
    AssistantMessage,
    Event,
    Notice,
    ReasoningDelta,
    Retrying,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallRunning,
    ToolCallStarted,
    ToolCallStreaming,
    ToolResultsMessage,
)
from agentcli.output.reasoning import ReasoningLines
from agentcli.output.subagents import SubagentRuns
from agentcli.tools.todo import Todo
from agentcli.ui.status import QueuedInput, Status, StatusLine
from agentcli.ui.subagent_render import TASK_TOOL, SubagentLine, SubagentSummary, task_title
from agentcli.ui.tool_render import (
    ApiErrorLine,
    InterruptedLine,
    NoticeLine,
    Spinner,
    ToolCallLine,
    ToolResultView,
    render_event,
)

if TYPE_CHECKING:
    from agentcli.ui.markdown_stream import MarkdownStream  # imported at the first answer (see repl.warmup)

INTERRUPT_HINT = "esc to interrupt"


class TurnView:
    """An event sink for one session; call `begin()` before a turn and `end()` after it.

    `status` is asked for the status line each time the region is redrawn (None: no status line).
    """

    def __init__(self, console: Console, cwd: Path, status: Callable[[], Status] | None = None) -> None:
        self.console = console
        self.cwd = cwd
        self.live_ok = console.is_terminal and not console.is_dumb_terminal
        self._status = status
        self._typed: Callable[[], str] = lambda: ""
        self._answer: MarkdownStream | None = None
        self._reasoning = ReasoningLines()
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
        self.subagents = SubagentRuns(keep_conversations=True)
        self._judging: set[tuple[str, str]] = set()
        """(agent, call) of the calls the gate is judging: it may be asking about one of them."""
        self._in_turn = False
        self._asking = 0
        """Questions on screen now (`asking`): the region stays down meanwhile."""
        self._region_lock = threading.RLock()
        """Held while an event is drawn and by the region's refresh thread while it redraws: rich
        computes how far up to move before it writes a print, and a redraw in between would make
        the print overwrite the line above. Sub-agents' threads draw under it too."""

    def begin(self, typed: Callable[[], str] = lambda: "") -> None:
        """A turn starts; `typed` gives what the user has typed ahead so far, to show under the spinner."""
        self.turn_tokens = 0
        self._running, self._stopped = (), []
        self._judging.clear()
        self._typed = typed
        self._in_turn = True
        self._wait(self._working_label())

    def end(self) -> None:
        self._in_turn = False
        self._end_reasoning()
        self._close_answer()
        self._stop_spinner()

    def __call__(self, event: Event) -> None:
        with self._region_lock:  # the region's refresh thread redraws only between whole prints
            self._show(event)

    def _show(self, event: Event) -> None:
        self._track_judging(event)
        if event.agent_id != MAIN_AGENT or isinstance(event, (SubagentStarted, SubagentFinished)):
            self._subagent_event(event)
            return
        if isinstance(event, ReasoningDelta):
            self._close_answer()  # reasoning after some of the answer: the answer so far stays above it
            self._show_reasoning(self._reasoning.feed(event.text))
            return
        self._end_reasoning()
        if isinstance(event, TextDelta):
            if not event.text:  # a text block ended: draw all of it (a tool call may stream for a while)
                if self._answer is not None:
                    self._answer.flush()
                return
            if self._answer is None:
                from agentcli.ui.markdown_stream import MarkdownStream

                self._answer = MarkdownStream(self.console)
            self._answer.feed(event.text)
            return
        if isinstance(event, Retrying) and self._answer is not None:
            self._close_answer()
            self.console.print("  (the partial answer above was cut off; it is being asked for again)", style="dim")
        self._close_answer()
        if isinstance(event, AssistantMessage):
            self.turn_tokens += event.usage.output_tokens
            if self._spinner is not None:
                self._spinner.tokens = self.turn_tokens
            if event.stop_reason != "tool_use":
                self._stop_spinner()
            return
        if isinstance(event, Retrying):
            self.console.print(ApiErrorLine.from_retrying(event))  # above the region: a record of what failed
            self._wait(self._working_label())
            if self._spinner is not None:
                self._spinner.retry_in(event)
            return
        if isinstance(event, (ToolCallStreaming, ToolCallStarted, ToolCallRunning, ToolCallFinished)):
            self._tool_event(event)
            return
        if isinstance(event, ToolResultsMessage):  # the results go back: wait for the model again
            self._wait(self._working_label())
            return
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
            run = self.subagents.release(event.id) if event.name == TASK_TOOL else None
            if run is not None and run.finished is not None:
                failed = run.finished.error is not None
                self.console.print(Group(SubagentLine(event.input, run, failed=failed), SubagentSummary(run.finished)))
            else:
                result = ToolResultView(event, cwd=self.cwd)
                if result.hidden:
                    self._expandable = event
                self.console.print(Group(self._call_line(event.name, event.input, event.result.is_error), result))
            if not self._running:
                self._stop_spinner()
                self._wait(self._working_label())
        # ToolCallStarted: nothing to show until the gate has decided (it may ask first)

    def _subagent_event(self, event: Event) -> None:
        """A sub-agent's own event, or its start or end: counted, and drawn by the region's
        refresh; only a notice is printed. After a question a sub-agent asked, its next call
        brings the region back (unless another question may be on screen)."""
        run = self.subagents.observe(event)
        if isinstance(event, Notice):
            name = run.name if run is not None else event.agent_id
            self.console.print(NoticeLine(f"{name}: {event.text}"))
        elif isinstance(event, (ToolCallRunning, ToolCallFinished)) and self._in_turn and not self._judging:
            self._wait("Running…")

    def _track_judging(self, event: Event) -> None:
        if isinstance(event, ToolCallStarted):
            self._judging.add((event.agent_id, event.id))
        elif isinstance(event, (ToolCallRunning, ToolCallFinished)):
            self._judging.discard((event.agent_id, event.id))

    def _call_line(
        self, name: str, tool_input: JSON, failed: bool | None = None, call_id: str | None = None
    ) -> SubagentLine | ToolCallLine:
        """A call's line; a Task call's names its sub-agent (with its counts while it runs)."""
        if name == TASK_TOOL:
            run = self.subagents.for_call(call_id) if call_id is not None else None
            return SubagentLine(tool_input, run, failed=failed)
        return ToolCallLine(name, tool_input, cwd=self.cwd, failed=failed)

    def show_last_subagent(self) -> None:
        """`/agents last`: the conversation of the latest sub-agent to finish, as kept in memory."""
        run = self.subagents.last_finished
        if run is None or run.finished is None:
            self.console.print(
                "No sub-agent has finished in this session yet: the model starts one with the Task tool.", style="dim"
            )
            return
        name, description = task_title({}, run)
        self.console.print(f"{name}({description}) · its conversation", style="bold", markup=False, highlight=False)
        if run.prompt:
            self.console.print(f"> {run.prompt.strip()}", style="dim", markup=False, highlight=False)
        for event in run.conversation:
            if isinstance(event, AssistantMessage):
                answer = text_of(event.message["content"])
                if answer.strip():
                    from agentcli.ui.markdown_stream import MarkdownStream

                    with MarkdownStream(self.console) as view:
                        view.feed(answer.strip())
            elif isinstance(event, ToolCallFinished):
                self.console.print(self._call_line(event.name, event.input, event.result.is_error))
                self.console.print(ToolResultView(event, cwd=self.cwd, full=True))
            elif isinstance(event, Notice):
                self.console.print(NoticeLine(event.text))
        self.console.print(SubagentSummary(run.finished))
        if run.finished.transcript:
            self.console.print(f"Transcript: {run.finished.transcript}", style="dim", markup=False, highlight=False)

    def interrupted(self) -> None:
        """After an interrupt: each call it stopped keeps its line with `⎿ Interrupted` under it,
        and the last line says what to do next."""
        self.end()
        stopped, self._stopped, self._running = self._stopped, [], ()
        for event in stopped:
            self.subagents.release(event.id)
            self.console.print(self._call_line(event.name, event.input))
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

    @contextmanager
    def asking(self) -> Iterator[None]:
        """While a question is on screen (a permission, AskUserQuestion, a plan): the region is
        down, and no event brings it back over the question (a sub-agent's, running meanwhile);
        the next one after does."""
        with self._region_lock:
            self._asking += 1
            self._stop_spinner()
        try:
            yield
        finally:
            with self._region_lock:
                self._asking -= 1

    def _working_label(self) -> str:
        task = self.current_task()
        return f"{task.active_form}…" if task is not None else "Thinking…"

    def _show_reasoning(self, lines: list[str]) -> None:
        for line in lines:  # above the region, dimmed: it is not the answer
            self.console.print(line, style="dim", markup=False, highlight=False)

    def _end_reasoning(self) -> None:
        if self._reasoning.active:
            self._show_reasoning(self._reasoning.end())

    def _close_answer(self) -> None:
        if self._answer is not None:
            self._answer.finish()
            self._answer = None

    def _wait(self, label: str) -> None:
        if not self.live_ok:
            return
        with self._region_lock:
            if self._asking:
                return
            if self._spinner is not None and self._live is not None:
                self._spinner.label = label
                return
            self._spinner = Spinner(label, hint=INTERRUPT_HINT)
            self._spinner.tokens = self.turn_tokens
            self._live = _RegionLive(
                self._region_lock,
                console=self.console,
                transient=True,
                refresh_per_second=10,
                get_renderable=self._live_renderable,
            )
            self._live.start()

    def _live_renderable(self) -> RenderableType:
        """The running calls' lines, the spinner, the queued input, the status line (read by the
        Live's refresh thread)."""
        parts: list[RenderableType] = [
            self._call_line(call.name, call.input, call_id=call.id) for call in self._running
        ]
        if self._spinner is not None:
            parts.append(self._spinner)
        parts.append(QueuedInput(self._typed))
        if self._status is not None:
            parts.append(StatusLine(self._status))
        return Group(*parts)

    def _stop_spinner(self) -> None:
        with self._region_lock:
            if self._live is not None:
                self._close_answer()  # its live tail is nested in the region: it must end first
                self._live.stop()
            self._live = None
            self._spinner = None


class _RegionLive(Live):
    """The turn's live region, kept at the bottom.

    A live display started while this one runs (the answer's streaming tail) nests in it, and
    rich would draw it below; here it goes above, with the screen's height less the region's.
    Its lock is the view's, so a redraw never falls between a print's cursor move and its text.
    """

    def __init__(self, lock: threading.RLock, **options: Any) -> None:
        super().__init__(**options)
        self._lock = lock

    @property
    def renderable(self) -> RenderableType:
        # rich keeps the nested live displays on the console, and offers no public view of them
        nested = [live.get_renderable() for live in self.console._live_stack if live is not self]
        return _Above(nested, self.get_renderable()) if nested else self.get_renderable()


class _Above:
    """`above`, cropped to the height that `below` leaves free, then `below`."""

    def __init__(self, above: list[RenderableType], below: RenderableType) -> None:
        self.above = above
        self.below = below

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        below = console.render_lines(self.below, options, pad=False)
        room = options.copy()
        room.size = ConsoleDimensions(options.size.width, max(1, options.size.height - len(below)))
        lines = [line for part in self.above for line in console.render_lines(part, room, pad=False)]
        new_line = Segment.line()
        for line in [*lines[-room.size.height :], *below]:
            yield from line
            yield new_line
