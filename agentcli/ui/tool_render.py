"""rich renderables for what happens around the answer: tool calls, results, diffs, API errors.

Each class renders one event of `agentcli.events` the way the REPL shows it:

    ● Read(src/app.py)
      ⎿ Read 120 lines
    ● Edit(src/app.py)
      ⎿ Updated src/app.py: 1 addition, 1 removal
          12 - old line
          12 + new line
    ⚠ the stream reported an error: Overloaded — retrying in 2s (overloaded, attempt 1 of 3)

`render_event` picks the renderable for an event; `Spinner` is the status line shown while
waiting for the model. What the model or a program controls (tool inputs, output, file
names, task names) goes through `safe_text.for_terminal`: a control character or a bidi
override is shown escaped, never sent to the terminal raw.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderResult
from rich.text import Text

from agentcli.contracts import JSON
from agentcli.events import Event, Notice, Retrying, ToolCallFinished, ToolCallStarted
from agentcli.output.labels import PATH_FIELDS, call_label, display_path, format_tokens, plural
from agentcli.safe_text import for_terminal
from agentcli.tools.todo import Todo, parse_todos

RESULT_PREFIX = "  ⎿ "
RESULT_INDENT = "    "
DIFF_INDENT = "      "
PREVIEW_HEAD = 5
PREVIEW_TAIL = 3
"""Output lines a preview shows from its start and its end; the rest is counted, and Ctrl-O shows it."""
EXPAND_KEY = "ctrl+o"
SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINNER_INTERVAL = 0.08

_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def clean_line(text: str) -> str:
    """Program output made safe for one terminal line: its colours and other complete escape
    sequences dropped, any other control character shown escaped (`for_terminal`).

    A carriage return (progress bars) keeps only what was drawn last.
    """
    text = _ESCAPES.sub("", text)
    text = text.rstrip("\r").rsplit("\r", 1)[-1]
    return for_terminal(text.expandtabs(4))


def _one_line(text: str) -> str:
    """Text the model or a server wrote (a command, a task, a message), on one line, every control shown."""
    return " ".join(for_terminal(part) for part in text.split())


class ToolCallLine:
    """`● Read(src/app.py)`: one line announcing a tool call (cropped to the screen width)."""

    def __init__(self, name: str, tool_input: JSON, *, cwd: Path | None = None, failed: bool | None = None) -> None:
        self.name = name
        self.tool_input = {
            key: display_path(value, cwd) if key in PATH_FIELDS and isinstance(value, str) else value
            for key, value in tool_input.items()
        }
        self.failed = failed
        """None while running (neutral dot); True/False once known (red/green dot)."""

    @classmethod
    def from_event(cls, event: ToolCallStarted | ToolCallFinished, *, cwd: Path | None = None) -> ToolCallLine:
        failed = event.result.is_error if isinstance(event, ToolCallFinished) else None
        return cls(event.name, event.input, cwd=cwd, failed=failed)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        label = call_label(self.name, self.tool_input, width=max(8, options.max_width - len(self.name) - 4))
        dot = {None: "bold", True: "bold red", False: "bold green"}[self.failed]
        text = Text.assemble(("● ", dot), (self.name, "bold"), _one_line(label[len(self.name) :]))
        text.no_wrap = True
        text.overflow = "ellipsis"
        yield text


def _result_row(line: str, style: str, *, first: bool) -> Text:
    """One row of a result: `  ⎿ line` for the first, indented under it for the others."""
    text = Text.assemble((RESULT_PREFIX if first else RESULT_INDENT, "dim"), (line, style))
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text


class ResultLines:
    """`  ⎿ first line` and indented following lines: a tool's short report."""

    def __init__(self, lines: list[str], *, style: str = "", hidden: int = 0) -> None:
        self.lines = lines or ["(no output)"]
        self.style = style
        self.hidden = hidden
        """How many lines were left out, reported as `… +N lines`."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rows: list[tuple[str, str]] = [(line, self.style) for line in self.lines]
        if self.hidden:
            rows.append((f"… +{plural(self.hidden, 'line')}", "dim"))
        for index, (line, row_style) in enumerate(rows):
            yield _result_row(line, row_style, first=index == 0)


@dataclass(frozen=True)
class _DiffRow:
    kind: str
    """+ (added), - (removed), a space (context) or ⋮ (a gap between hunks)."""
    number: int
    text: str


class DiffView:
    """`⎿ Updated src/app.py: 1 addition, 1 removal`, then the changed lines, numbered and coloured."""

    def __init__(
        self, diff: str, path: str | None = None, *, headline: str | None = None, max_lines: int | None = 40
    ) -> None:
        self.max_lines = max_lines
        self._headline = headline
        self.rows: list[_DiffRow] = []
        self.additions = 0
        self.removals = 0
        self.created = False
        header_path: str | None = None
        old = new = 0
        for raw in diff.rstrip("\n").split("\n"):  # not splitlines(): a lone \r is part of a line
            raw = raw.removesuffix("\r")
            hunk = _HUNK.match(raw)
            if hunk is not None:
                if self.rows:
                    self.rows.append(_DiffRow("⋮", 0, ""))
                old, new = int(hunk.group(1)), int(hunk.group(2))
            elif raw.startswith("--- ") and not self.rows:
                self.created = raw[4:].split("\t")[0].strip() == "/dev/null"
            elif raw.startswith("+++ ") and not self.rows:
                header_path = raw[4:].split("\t")[0].strip()
            elif raw.startswith("+"):
                self.rows.append(_DiffRow("+", new, raw[1:]))
                self.additions += 1
                new += 1
            elif raw.startswith("-"):
                self.rows.append(_DiffRow("-", old, raw[1:]))
                self.removals += 1
                old += 1
            elif raw.startswith(" ") or raw == "":
                self.rows.append(_DiffRow(" ", new, raw[1:]))
                old += 1
                new += 1
        self.path = path or (header_path.removeprefix("b/") if header_path else "file")

    @property
    def headline(self) -> str:
        """The tool's own summary when it gave one, else counted from the diff."""
        if self._headline:
            return self._headline
        if self.created:
            return f"Created {self.path}: {plural(self.additions, 'line')}"
        counts = [plural(n, word) for n, word in ((self.additions, "addition"), (self.removals, "removal")) if n]
        return f"Updated {self.path}: {', '.join(counts) or 'no changes'}"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text.assemble((RESULT_PREFIX, "dim"), _one_line(self.headline))
        shown = self.rows if self.max_lines is None else self.rows[: self.max_lines]
        width = len(str(max((row.number for row in shown), default=0)))
        styles = {"+": "green", "-": "red", " ": "", "⋮": "dim"}
        for row in shown:
            number = str(row.number) if row.kind != "⋮" else ""
            text = Text.assemble(
                (f"{DIFF_INDENT}{number:>{width}} ", "dim"),
                (f"{row.kind} {for_terminal(row.text.expandtabs(4))}", styles[row.kind]),
            )
            text.no_wrap = True
            text.overflow = "ellipsis"
            yield text
        if len(self.rows) > len(shown):
            hidden = plural(len(self.rows) - len(shown), "line")
            yield Text(f"{DIFF_INDENT}… +{hidden} · {EXPAND_KEY} to show all", style="dim")


class OutputPreview:
    """A program's output (or a listing) under its call: the first and last lines, with a dim
    note of how many lines are hidden between them and the key that shows them all."""

    def __init__(self, output: str, *, full: bool = False, first: bool = True) -> None:
        self.lines = [clean_line(line) for line in output.strip("\n").split("\n")] if output.strip() else []
        self.first = first
        """The first row carries the `⎿` (nothing above it in the result)."""
        fits = full or len(self.lines) <= PREVIEW_HEAD + PREVIEW_TAIL + 1  # a note would hide a single line
        self.hidden = 0 if fits else len(self.lines) - PREVIEW_HEAD - PREVIEW_TAIL

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rows: list[tuple[str, str]] = [(line, "") for line in self.lines]
        if self.hidden:
            note = (f"… {plural(self.hidden, 'line')} hidden · {EXPAND_KEY} to show all", "dim")
            rows[PREVIEW_HEAD : PREVIEW_HEAD + self.hidden] = [note]
        for index, (line, style) in enumerate(rows):
            yield _result_row(line, style, first=self.first and index == 0)


class InterruptedLine:
    """`  ⎿ Interrupted` under a call the user stopped; `hint` adds what to do next."""

    def __init__(self, *, hint: bool = False) -> None:
        self.hint = hint

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield _result_row(
            "Interrupted" + (" · tell the model what to do instead" if self.hint else ""), "yellow", first=True
        )


class ToolResultView:
    """What a finished tool call reports: its summary, a preview of its output, or a diff.

    `full` shows everything (what Ctrl-O prints); `hidden` says how many lines the preview left out.
    """

    def __init__(
        self,
        event: ToolCallFinished,
        *,
        cwd: Path | None = None,
        max_lines: int = 5,
        max_diff_lines: int = 40,
        full: bool = False,
    ) -> None:
        self.event = event
        self.cwd = cwd
        self.max_lines = max_lines
        self.max_diff_lines = max_diff_lines
        self.full = full
        result = event.result
        self.hidden = 0
        """Lines the preview leaves out (0 when `full`): the output's, or a diff's."""
        if full or event.interrupted:
            pass
        elif result.diff and not result.is_error:
            self.hidden = max(0, len(DiffView(result.diff).rows) - max_diff_lines)
        elif result.output is not None:
            self.hidden = OutputPreview(result.output).hidden

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        result = self.event.result
        if self.event.interrupted:
            yield InterruptedLine()
            return
        if self.event.name == "TodoWrite" and not result.is_error:
            yield TodoListView(parse_todos(self.event.input.get("todos")))
            return
        if result.diff and not result.is_error:
            path = self.event.input.get("file_path")
            shown = display_path(path, self.cwd) if isinstance(path, str) else None
            headline = result.summary.split("\n")[0] if result.summary else None
            yield DiffView(result.diff, shown, headline=headline, max_lines=None if self.full else self.max_diff_lines)
            return
        style = "red" if result.is_error else ""
        if self.full and result.output is None:
            yield OutputPreview(result.content, full=True)
            return
        text = result.summary if result.summary is not None else result.content
        lines = [clean_line(line) for line in text.strip("\n").split("\n")]
        if result.summary is None:
            lines = lines[:1]  # without a summary, the first line of the content says enough
        limit = len(lines) if self.full else self.max_lines
        yield ResultLines(lines[:limit], style=style, hidden=len(lines) - len(lines[:limit]))
        if result.output is not None:
            yield OutputPreview(result.output, full=self.full, first=False)


class TodoListView:
    """The task list as a checklist: `☒ done` (dimmed, struck through), `◼ in progress` (bold), `☐ to do`."""

    LOOK = {"completed": ("☒ ", "dim", "dim strike"), "in_progress": ("◼ ", "bold", "bold"), "pending": ("☐ ", "", "")}
    """Status → (mark, the mark's style, the text's style)."""

    def __init__(self, todos: tuple[Todo, ...], *, prefix: str = RESULT_PREFIX) -> None:
        self.todos = todos
        self.prefix = prefix

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.todos:
            yield Text.assemble((self.prefix, "dim"), ("No tasks.", "dim"))
            return
        for index, todo in enumerate(self.todos):
            mark, mark_style, text_style = self.LOOK[todo.status]
            lead = self.prefix if index == 0 else " " * len(self.prefix)
            text = Text.assemble((lead, "dim"), (mark, mark_style), (_one_line(todo.content), text_style))
            text.no_wrap = True
            text.overflow = "ellipsis"
            yield text


class ApiErrorLine:
    """One readable line for an API problem, with the next step: `✗ API error 401: … — check your key`."""

    def __init__(self, message: str, next_step: str = "", *, fatal: bool = True) -> None:
        self.message = _one_line(message)
        self.next_step = _one_line(next_step)
        self.fatal = fatal

    @classmethod
    def from_retrying(cls, event: Retrying) -> ApiErrorLine:
        return cls(event.reason, event.plan(), fatal=False)

    @classmethod
    def from_error(cls, error: BaseException) -> ApiErrorLine:
        """From a `ModelAPIError` (its `hint` is the next step) or any other exception."""
        message = str(error.args[0]) if error.args else type(error).__name__
        hint = getattr(error, "hint", "")
        return cls(message, hint if isinstance(hint, str) else "")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        mark, style = ("✗ ", "red") if self.fatal else ("⚠ ", "yellow")
        parts: list[tuple[str, str] | str] = [(mark, f"bold {style}"), (self.message, style)]
        if self.next_step:
            parts += [(" — ", "dim"), self.next_step]
        yield Text.assemble(*parts)


class NoticeLine:
    """`! text`: something worth knowing that does not end the turn."""

    def __init__(self, text: str) -> None:
        self.text = _one_line(text)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text.assemble(("! ", "bold yellow"), self.text)


def render_event(event: Event, *, cwd: Path | None = None) -> ConsoleRenderable | None:
    """The renderable the REPL prints for `event`, or None for events it shows otherwise."""
    if isinstance(event, ToolCallStarted):
        return ToolCallLine.from_event(event, cwd=cwd)
    if isinstance(event, ToolCallFinished):
        return ToolResultView(event, cwd=cwd)
    if isinstance(event, Retrying):
        return ApiErrorLine.from_retrying(event)
    if isinstance(event, Notice):
        return NoticeLine(event.text)
    return None


def format_elapsed(seconds: float) -> str:
    """`3s`, `1m 05s`."""
    whole = int(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m {whole % 60:02d}s"


class Spinner:
    """The status line while waiting for the model: `⠋ Thinking… 3s · 1.2k tokens`, and while a
    failed request waits to be retried, a countdown: `… · retrying in 2s (overloaded, attempt 1 of 3)`.

    Render it inside a `rich.live.Live` (or `console.status`) that refreshes a few times a
    second; set `tokens` as usage arrives, call `retry_in` when a `Retrying` event comes.
    """

    def __init__(
        self, label: str = "Thinking…", *, hint: str = "", clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.label = label
        self.hint = hint
        """Shown dimmed after the counters, e.g. "esc to interrupt"."""
        self.tokens = 0
        self._clock = clock
        self.started = clock()
        self._retry: Retrying | None = None
        self._retry_at = 0.0

    def retry_in(self, event: Retrying) -> None:
        """Count down to the retry `event` announces; once it is due the line reads as before."""
        self._retry = event
        self._retry_at = self._clock() + event.delay

    def status_text(self) -> str:
        now = self._clock()
        parts = [format_elapsed(now - self.started)]
        if self.tokens:
            parts.append(f"{format_tokens(self.tokens)} {'token' if self.tokens == 1 else 'tokens'}")
        if self._retry is not None and (left := self._retry_at - now) > 0:
            parts.append(self._retry.plan(left))
        return f"{_one_line(self.label)} {' · '.join(parts)}"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        frame = SPINNER_FRAMES[int((self._clock() - self.started) / SPINNER_INTERVAL) % len(SPINNER_FRAMES)]
        text = Text.assemble((frame, "cyan"), " ", self.status_text())
        if self.hint:
            text.append(f" · {self.hint}", style="dim")
        text.no_wrap = True
        text.overflow = "ellipsis"
        yield text
