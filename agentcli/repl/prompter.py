"""The permission question in the terminal: one key answers it (1/2/3, y/n, Esc, Ctrl-C)."""

from __future__ import annotations

import sys
from collections.abc import Callable

from rich.console import Console

from agentcli.permissions.prompt import Answer, Choice, PermissionRequest
from agentcli.permissions.render import PermissionQuestion
from agentcli.repl.keys import CTRL_C, ESC, EscWatcher, cbreak, read_key

REASON_PROMPT = "  Tell the model what to do differently (Enter to skip): "


class TerminalPrompter:
    """Implements `permissions.prompt.Prompter` for the REPL."""

    def __init__(self, console: Console, watcher: Callable[[], EscWatcher | None], pause_view: Callable[[], None]):
        self.console = console
        self.watcher = watcher
        self.pause_view = pause_view

    def __call__(self, request: PermissionRequest) -> Answer:
        self.pause_view()
        watcher = self.watcher()
        if watcher is None:
            return self._ask(request)
        with watcher.paused():
            return self._ask(request)

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
        fd = sys.stdin.fileno()
        try:
            with cbreak(fd):
                while True:
                    key = read_key(fd)
                    if key is None:
                        continue
                    if key == "":  # end of input: nobody is there to say yes
                        return CTRL_C, "no"
                    choice = request.choice_for(key)
                    if choice is not None:
                        return key, choice
        except KeyboardInterrupt:
            return CTRL_C, "no"

    def _read_reason(self) -> str:
        from prompt_toolkit import prompt

        try:
            return prompt(REASON_PROMPT).strip()
        except (KeyboardInterrupt, EOFError):
            return ""


def _echo(choice: Choice, reason: str) -> str:
    if choice == "no":
        return f"  ⎿ No{': ' + reason if reason else ''}"
    return "  ⎿ Yes, and don't ask again" if choice == "always" else "  ⎿ Yes"
