"""What stays at the bottom of the screen: the status line and the typed-ahead text.

The status line reads `claude-sonnet-5-5 · plan · 2.7k/1M context · $0.01`; above it goes the
line of the user's `statusLine` command, when there is one (`agentcli.statusline`), in its own
colours. Both are drawn in two places from one `Status`: as the prompt's bottom toolbar (prompt_toolkit,
`agentcli.repl.input`) and, while the model works, under the spinner (`StatusLine`, rich).
Each permission mode has its own colour (`MODE_LOOKS`) in both; the two that change the most
(plan: nothing is changed; bypassPermissions: nothing is asked) are drawn as a badge.

`QueuedInput` shows what the user types while the model works: it becomes the start of the
next prompt (see `agentcli.repl.keys.EscWatcher`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from agentcli.output.labels import format_tokens
from agentcli.safe_text import for_terminal

QUEUED_MARK = "» "
QUEUED_NOTE = "  (queued for your next prompt)"
QUEUED_MAX_LINES = 4


@dataclass(frozen=True)
class ModeLook:
    colour: str
    """An ANSI colour name that rich and prompt_toolkit (as `ansi<colour>`) both know."""
    badge: bool
    """Drawn reversed (coloured background), so that it stands out."""


MODE_LOOKS = {
    "default": ModeLook("green", badge=False),
    "acceptEdits": ModeLook("magenta", badge=False),
    "plan": ModeLook("cyan", badge=True),
    "dontAsk": ModeLook("yellow", badge=True),
    "bypassPermissions": ModeLook("red", badge=True),
}


@dataclass(frozen=True)
class Status:
    model: str
    mode: str
    context_tokens: int
    """How much of the context window the conversation fills (0: nothing measured yet)."""
    context_window: int
    cost_usd: float
    command_line: str = ""
    """The `statusLine` command's line (colour sequences and text only), drawn above; "" for none."""

    def parts(self, mode_hint: str = "") -> tuple[str, str, str]:
        """The text before the mode, the mode, and the text after it."""
        used, window = self.context_tokens, self.context_window
        context = f"{format_tokens(used)}/{format_tokens(window)} context" if used else "new context"
        hint = f" {mode_hint}" if mode_hint else ""
        return f"{self.model} · ", self.mode, f"{hint} · {context} · ${self.cost_usd:.2f}"


def mode_style(mode: str) -> str:
    """The rich style of a permission mode's name."""
    look = MODE_LOOKS.get(mode)
    if look is None:
        return "bold"
    return f"bold {'reverse ' if look.badge else ''}{look.colour}"


class StatusLine:
    """The status line as rich draws it under the spinner; `status` is asked on every redraw."""

    def __init__(self, status: Callable[[], Status]) -> None:
        self.status = status

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        status = self.status()
        before, mode, after = status.parts()
        if status.command_line:
            yield _one_line(Text.from_ansi(status.command_line), console)
        text = Text.assemble(" ", (for_terminal(before), "dim"), (mode, mode_style(status.mode)), (after, "dim"))
        yield _one_line(text, console)


class QueuedInput:
    """`» what the user typed` while the model works (nothing when nothing was typed).

    A long text shows its end, where the user is typing: the last `QUEUED_MAX_LINES` lines,
    each cut from the left to the screen's width.
    """

    def __init__(self, typed: Callable[[], str]) -> None:
        self.typed = typed

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        typed = self.typed()
        if not typed:
            return
        lines = typed.split("\n")
        shown = lines[-QUEUED_MAX_LINES:]
        width = max(8, options.max_width - len(QUEUED_MARK) - len(QUEUED_NOTE) - 1)
        for index, line in enumerate(shown):
            line = for_terminal(line)
            if len(line) > width:
                line = "…" + line[-(width - 1) :]
            first = index == 0
            lead = QUEUED_MARK if first else " " * len(QUEUED_MARK)
            if first and len(lines) > len(shown):
                line = "… " + line
            text = Text.assemble((lead, "bold"), line)
            if index == len(shown) - 1:
                text.append(" ", style="reverse")  # where the next key goes
                text.append(QUEUED_NOTE, style="dim")
            yield _one_line(text, console)


def _one_line(text: Text, console: Console) -> Text:
    """`text` cropped to one line; without styles under NO_COLOR (as the answer is)."""
    if console.no_color:
        text = Text(text.plain)
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text
