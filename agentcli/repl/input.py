"""The prompt: history, multi-line input, completion, toolbar and the REPL's key bindings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.completion import Completer
from prompt_toolkit.formatted_text import ANSI, FormattedText, to_formatted_text
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.styles import Style

from agentcli.safe_text import for_terminal
from agentcli.ui.status import MODE_LOOKS, Status

SHIFT_TAB_HINT = "(shift-tab)"
REWIND_COMMAND = "/rewind"
"""What Esc Esc on an empty prompt runs."""


def toolbar_style() -> Style:
    """The toolbar is a quiet line (not prompt_toolkit's reversed bar); each mode in its colour."""
    rules = {"bottom-toolbar": "noreverse", "bottom-toolbar.text": "ansibrightblack"}
    for mode, look in MODE_LOOKS.items():
        rules[f"mode-{mode.lower()}"] = f"bold {'reverse ' if look.badge else ''}ansi{look.colour}"
    return Style.from_dict(rules)


def toolbar_text(status: Status) -> FormattedText:
    """agentcli's status line, under the `statusLine` command's line (in its own colours) when there is one."""
    before, mode, after = status.parts(mode_hint=SHIFT_TAB_HINT)
    above = [*to_formatted_text(ANSI(status.command_line)), ("", "\n")] if status.command_line else []
    return FormattedText(
        [
            *above,
            ("class:bottom-toolbar.text", " " + for_terminal(before)),
            (f"class:mode-{status.mode.lower()}", mode),
            ("class:bottom-toolbar.text", after),
        ]
    )


def key_bindings(on_shift_tab: Callable[[], None], on_ctrl_o: Callable[[], None]) -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        """Esc then Enter (also Alt-Enter): a new line instead of sending."""
        event.current_buffer.insert_text("\n")

    @bindings.add("enter")
    def _submit(event: KeyPressEvent) -> None:
        """Enter sends, unless the line ends with a backslash: then it continues on a new line."""
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\") and buffer.document.is_cursor_at_the_end:
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    @bindings.add("escape", "escape")
    def _rewind(event: KeyPressEvent) -> None:
        """Esc Esc on an empty prompt: /rewind (as in Claude Code); with text typed, nothing."""
        if not event.current_buffer.text:
            event.app.exit(result=REWIND_COMMAND)

    @bindings.add("c-c")
    def _clear_or_interrupt(event: KeyPressEvent) -> None:
        """Ctrl-C clears a typed line; on an empty line it reaches the REPL (twice exits)."""
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt())

    @bindings.add("s-tab")
    def _cycle_mode(event: KeyPressEvent) -> None:
        on_shift_tab()
        event.app.invalidate()

    @bindings.add("c-o")
    def _expand_output(event: KeyPressEvent) -> None:
        """Ctrl-O prints above the prompt (what was typed stays): the last tool output in full."""
        run_in_terminal(on_ctrl_o)

    return bindings


def prompt_session(
    history_file: Path,
    completer: Completer,
    status: Callable[[], Status],
    on_shift_tab: Callable[[], None],
    on_ctrl_o: Callable[[], None],
) -> PromptSession[str]:
    history_file.parent.mkdir(parents=True, exist_ok=True)
    return PromptSession(
        history=FileHistory(str(history_file)),
        completer=completer,
        complete_while_typing=True,
        key_bindings=key_bindings(on_shift_tab, on_ctrl_o),
        bottom_toolbar=lambda: toolbar_text(status()),
        style=toolbar_style(),
        multiline=True,
        prompt_continuation=lambda width, line_number, wrap_count: "… ".rjust(width),
        enable_history_search=False,
    )
