"""An MCP server's request for input, asked in the terminal (`TerminalPrompter.elicit`).

A form comes as a panel titled with who asks (`MCP server "deploy" asks (for Explore)`), the
server's message and a reminder that answers go to the server; a field whose name looks like a
secret adds a warning (servers must not ask for passwords or keys in a form). Then: fill it in,
decline, or Esc to cancel. Each field is asked in turn with its default already typed (Enter
keeps it): text and numbers on an editable line, checked as typed in (`Field.parse`), choices
and yes/no from a list. The answers are shown for review before anything is sent: send, change
them, or decline. A secret-looking field's value is never shown, neither typed nor reviewed.

A page to open (url mode) shows its address and host, and opens only on a yes.

Keys are read as the permission questions read them (`keys.read_key` in cbreak mode, from any
thread): a turn interrupted meanwhile (`question.cancel`) cancels the form.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.text import Text

from agentcli.mcp.elicitation import Field, FormQuestion, Question, Reply, UrlQuestion, Value
from agentcli.permissions.render import OptionList
from agentcli.repl.keys import CTRL_C, ESC, cbreak, edited, read_key
from agentcli.safe_text import for_terminal

if TYPE_CHECKING:
    from agentcli.repl.prompter import Choices, TerminalPrompter

FORM_HINT = "↑/↓ and Enter, or press a number; Esc cancels"
REMINDER = (
    "What you answer goes to this server, not to the model. Servers must not ask for passwords, API keys "
    "or tokens in a form: never type one here."
)
CANCEL_POLL_S = 0.05
HIDDEN = "••••••"


class ElicitationDialog:
    """One question of one server, asked through `prompter`'s terminal."""

    def __init__(self, prompter: TerminalPrompter, question: Question) -> None:
        self.prompter = prompter
        self.console = prompter.console
        self.question = question

    def ask(self) -> Reply:
        if isinstance(self.question, UrlQuestion):
            return self._url(self.question)
        return self._form(self.question)

    # ------------------------------------------------------------------ url mode

    def _url(self, question: UrlQuestion) -> Reply:
        from agentcli.mcp.login import open_in_browser

        picked = self._pick(
            lambda n: Group(UrlPanel(question), OptionList(["Open it in the browser", "Decline"], n, FORM_HINT)), 2
        )
        if picked is None:
            return self._said(Reply("cancel"), "Cancelled")
        if picked == 1:
            return self._said(Reply("decline"), "Declined")
        opened = open_in_browser(question.url)
        self.console.print(
            ("Opened " if opened else "Open this address in a browser: ") + for_terminal(question.url), markup=False
        )
        return self._said(Reply("accept"), "Accepted")

    # ------------------------------------------------------------------ form mode

    def _form(self, question: FormQuestion) -> Reply:
        panel = FormPanel(question)
        picked = self._pick(lambda n: Group(panel, OptionList(["Fill in the form", "Decline"], n, FORM_HINT)), 2)
        if picked is None:
            return self._said(Reply("cancel"), "Cancelled")
        if picked == 1:
            return self._said(Reply("decline"), "Declined")
        values: dict[str, Value] = {field.name: field.default for field in question.fields if field.default is not None}
        self.console.print(panel)
        while True:
            for field in question.fields:
                value = self._field(field, values.get(field.name))
                if value is None:
                    return self._said(Reply("cancel"), "Cancelled")
                if value == "":
                    values.pop(field.name, None)
                else:
                    values[field.name] = value
            picked = self._pick(_reviewing(Review(question, values)), 3)
            if picked is None:
                return self._said(Reply("cancel"), "Cancelled")
            if picked == 0:
                return self._said(Reply("accept", values), "Sent the form")
            if picked == 2:
                return self._said(Reply("decline"), "Declined")

    def _field(self, field: Field, current: Value | None) -> Value | None:
        """The field's new value, "" for an optional field left empty, None when cancelled."""
        if field.kind in ("choice", "boolean"):
            labels = [c.label for c in field.choices] if field.kind == "choice" else ["yes", "no"]
            values: list[Value] = [c.value for c in field.choices] if field.kind == "choice" else [True, False]
            start = values.index(current) if current in values else 0
            label = FieldLabel(field)
            picked = self._pick(lambda n: Group(label, OptionList(labels, n, FORM_HINT)), len(labels), start)
            if picked is None:
                return None
            self.console.print(FieldLine(field, labels[picked], "", with_hint=False))
            return values[picked]
        initial = (
            "" if current is None else _numbers(field, current) if field.kind == "choices" else field.shown(current)
        )
        return self._line(field, initial)

    # ------------------------------------------------------------------ keys

    def _pick(self, draw: Callable[[int], RenderableType], count: int, start: int = 0) -> int | None:
        """The option picked, None on Esc, Ctrl-C, end of input or the turn interrupted."""
        from agentcli.repl.prompter import Choices, Redrawn

        choices: Choices = Choices(
            count, lambda n, _: draw(n), _number_key(count), refused=count, cancel=self.question.cancel
        )
        with Redrawn(self.console) as shown:
            key, picked = self.prompter._choose(shown, choices, start)
        return None if picked >= count or key in (ESC, CTRL_C) else picked

    def _line(self, field: Field, initial: str) -> Value | None:
        """The value typed in for `field` (editing `initial`), checked on Enter: "" for an optional
        field left empty, None on Esc, Ctrl-C or cancel."""
        from agentcli.repl.prompter import Redrawn

        text, error = initial, ""
        fd = sys.stdin.fileno()
        with Redrawn(self.console) as shown, cbreak(fd):
            while True:
                shown.draw(FieldLine(field, text, error))
                key = read_key(fd, CANCEL_POLL_S)
                if self.question.cancel is not None and self.question.cancel.is_set():
                    return None
                if key is None:
                    continue
                if key in ("", ESC, CTRL_C):
                    return None
                if key not in ("\r", "\n"):
                    text = edited(text, key)
                    continue
                value: Value
                if not text.strip() and not field.required:
                    value = ""
                    break
                try:
                    value = field.parse(text)
                    break
                except ValueError as why:
                    error = str(why)
        self.console.print(FieldLine(field, text, ""))
        return value

    def _said(self, reply: Reply, what: str) -> Reply:
        mark, colour = ("✓ ", "green") if reply.action == "accept" else ("✗ ", "red")
        self.console.print(Text.assemble((mark, colour), f"{what} · ", (self.question.asker, "bold")))
        return reply


def _reviewing(review: Review) -> Callable[[int], RenderableType]:
    return lambda n: Group(review, OptionList(["Send", "Change the answers", "Decline"], n, FORM_HINT))


def _number_key(count: int) -> Callable[[str], int | None]:
    def meaning(key: str) -> int | None:
        if key in (ESC, CTRL_C):
            return count
        return int(key) - 1 if key.isascii() and key.isdigit() and 1 <= int(key) <= count else None

    return meaning


def _numbers(field: Field, value: Value) -> str:
    picked = value if isinstance(value, list) else []
    return " ".join(str(n) for n, choice in enumerate(field.choices, 1) if choice.value in picked)


class FormPanel:
    def __init__(self, question: FormQuestion) -> None:
        self.question = question

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        body: list[RenderableType] = [Text(for_terminal(self.question.message))]
        secret = [field.label for field in self.question.fields if field.looks_secret]
        if secret:
            names = ", ".join(f'"{for_terminal(name)}"' for name in secret)
            body.append(
                Text(
                    f"! This form asks for what looks like a secret ({names}). Decline unless you are sure: "
                    "a server that needs a password or key must send you to a web page for it.",
                    style="bold yellow",
                )
            )
        body.append(Text(REMINDER, style="dim"))
        title = f"{for_terminal(self.question.asker)} asks"
        yield Panel(Group(*body), title=title, title_align="left", border_style="yellow")


class UrlPanel:
    def __init__(self, question: UrlQuestion) -> None:
        self.question = question

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        host = urlsplit(self.question.url).hostname or "(no host)"
        body = [
            Text(for_terminal(self.question.message)),
            Text(for_terminal(self.question.url), style="bold"),
            Text.assemble("It is on ", (for_terminal(host), "bold"), ". Nothing opens unless you say so.", style="dim"),
        ]
        title = f"{for_terminal(self.question.asker)} asks you to open a page"
        yield Panel(Group(*body), title=title, title_align="left", border_style="yellow")


class FieldLabel:
    def __init__(self, field: Field) -> None:
        self.field = field

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        field = self.field
        yield Text.assemble(
            (for_terminal(field.label), "bold"),
            (" (required)" if field.required else "", "dim"),
            (f" · {for_terminal(field.description)}" if field.description else "", "dim"),
        )


class FieldLine:
    """The field's label, `  (hint) › text`, and the last error under it."""

    def __init__(self, field: Field, text: str, error: str, *, with_hint: bool = True) -> None:
        self.field = field
        self.text = text
        self.error = error
        self.with_hint = with_hint

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield FieldLabel(self.field)
        shown = HIDDEN[: len(self.text)] if self.field.looks_secret else for_terminal(self.text)
        hint = self.field.hint() if self.with_hint else ""
        yield Text.assemble(("  " + (f"({for_terminal(hint)}) " if hint else "") + "› ", "dim"), shown)
        if self.error:
            yield Text(f"  {self.error}", style="red")


class Review:
    def __init__(self, question: FormQuestion, values: dict[str, Value]) -> None:
        self.question = question
        self.values = values

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text.assemble("Send this to ", (for_terminal(self.question.asker), "bold"), "?")
        for field in self.question.fields:
            value = self.values.get(field.name)
            shown = "(empty)" if value is None else HIDDEN if field.looks_secret else field.shown(value)
            yield Text.assemble(f"  {for_terminal(field.label)}: ", (for_terminal(shown), "bold"))


def ask(prompter: TerminalPrompter, question: Question) -> Reply:
    return ElicitationDialog(prompter, question).ask()


__all__: Sequence[str] = ["ElicitationDialog", "ask"]
