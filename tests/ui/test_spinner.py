"""The bottom of the screen while the model works: the spinner's retry countdown, the queued
input line, the status line and its mode colours (rich and the prompt_toolkit toolbar alike)."""

from __future__ import annotations

import pytest
from prompt_toolkit.styles import Attrs

from agentcli.events import Retrying
from agentcli.repl.input import toolbar_style, toolbar_text
from agentcli.ui.status import MODE_LOOKS, QueuedInput, Status, StatusLine
from agentcli.ui.tool_render import Spinner
from tests.ui.helpers import FakeClock, make_console, output

OVERLOADED = Retrying(attempt=1, delay=2.5, reason="API error 529: Overloaded", fault="overloaded", retries=3)


def status(mode: str = "default", used: int = 2_700, cost: float = 0.014) -> Status:
    return Status(model="claude-test", mode=mode, context_tokens=used, context_window=1_000_000, cost_usd=cost)


def shown(renderable: object, *, color: bool = False, width: int = 80, no_color: bool | None = None) -> str:
    console = make_console(terminal=color, color="standard" if color else None, width=width, no_color=no_color)
    console.print(renderable)
    return output(console)


def test_the_spinner_counts_down_to_a_retry_then_reads_as_before() -> None:
    clock = FakeClock()
    spinner = Spinner(clock=clock)
    clock.now += 5
    spinner.retry_in(OVERLOADED)

    assert spinner.status_text() == "Thinking… 5s · retrying in 3s (overloaded, attempt 1 of 3)"
    clock.now += 1
    assert spinner.status_text() == "Thinking… 6s · retrying in 2s (overloaded, attempt 1 of 3)"
    clock.now += 1.4
    assert spinner.status_text() == "Thinking… 7s · retrying in 1s (overloaded, attempt 1 of 3)"
    clock.now += 0.2  # the retry is due: the request is being made again
    assert spinner.status_text() == "Thinking… 7s"


def test_a_retry_plan_names_the_fault_the_attempt_and_how_many_there_are() -> None:
    assert OVERLOADED.plan() == "retrying in 3s (overloaded, attempt 1 of 3)"
    quick = Retrying(attempt=2, delay=0.01, reason="the connection dropped", fault="connection dropped", retries=3)
    assert quick.plan() == "retrying in 0.01s (connection dropped, attempt 2 of 3)"


def test_nothing_typed_ahead_shows_nothing() -> None:
    assert shown(QueuedInput(str)) == ""


def test_typed_ahead_text_is_shown_as_queued_with_a_cursor() -> None:
    assert shown(QueuedInput(lambda: "run the tests")) == "» run the tests   (queued for your next prompt)\n"


def test_typed_ahead_lines_show_the_last_few_and_a_long_line_its_end() -> None:
    typed = "\n".join(f"line {n}" for n in range(1, 7)) + "\n" + "x" * 100 + "END"

    lines = shown(QueuedInput(lambda: typed), width=60).splitlines()

    assert lines[0] == "» … line 4"
    assert lines[1:3] == ["  line 5", "  line 6"]
    assert lines[3].startswith("  …x") and lines[3].endswith("xEND   (queued for your next prompt)")
    assert all(len(line) <= 60 for line in lines)


def test_typed_ahead_control_characters_are_shown_escaped() -> None:
    assert shown(QueuedInput(lambda: "a\x1b[2Jb")) == "» a\\x1b[2Jb   (queued for your next prompt)\n"


def test_the_status_line_says_model_mode_context_and_cost() -> None:
    assert shown(StatusLine(status)) == " claude-test · default · 2.7k/1M context · $0.01\n"
    assert shown(StatusLine(lambda: status(used=0))) == " claude-test · default · new context · $0.01\n"


@pytest.mark.parametrize(
    ("mode", "sgr"),
    [
        ("default", "\x1b[1;32m"),
        ("acceptEdits", "\x1b[1;35m"),
        ("plan", "\x1b[1;7;36m"),
        ("bypassPermissions", "\x1b[1;7;31m"),
    ],
)
def test_each_mode_has_its_own_colour_and_plan_and_bypass_stand_out(mode: str, sgr: str) -> None:
    assert f"{sgr}{mode}\x1b[0m" in shown(StatusLine(lambda: status(mode)), color=True)


def test_the_status_line_has_no_styles_under_no_color() -> None:
    text = shown(StatusLine(lambda: status("plan")), color=True, no_color=True)

    assert "\x1b[" not in text and "plan" in text


def test_the_toolbar_shows_the_same_line_with_the_shift_tab_hint() -> None:
    fragments = toolbar_text(status("plan"))

    assert "".join(text for _, text, *_ in fragments) == " claude-test · plan (shift-tab) · 2.7k/1M context · $0.01"
    [(mode_class, _)] = [(style, text) for style, text, *_ in fragments if text == "plan"]
    assert mode_class == "class:mode-plan"


@pytest.mark.parametrize("mode", list(MODE_LOOKS))
def test_the_toolbar_colours_each_mode_as_the_status_line_does(mode: str) -> None:
    attrs: Attrs = toolbar_style().get_attrs_for_style_str(f"class:mode-{mode.lower()}")

    assert attrs.color == f"ansi{MODE_LOOKS[mode].colour}"
    assert attrs.bold and attrs.reverse == MODE_LOOKS[mode].badge


def test_the_modes_look_different_from_one_another() -> None:
    assert len({(look.colour, look.badge) for look in MODE_LOOKS.values()}) == len(MODE_LOOKS)
