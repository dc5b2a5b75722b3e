"""The permission question as rich renderables, for an interactive front end.

    console.print(PermissionQuestion(request, highlighted=0))

Bash shows the command; Edit/Write show the path and a coloured diff; then the options, one
of them highlighted. A long option wraps under its own first word (a hanging indent). A
question taller than the terminal shows only as many lines of the command or diff as fit
(`preview_limit`), and says how many more there are.

Everything that comes from the call is shown through `safe_text.for_terminal`, so an escape
sequence in a command (`\x1b[2J`) is printed visibly instead of clearing the screen, and a
bidi override cannot reorder what is being approved.
(Imports rich: only front ends that draw with rich import this module.)
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agentcli.permissions.prompt import PermissionRequest
from agentcli.safe_text import for_terminal

POINTER = "❯"
KEYS_HINT = "↑/↓ and Enter, or press a number; y/n also work, Esc means No"
SHOW_ALL_KEY = "d"


def diff_text(diff: str, limit: int | None = None, full_above: bool = False) -> Text:
    """A unified diff coloured line by line: additions green, removals red, hunks cyan.

    With `limit`, only its first `limit` lines (a note says how many are left out, and how to
    see them, or that they are `full_above`)."""
    text = Text()
    lines = diff.split("\n")  # not splitlines(): a \r inside a line is shown, not taken as a line break
    shown = lines if limit is None else lines[:limit]
    for number, line in enumerate(shown, start=1):
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = "dim"
        text.append(for_terminal(line) + ("\n" if number < len(shown) else ""), style=style)
    _note_hidden(text, len(lines) - len(shown), full_above)
    return text


def _note_hidden(text: Text, hidden: int, full_above: bool) -> None:
    if hidden > 0:
        where = "shown in full above" if full_above else f"press {SHOW_ALL_KEY} to see them all"
        more = f"… {hidden} more lines ({where})"
        text.append(f"\n{more}" if text.plain else more, style="yellow")


class CallPreview:
    """What will happen and why we ask, in a panel: the command or the path and its diff.

    `limit` caps the lines of the command or diff shown (None: all of them)."""

    def __init__(self, request: PermissionRequest, limit: int | None = None, full_above: bool = False) -> None:
        self.request = request
        self.limit = limit
        self.full_above = full_above

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        request = self.request
        body: list[Text] = []
        if request.kind == "bash":
            lines = for_terminal(request.subject).split("\n")  # a \r or \x0b stays visible, not a line break
            shown = lines if self.limit is None else lines[: self.limit]
            command = Text("\n".join(shown), style="bold")
            _note_hidden(command, len(lines) - len(shown), self.full_above)
            body.append(command)
        else:
            body.append(Text(for_terminal(request.subject), style="bold"))
        if request.outside:
            body.append(Text("Outside the project directory.", style="yellow"))
        if request.note:
            body.append(Text(for_terminal(request.note), style="dim"))
        if request.diff:
            body.append(diff_text(request.diff.rstrip("\n"), self.limit, self.full_above))
        body.append(Text(for_terminal(request.reason), style="dim"))
        yield Panel(Group(*body), title=for_terminal(request.heading), title_align="left", border_style="yellow")


class OptionList:
    """Numbered options with a pointer at the highlighted one, then which keys answer."""

    def __init__(self, labels: Sequence[str], highlighted: int = 0, hint: str = KEYS_HINT) -> None:
        self.labels = labels
        self.highlighted = highlighted
        self.hint = hint

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(no_wrap=True, justify="right")
        grid.add_column(overflow="fold")  # wraps under the label's first word, never under the number
        for index, label in enumerate(self.labels):
            chosen = index == self.highlighted
            style = "bold cyan" if chosen else ""
            grid.add_row(
                Text(POINTER if chosen else " ", style=style),
                Text(f"{index + 1}.", style=style or "bold"),
                Text(for_terminal(label), style=style),
            )
        yield grid
        yield Text(f"({self.hint})", style="dim")


class PermissionQuestion:
    """The call's preview, "Do you want to proceed?" and the options, `highlighted` marked."""

    def __init__(
        self, request: PermissionRequest, highlighted: int = 0, limit: int | None = None, full_above: bool = False
    ) -> None:
        self.request = request
        self.highlighted = highlighted
        self.limit = limit
        self.full_above = full_above

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield CallPreview(self.request, self.limit, self.full_above)
        yield Text("Do you want to proceed?")
        yield OptionList([o.label for o in self.request.options()], self.highlighted)


def preview_limit(request: PermissionRequest, console: Console, max_height: int) -> int | None:
    """How many lines of the command or diff let the whole question fit in `max_height` rows of
    `console` (None when all of them fit; 0 when even none would)."""
    if _height(console, PermissionQuestion(request)) <= max_height:
        return None
    low, high = 0, _bulk_lines(request)
    while low < high:  # the most lines that still fit
        middle = (low + high + 1) // 2
        if _height(console, PermissionQuestion(request, limit=middle)) <= max_height:
            low = middle
        else:
            high = middle - 1
    return low


def _bulk_lines(request: PermissionRequest) -> int:
    if request.kind == "bash":
        return request.subject.count("\n") + 1
    return request.diff.rstrip("\n").count("\n") + 1 if request.diff else 0


def _height(console: Console, renderable: RenderableType) -> int:
    return len(console.render_lines(renderable, console.options, pad=False))
