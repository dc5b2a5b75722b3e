"""Questions in the terminal, each answered by one key (1/2/3, y/n, Esc, Ctrl-C): whether a
tool call may run, and whether files outside the project may be sent to the model."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.panel import Panel
from rich.text import Text

from agentcli.context.outside import OutsideFile
from agentcli.errors import Halt
from agentcli.permissions.prompt import Answer, Choice, PermissionRequest
from agentcli.permissions.render import PermissionQuestion
from agentcli.repl.keys import CTRL_C, ESC, EscWatcher, cbreak, read_key

REASON_PROMPT = "  Tell the model what to do differently (Enter to skip): "
OUTSIDE_QUESTION = "Allow agentcli to read these files and send them to the model?"

_Answer = TypeVar("_Answer")


class TerminalPrompter:
    """Implements `permissions.prompt.Prompter` and `context.outside.AsksAboutOutsideFiles` for the REPL."""

    def __init__(self, console: Console, watcher: Callable[[], EscWatcher | None], pause_view: Callable[[], None]):
        self.console = console
        self.watcher = watcher
        self.pause_view = pause_view

    def __call__(self, request: PermissionRequest) -> Answer:
        with self._asking():
            return self._ask(request)

    def approve_outside_files(self, files: Sequence[OutsideFile]) -> bool:
        with self._asking():
            self.console.print(OutsideFilesQuestion(files))
            _, allow = self._read_answer(_yes_or_no, refused=False)
            self.console.print("  ⎿ Yes" if allow else "  ⎿ No", style="dim")
            return allow

    @contextmanager
    def _asking(self) -> Iterator[None]:
        """The live view stops and the Esc watcher lets go of the keyboard while a question is up."""
        self.pause_view()
        watcher = self.watcher()
        if watcher is None:
            yield
            return
        with watcher.paused():
            yield

    def _ask(self, request: PermissionRequest) -> Answer:
        self.console.print(PermissionQuestion(request))
        key, choice = self._read_choice(request)
        reason = ""
        if choice == "no" and key not in (ESC, CTRL_C, "n", "N"):
            reason = self._read_reason()
        answer = request.answer(choice, reason)
        self.console.print(_echo(choice, reason), style="dim")
        return answer

    def _read_choice(self, request: PermissionRequest) -> tuple[str, Choice]:
        return self._read_answer(request.choice_for, refused="no")

    def _read_answer(self, meaning: Callable[[str], _Answer | None], refused: _Answer) -> tuple[str, _Answer]:
        """The first key that means something, and what it means; `refused` on Ctrl-C or end of input."""
        fd = sys.stdin.fileno()
        try:
            with cbreak(fd):
                while True:
                    key = read_key(fd)
                    if key is None:
                        continue
                    if key == "":  # end of input: nobody is there to say yes
                        return CTRL_C, refused
                    answer = meaning(key)
                    if answer is not None:
                        return key, answer
        except Halt:
            raise
        except KeyboardInterrupt:
            return CTRL_C, refused

    def _read_reason(self) -> str:
        from prompt_toolkit import prompt

        try:
            return prompt(REASON_PROMPT).strip()
        except Halt:
            raise
        except (KeyboardInterrupt, EOFError):
            return ""


def _echo(choice: Choice, reason: str) -> str:
    if choice == "no":
        return f"  ⎿ No{': ' + reason if reason else ''}"
    return "  ⎿ Yes, and don't ask again" if choice == "always" else "  ⎿ Yes"


def _yes_or_no(key: str) -> bool | None:
    text = key.strip().lower()
    if text in ("1", "y", "yes"):
        return True
    if text in ("2", "n", "no", ESC, CTRL_C):
        return False
    return None


class OutsideFilesQuestion:
    """Each file outside the project and what names it, then yes or no."""

    def __init__(self, files: Sequence[OutsideFile]) -> None:
        self.files = files

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        body = [Text.assemble((str(f.path), "bold"), (f"\n  imported by {f.named_by}", "dim")) for f in self.files]
        body.append(
            Text(
                "These files are outside the project. Your answer is remembered for this project "
                "(.agentcli/settings.local.json).",
                style="dim",
            )
        )
        yield Panel(Group(*body), title="Files outside the project", title_align="left", border_style="yellow")
        yield Text(OUTSIDE_QUESTION)
        yield Text.assemble((" 1. ", "bold"), "Yes")
        yield Text.assemble((" 2. ", "bold"), "No")
        yield Text("(y/n also work; Esc means No)", style="dim")
