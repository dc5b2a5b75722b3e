"""The picker for AskUserQuestion: one question at a time, answered with the keyboard.

`QuestionForm` is the state, driven one key at a time (`press`), with no terminal of its own, so
a front end (the REPL's `TerminalPrompter`) reads keys and free text and draws `QuestionFormView`
after each one:

    ✓ Auth method · JWT tokens                      (questions answered so far)
    ╭─ Library · 2 of 2 ─────────────────────────╮
    │ Which HTTP library should the client use?  │
    ╰────────────────────────────────────────────╯
    ❯ 1. httpx (Recommended)
         Async and sync, HTTP/2.
      2. requests
         The most familiar.
      3. Other
         Type your own answer
    (↑/↓ and Enter, or press a number; Esc declines)

Single select: ↑/↓ move, Enter or a number picks. Multi-select (`[✓]` boxes): Space or a
number toggles, Enter confirms what is checked (with nothing checked, the highlighted option).
Picking or checking Other asks for a line of text (`needs_text`, answered by `give_text`;
an empty line goes back to the question). Esc or Ctrl-C declines the whole call.

Everything the model wrote is shown through `safe_text.for_terminal`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agentcli.asking import OTHER, Answers, Question, QuestionsRequest
from agentcli.permissions.render import POINTER
from agentcli.repl.keys import CTRL_C, DOWN, ENTER, ESC, UP
from agentcli.safe_text import for_terminal

SPACE = " "
DECLINE = (ESC, CTRL_C)
OTHER_DESCRIPTION = "Type your own answer"
SINGLE_HINT = "↑/↓ and Enter, or press a number; Esc declines"
MULTI_HINT = "↑/↓ to move, Space or a number to check, Enter to confirm; Esc declines"
TEXT_PROMPT = "  Your answer (Enter on an empty line goes back): "

Step = Literal["pending", "needs_text", "done", "declined"]
"""After a key: keep reading keys; read a line of text for Other; every question answered; declined."""


@dataclass
class QuestionForm:
    """The answers to one AskUserQuestion call, as the user picks them."""

    request: QuestionsRequest
    answers: Answers = field(default_factory=dict)
    index: int = 0
    """The question on screen."""
    highlighted: int = 0
    checked: set[int] = field(default_factory=set)
    """Multi-select: the options ticked (Other is the last index)."""
    step: Step = "pending"

    @property
    def question(self) -> Question:
        return self.request.questions[self.index]

    @property
    def labels(self) -> list[str]:
        """The question's options, then Other."""
        return [*(option.label for option in self.question.options), OTHER]

    def press(self, key: str) -> Step:
        """Handle one key; what to do next."""
        if self.step != "pending":
            return self.step
        if key in DECLINE:
            self.step = "declined"
        elif key in UP or key in DOWN:
            last = len(self.labels) - 1
            self.highlighted = max(0, min(last, self.highlighted + (1 if key in DOWN else -1)))
        elif key.isdigit() and 1 <= int(key) <= len(self.labels):
            self.highlighted = int(key) - 1
            if self.question.multi_select:
                self.checked ^= {self.highlighted}
            else:
                self._pick({self.highlighted})
        elif key == SPACE and self.question.multi_select:
            self.checked ^= {self.highlighted}
        elif key in ENTER:
            chosen = set(self.checked) if self.question.multi_select and self.checked else {self.highlighted}
            self._pick(chosen)
        return self.step

    def give_text(self, text: str) -> Step:
        """The line typed for Other: with the options checked beside it, the answer; empty: back to the question."""
        if self.step != "needs_text":
            return self.step
        text = " ".join(text.split())
        self.step = "pending"
        if not text:
            self.checked.discard(len(self.labels) - 1)
            return self.step
        self._answer([self.labels[i] for i in sorted(self.checked) if i < len(self.labels) - 1] + [text])
        return self.step

    def _pick(self, chosen: set[int]) -> None:
        other = len(self.labels) - 1
        if other in chosen:
            self.checked = chosen
            self.step = "needs_text"
            return
        self._answer([self.labels[i] for i in sorted(chosen)])

    def _answer(self, parts: list[str]) -> None:
        self.answers[self.question.question] = ", ".join(parts)
        self.index += 1
        self.highlighted, self.checked = 0, set()
        if self.index == len(self.request.questions):
            self.index -= 1  # nothing more to show: the last question stays current
            self.step = "done"


class QuestionFormView:
    """The questions answered so far, the current one in a panel, its options and the keys."""

    def __init__(self, form: QuestionForm) -> None:
        self.form = form

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        form = self.form
        questions = form.request.questions
        for answered in questions[: form.index]:
            yield Text.assemble(
                ("✓ ", "green"),
                (for_terminal(answered.header), "bold"),
                f" · {for_terminal(form.answers[answered.question])}",
            )
        question = form.question
        title = for_terminal(question.header)
        if len(questions) > 1:
            title += f" · {form.index + 1} of {len(questions)}"
        if form.request.agent:
            title = f"{for_terminal(form.request.agent)} asks · {title}"
        body = Text(for_terminal(question.question), style="bold")
        yield Panel(body, title=title, title_align="left", border_style="cyan")
        yield self._options()
        yield Text(f"({MULTI_HINT if question.multi_select else SINGLE_HINT})", style="dim")

    def _options(self) -> RenderableType:
        form = self.form
        question = form.question
        descriptions = [option.description for option in question.options] + [OTHER_DESCRIPTION]
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(no_wrap=True, justify="right")
        grid.add_column(overflow="fold")
        for index, (label, description) in enumerate(zip(form.labels, descriptions, strict=True)):
            chosen = index == form.highlighted
            style = "bold cyan" if chosen else ""
            box = ("[✓] " if index in form.checked else "[ ] ") if question.multi_select else ""
            cell = Text.assemble(box + for_terminal(label), style=style)
            if description:
                cell.append(f"\n{for_terminal(description)}", style="dim")
            grid.add_row(
                Text(POINTER if chosen else " ", style=style), Text(f"{index + 1}.", style=style or "bold"), cell
            )
        return Group(grid)
