"""The permission question as a rich renderable, for an interactive front end.

    console.print(PermissionQuestion(request))

Bash shows the command; Edit/Write show the path and a coloured diff; then the options.
Everything that comes from the call is shown through `safe_text.for_terminal`, so an escape
sequence in a command (`\x1b[2J`) is printed visibly instead of clearing the screen, and a
bidi override cannot reorder what is being approved.
(Imports rich: only front ends that draw with rich import this module.)
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.panel import Panel
from rich.text import Text

from agentcli.permissions.prompt import PermissionRequest
from agentcli.safe_text import for_terminal

MAX_COMMAND_LINES = 40


def diff_text(diff: str) -> Text:
    """A unified diff coloured line by line: additions green, removals red, hunks cyan."""
    text = Text()
    lines = diff.split("\n")  # not splitlines(): a \r inside a line is shown, not taken as a line break
    for number, line in enumerate(lines, start=1):
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
        text.append(for_terminal(line) + ("\n" if number < len(lines) else ""), style=style)
    return text


class PermissionQuestion:
    """What will happen, why we ask, and the numbered options."""

    def __init__(self, request: PermissionRequest) -> None:
        self.request = request

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        request = self.request
        body: list[Text] = []
        if request.kind == "bash":
            lines = for_terminal(request.subject).split("\n")  # a \r or \x0b stays visible, not a line break
            shown = "\n".join(lines[:MAX_COMMAND_LINES])
            if len(lines) > MAX_COMMAND_LINES:
                shown += f"\n… {len(lines) - MAX_COMMAND_LINES} more lines"
            body.append(Text(shown, style="bold"))
        else:
            body.append(Text(for_terminal(request.subject), style="bold"))
        if request.outside:
            body.append(Text("Outside the project directory.", style="yellow"))
        if request.note:
            body.append(Text(for_terminal(request.note), style="dim"))
        if request.diff:
            body.append(diff_text(request.diff.rstrip("\n")))
        body.append(Text(for_terminal(request.reason), style="dim"))
        yield Panel(Group(*body), title=for_terminal(request.title), title_align="left", border_style="yellow")
        yield Text("Do you want to proceed?")
        for option in request.options():
            yield Text.assemble((f" {option.key}. ", "bold"), for_terminal(option.label))
        yield Text("(y/n also work; Esc means No)", style="dim")
