"""Questions in the terminal: whether a tool call may run, whether files outside the project
may be sent to the model, and whether a project's MCP server may start; the model's own
questions (AskUserQuestion) and plans (ExitPlanMode), as `asking.AsksTheUser`; and an MCP
server's own questions (its forms and pages to open: `repl.elicit`). One question is on screen
at a time, whichever thread asks.

They work the same way: the options are listed with the first one highlighted; ↑/↓ move the
highlight and Enter picks it, or a number, y/n or Esc (No) picks at once. Once answered, the
question is erased and one line says what was decided (`✓ Allowed Edit(calc.py)`), so an
approved edit's diff is on screen once, in its result. A question taller than the terminal
shows as much of its diff or command as fits; `d` prints the whole call above the question,
for good. On a terminal that cannot move the cursor the question is printed once and stays.

The model's questions are a picker (`ui.question_form`); their answers show in the call's
result, so nothing else is left on screen. A plan is printed for good, rendered as Markdown,
above the question whether to carry it out: approve and accept edits, approve and keep asking,
or keep planning (then what to change is asked for, as a No's reason is).

One question is on screen at a time: sub-agents ask from their own threads, and each waits
for the one before it to be answered.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.text import Text

from agentcli.asking import Answers, PlanReview, PlanVerdict, QuestionsRequest, WorkMode
from agentcli.context.outside import OutsideFile
from agentcli.errors import Halt
from agentcli.hooks.config import HookCommand
from agentcli.mcp.approval import what_it_gets
from agentcli.mcp.config import ServerConfig
from agentcli.permissions.prompt import Answer, PermissionRequest
from agentcli.permissions.render import SHOW_ALL_KEY, CallPreview, OptionList, PermissionQuestion, preview_limit
from agentcli.repl.keys import CTRL_C, DOWN, ENTER, ESC, UP, EscWatcher, cbreak, read_key
from agentcli.safe_text import for_terminal
from agentcli.ui.question_form import TEXT_PROMPT, QuestionForm, QuestionFormView, Step

if TYPE_CHECKING:
    from agentcli.mcp.elicitation import Question, Reply

REASON_PROMPT = "  Tell the model what to do differently (Enter to skip): "
PLAN_FEEDBACK_PROMPT = "  What should change in the plan? (Enter to skip): "
PLAN_QUESTION = "Would you like to proceed with this plan?"
PLAN_OPTIONS: tuple[tuple[str, WorkMode | None], ...] = (
    ("Yes, and accept edits", "acceptEdits"),
    ("Yes, and ask before each edit", "default"),
    ("No, keep planning", None),
)
PLAN_KEYS_HINT = "↑/↓ and Enter, or press a number; Esc keeps planning"
OUTSIDE_QUESTION = "Allow agentcli to read these files and send them to the model?"
HOOKS_QUESTION = "Trust these hooks and run them in this project?"
MCP_QUESTION = "Start this MCP server and offer its tools to the model?"
ROWS_KEPT_FREE = 4
"""Terminal rows a question leaves free below it: for the reason line, which may wrap."""
FILES_NAMED = 3
"""Outside files named in the answer's line; the rest are counted."""
CANCEL_POLL_S = 0.05
"""How often a question checks whether the turn was interrupted meanwhile."""
T = TypeVar("T")


@dataclass(frozen=True)
class Choices:
    """A question to answer by picking one of `count` options."""

    count: int
    draw: Callable[[int, bool], RenderableType]
    """The question with option `n` (from 0) highlighted; True once `in_full` has been printed above it."""
    meaning: Callable[[str], int | None]
    """The option a key picks at once (a number, y/n, Esc), or None."""
    refused: int
    """The option taken on Ctrl-C or end of input."""
    in_full: RenderableType | None = None
    """Printed for good when `d` is pressed, if the drawn question leaves part of the call out."""
    cancel: threading.Event | None = None
    """Set when the turn is interrupted from elsewhere (a sub-agent's question): taken as `refused`."""


class TerminalPrompter:
    """Implements `permissions.prompt.Prompter`, `context.outside.AsksAboutOutsideFiles`,
    `mcp.approval.AsksAboutProjectServer`, `asking.AsksTheUser` and `mcp.elicitation.Elicitor`
    for the REPL.

    `asking_view` is entered while a question is on screen (the turn's live region stays down)."""

    def __init__(
        self,
        console: Console,
        watcher: Callable[[], EscWatcher | None],
        asking_view: Callable[[], AbstractContextManager[None]],
    ):
        self.console = console
        self.watcher = watcher
        self.asking_view = asking_view
        self._one_at_a_time = threading.RLock()

    def __call__(self, request: PermissionRequest) -> Answer:
        with self._asking():
            return self._ask(request)

    def approve_outside_files(self, files: Sequence[OutsideFile]) -> bool:
        return self._yes_or_no(
            lambda highlighted, _: OutsideFilesQuestion(files, highlighted), lambda yes: _outside_echo(files, yes)
        )

    def approve_project_hooks(self, hooks: Sequence[HookCommand]) -> bool:
        """Implements `hooks.trust.AsksAboutHooks`: show the checked-in hooks, ask once."""
        return self._yes_or_no(
            lambda highlighted, _: ProjectHooksQuestion(hooks, highlighted),
            lambda yes: _decided(yes, f"{'Running' if yes else 'Not running'} the project's hooks in this project"),
        )

    def approve_mcp_server(self, server: ServerConfig) -> bool:
        """Implements `mcp.approval.AsksAboutProjectServer`: what the server runs, asked once."""
        return self._yes_or_no(
            lambda highlighted, _: McpServerQuestion(server, highlighted),
            lambda yes: _decided(yes, f"{'Starting' if yes else 'Not starting'} MCP server ", server.name),
        )

    def elicit(self, question: Question) -> Reply:
        """Implements `mcp.elicitation.Elicitor`: the server's form (or page to open), asked here."""
        from agentcli.repl.elicit import ask

        with self._asking():
            return ask(self, question)

    def _yes_or_no(self, draw: Callable[[int, bool], RenderableType], echo: Callable[[bool], Text]) -> bool:
        """Ask the question `draw` draws, Yes or No; once answered, the line `echo` makes is left. True for Yes."""
        with self._asking():
            with Redrawn(self.console) as question:
                _, picked = self._choose(question, Choices(2, draw, _yes_or_no, refused=1))
            self.console.print(echo(picked == 0))
            return picked == 0

    def answer_questions(self, request: QuestionsRequest) -> Answers | None:
        """Implements `asking.AsksTheUser`: the picker, question by question (`ui.question_form`)."""
        form = QuestionForm(request)
        step: Step = "pending"
        shown = form.index

        def draw() -> QuestionFormView:
            nonlocal shown
            if form.index != shown:
                shown = form.index
                block.anew()
            return QuestionFormView(form)

        with self._asking(), Redrawn(self.console) as block:
            while step == "pending":
                step = self._drive(block, draw, lambda key: _unless_pending(form.press(key)), request.cancel)
                if step == "needs_text":
                    block.erase()
                    step = form.give_text(self._read_line(TEXT_PROMPT))
        return dict(form.answers) if step == "done" else None

    def review_plan(self, review: PlanReview) -> PlanVerdict:
        """Implements `asking.AsksTheUser`: the plan, for good, then whether to carry it out."""
        with self._asking():
            self.console.print(PlanView(review.plan))
            with Redrawn(self.console) as block:
                labels = [label for label, _ in PLAN_OPTIONS]
                key, picked = self._choose(
                    block,
                    Choices(
                        len(PLAN_OPTIONS),
                        lambda highlighted, _: Group(
                            Text(PLAN_QUESTION), OptionList(labels, highlighted, hint=PLAN_KEYS_HINT)
                        ),
                        _plan_option,
                        refused=len(PLAN_OPTIONS) - 1,
                        cancel=review.cancel,
                    ),
                )
                mode = PLAN_OPTIONS[picked][1]
                feedback = ""
                if mode is None and key not in (ESC, CTRL_C):
                    feedback = self._read_line(PLAN_FEEDBACK_PROMPT)
        return PlanVerdict(mode, feedback)

    @contextmanager
    def _asking(self) -> Iterator[None]:
        """One question at a time (an MCP server's, from another thread, waits for the one up); the
        live view stays down and the Esc watcher lets go of the keyboard while it is up."""
        with self._one_at_a_time, self.asking_view():
            watcher = self.watcher()
            if watcher is None:
                yield
                return
            with watcher.paused():
                yield

    def _ask(self, request: PermissionRequest) -> Answer:
        options = request.options()
        question = Redrawn(self.console)
        limit = (
            preview_limit(request, self.console, self.console.size.height - ROWS_KEPT_FREE)
            if question.movable
            else None
        )

        def meaning(key: str) -> int | None:
            choice = request.choice_for(key)
            return next((i for i, o in enumerate(options) if o.choice == choice), None)

        choices = Choices(
            len(options),
            lambda highlighted, full_above: PermissionQuestion(request, highlighted, limit, full_above),
            meaning,
            refused=len(options) - 1,
            in_full=CallPreview(request) if limit is not None else None,
            cancel=request.cancel,
        )
        with question:
            key, picked = self._choose(question, choices)
            choice = options[picked].choice
            reason = ""
            if choice == "no" and key not in (ESC, CTRL_C, "n", "N"):
                reason = self._read_line(REASON_PROMPT)
        answer = request.answer(choice, reason)
        self.console.print(_echo(request, answer))
        return answer

    def _choose(self, question: Redrawn, choices: Choices, start: int = 0) -> tuple[str, int]:
        """The key that answered and the option it picked (`choices.refused` on Ctrl-C or end of
        input); option `start` is highlighted first."""
        highlighted, full_above = start, False

        def on_key(key: str) -> tuple[str, int] | None:
            nonlocal highlighted, full_above
            if key == CTRL_C:
                return CTRL_C, choices.refused
            if key in ENTER:
                return key, highlighted
            picked = choices.meaning(key)
            if picked is not None:
                return key, picked
            if key in UP or key in DOWN:
                highlighted = max(0, min(choices.count - 1, highlighted + (1 if key in DOWN else -1)))
            elif key == SHOW_ALL_KEY and choices.in_full is not None and not full_above:
                question.erase()
                self.console.print(choices.in_full)
                full_above = True
            return None

        return self._drive(question, lambda: choices.draw(highlighted, full_above), on_key, choices.cancel)

    def _drive(
        self,
        block: Redrawn,
        draw: Callable[[], RenderableType],
        on_key: Callable[[str], T | None],
        cancel: threading.Event | None,
    ) -> T:
        """Draw `block`, then hand `on_key` each key pressed, drawing again after each, until it
        returns something. Ctrl-C, the end of input and an interrupt from elsewhere (`cancel`)
        come to it as CTRL_C, which must end it."""
        block.draw(draw())
        fd = sys.stdin.fileno()
        try:
            with cbreak(fd):
                while True:
                    key = read_key(fd, None if cancel is None else CANCEL_POLL_S)
                    if (cancel is not None and cancel.is_set()) or key == "":  # "": nobody is there to answer
                        key = CTRL_C
                    if key is None:
                        continue
                    outcome = on_key(key)
                    if outcome is not None:
                        return outcome
                    block.draw(draw())
        except Halt:
            raise
        except KeyboardInterrupt:
            outcome = on_key(CTRL_C)
            assert outcome is not None, "Ctrl-C must end a question"
            return outcome

    def _read_line(self, prompt: str) -> str:
        """A line of text typed after a question (a No's reason, Other's answer), erased once entered:
        the answer's line or the call's result says it. Empty on Ctrl-C or at the end of input."""
        from prompt_toolkit import PromptSession

        try:
            return PromptSession[str](erase_when_done=True).prompt(prompt).strip()
        except Halt:
            raise
        except (KeyboardInterrupt, EOFError):
            return ""


class Redrawn:
    """A block at the bottom of the terminal that can be drawn again in place, and erased.

    It must fit on the screen to be erased: one that does not (or any block on a terminal
    that cannot move the cursor) is printed once and left in the scrollback.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.movable = console.is_terminal and not console.is_dumb_terminal
        self.printed = False
        self.rows = 0

    def __enter__(self) -> Redrawn:
        return self

    def __exit__(self, *exc: object) -> None:
        self.erase()

    def draw(self, renderable: RenderableType) -> None:
        if not self.movable:
            if not self.printed:
                self.console.print(renderable)
                self.printed = True
            return
        with self.console.capture() as capture:
            self.console.print(renderable)
        text = capture.get()
        self.erase()
        self.console.file.write(text)
        self.console.file.flush()
        self.rows = text.count("\n")
        if self.rows >= self.console.size.height:  # its top scrolled away: it stays as it is
            self.movable, self.printed, self.rows = False, True, 0

    def anew(self) -> None:
        """What is drawn next is new (the next question of a form): a terminal that cannot move the
        cursor prints it too, below the last."""
        if not self.movable:
            self.printed = False

    def erase(self) -> None:
        if self.rows:
            self.console.file.write(f"\x1b[{self.rows}A\r\x1b[J")  # up to its first line, clear to the end
            self.console.file.flush()
            self.rows = 0


def _echo(request: PermissionRequest, answer: Answer) -> Text:
    """`✓ Allowed Edit(calc.py)`, `✗ Denied Explore · Bash(rm -rf build) · use make clean`."""
    label = for_terminal(request.asked_label)
    if answer.choice == "no":
        line = Text.assemble(("✗ ", "red"), "Denied ", (label, "bold"))
        if answer.reason:
            line.append(f" · {for_terminal(answer.reason)}", style="dim")
        return line
    line = Text.assemble(("✓ ", "green"), "Allowed ", (label, "bold"))
    if answer.choice == "always" and request.suggestion is not None:
        when = "from now on" if request.suggestion.scope == "local" else "for the rest of this session"
        line.append(f" · and {for_terminal(request.suggestion.label)} {when}", style="dim")
    return line


def _outside_echo(files: Sequence[OutsideFile], allowed: bool) -> Text:
    names = ", ".join(for_terminal(str(f.path)) for f in files[:FILES_NAMED])
    if len(files) > FILES_NAMED:
        names += f" and {len(files) - FILES_NAMED} more"
    if allowed:
        return Text.assemble(("✓ ", "green"), "Sending ", (names, "bold"), " to the model")
    return Text.assemble(("✗ ", "red"), "Not sending ", (names, "bold"), " to the model")


def _decided(yes: bool, said: str, name: str = "") -> Text:
    """The line left after a yes/no question: `✓ Starting MCP server demo`."""
    return Text.assemble(("✓ " if yes else "✗ ", "green" if yes else "red"), said, (name, "bold"))


def _unless_pending(step: Step) -> Step | None:
    return None if step == "pending" else step


def _plan_option(key: str) -> int | None:
    """The plan option a key picks at once: a number; Esc and Ctrl-C keep planning."""
    if key in (ESC, CTRL_C):
        return len(PLAN_OPTIONS) - 1
    return int(key) - 1 if key.isascii() and key.isdigit() and 1 <= int(key) <= len(PLAN_OPTIONS) else None


class PlanView:
    """The plan the model asks the user to approve, rendered as Markdown in a panel."""

    def __init__(self, plan: str) -> None:
        self.plan = plan

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from agentcli.ui.markdown import AnswerMarkdown, terminal_shows_hyperlinks  # off the prompt's start-up

        markdown = AnswerMarkdown(for_terminal(self.plan.replace("\r", "")), hyperlinks=terminal_shows_hyperlinks())
        yield Panel(markdown, title="Plan", title_align="left", border_style="cyan")


def _yes_or_no(key: str) -> int | None:
    """0 for yes, 1 for no."""
    text = key.strip().lower()
    if text in ("1", "y", "yes"):
        return 0
    if text in ("2", "n", "no", ESC, CTRL_C):
        return 1
    return None


class ProjectHooksQuestion:
    """The checked-in settings' hooks (event, matcher, command), then yes or no."""

    def __init__(self, hooks: Sequence[HookCommand], highlighted: int = 0) -> None:
        self.hooks = hooks
        self.highlighted = highlighted

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        body: list[RenderableType] = [
            Text.assemble(
                (f"{h.event}", "bold"),
                (f" {h.matcher}" if h.matcher else "", "dim"),
                f"\n  {for_terminal(h.command)}",
            )
            for h in self.hooks
        ]
        body.append(
            Text(
                f"From {for_terminal(str(self.hooks[0].source))}, which came with the project. Hooks run these "
                "commands on your machine. Your answer is remembered for this project (.agentcli/settings.local.json).",
                style="dim",
            )
        )
        yield Panel(Group(*body), title="Project hooks", title_align="left", border_style="yellow")
        yield Text(HOOKS_QUESTION)
        yield OptionList(["Yes, run them", "No, not in this project"], self.highlighted)


class OutsideFilesQuestion:
    """Each file outside the project and what names it, then yes or no."""

    def __init__(self, files: Sequence[OutsideFile], highlighted: int = 0) -> None:
        self.files = files
        self.highlighted = highlighted

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        body = [
            Text.assemble(
                (for_terminal(str(f.path)), "bold"), (f"\n  imported by {for_terminal(str(f.named_by))}", "dim")
            )
            for f in self.files
        ]
        body.append(
            Text(
                "These files are outside the project. Your answer is remembered for this project "
                "(.agentcli/settings.local.json).",
                style="dim",
            )
        )
        yield Panel(Group(*body), title="Files outside the project", title_align="left", border_style="yellow")
        yield Text(OUTSIDE_QUESTION)
        yield OptionList(["Yes", "No"], self.highlighted)


class McpServerQuestion:
    """A project's MCP server: what it runs or where it connects, then yes or no."""

    def __init__(self, server: ServerConfig, highlighted: int = 0) -> None:
        self.server = server
        self.highlighted = highlighted

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        server = self.server
        (what, target), *given = what_it_gets(server)
        body: list[RenderableType] = [
            Text.assemble((for_terminal(server.name), "bold"), f" {what} ", for_terminal(target)),
            *(Text.assemble((f"  {label} ", "dim"), for_terminal(text)) for label, text in given),
            Text(
                f"From {for_terminal(str(server.source))}, checked in with the project: it can run programs. "
                "Your answer is remembered for this project (.agentcli/settings.local.json).",
                style="dim",
            ),
        ]
        yield Panel(Group(*body), title="MCP server of this project", title_align="left", border_style="yellow")
        yield Text(MCP_QUESTION)
        yield OptionList(["Yes", "No"], self.highlighted)
