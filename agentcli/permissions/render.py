"""The permission question as a rich renderable, for an interactive front end.

    console.print(PermissionQuestion(request))

Bash shows the command; Edit/Write show the path and a coloured diff; then the options.
(Imports rich: only front ends that draw with rich import this module.)
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.panel import Panel
from rich.text import Text

from agentcli.permissions.prompt import PermissionRequest

MAX_COMMAND_LINES = 40


def diff_text(diff: str) -> Text:
    """A unified diff coloured line by line: additions green, removals red, hunks cyan."""
    text = Text()
    for line in diff.splitlines(keepends=True):
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
        text.append(line, style=style)
    return text


class PermissionQuestion:
    """What will happen, why we ask, and the numbered options."""

    def __init__(self, request: PermissionRequest) -> None:
        self.request = request

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        request = self.request
        body: list[Text] = []
        if request.kind == "bash":
            lines = request.subject.splitlines() or [""]
            shown = "\n".join(lines[:MAX_COMMAND_LINES])
            if len(lines) > MAX_COMMAND_LINES:
                shown += f"\n… {len(lines) - MAX_COMMAND_LINES} more lines"
            body.append(Text(shown, style="bold"))
        else:
            body.append(Text(request.subject, style="bold"))
        if request.outside:
            body.append(Text("Outside the project directory.", style="yellow"))
        if request.note:
            body.append(Text(request.note, style="dim"))
        if request.diff:
            body.append(diff_text(request.diff.rstrip("\n")))
        body.append(Text(request.reason, style="dim"))
        yield Panel(Group(*body), title=request.title, title_align="left", border_style="yellow")
        yield Text("Do you want to proceed?")
        for option in request.options():
            yield Text.assemble((f" {option.key}. ", "bold"), option.label)
        yield Text("(y/n also work; Esc means No)", style="dim")
