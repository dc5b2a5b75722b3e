"""What the bottom of the REPL's screen shows while the model works: the spinner (with a retry
countdown), the text typed ahead, and the status line with the permission mode in its colour."""

from __future__ import annotations

import json

import pyte

from tests.conftest import StartRepl
from tests.fake_anthropic import OVERLOADED_ERROR, FakeAnthropic, http_error, reply, text, tool_use
from tests.terminal import Terminal

BACKSPACE = "\x7f"


def last_user_text(api: FakeAnthropic, request: int) -> str:
    content = api.requests[request].body["messages"][-1]["content"]
    return content if isinstance(content, str) else json.dumps(content)


def row_with(repl: Terminal, needle: str) -> int:
    """The screen row (not the scrollback) on which `needle` is shown, the lowest if several."""
    rows = [y for y, line in enumerate(repl.screen.display) if needle in line]
    assert rows, f"{needle!r} is not on screen:\n{repl.text()}"
    return rows[-1]


def cells(repl: Terminal, row: int, word: str) -> list[pyte.screens.Char]:
    """The screen cells of `word` where it first occurs after ' · ' on `row`."""
    line = repl.screen.display[row]
    start = line.index(f"· {word}") + 2
    return [repl.screen.buffer[row][x] for x in range(start, start + len(word))]


def test_keys_typed_while_the_model_works_show_under_the_spinner_and_start_the_next_prompt(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    # The answer stops half-way and stays open: the turn runs until Esc, however slow the machine.
    fake_api.script(reply(text("Working on it.\n\nStep two and more"), chunk=4, stall_after=5), reply(text("Answer-B")))
    repl = start_repl()

    repl.submit("first")
    repl.wait_for("Working on")
    repl.type("run the tesst")
    screen = repl.wait_for("» run the tesst")
    assert "esc to interrupt" in screen  # the turn is still running
    repl.press(BACKSPACE, BACKSPACE)
    repl.type("ts")
    repl.wait_for("» run the tests")

    repl.press("esc")  # still interrupts
    screen = repl.wait_for("> run the tests")
    assert "Interrupted" in screen and "» run the tests" not in screen  # the queued line made way for the prompt
    repl.press("enter")

    repl.wait_for_prompt("Answer-B")
    assert "run the tests" in last_user_text(fake_api, 1) and "tesst" not in last_user_text(fake_api, 1)


def test_an_overloaded_api_is_retried_with_a_countdown_on_screen(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    fake_api.script(
        http_error(529, OVERLOADED_ERROR, headers={"retry-after": "2"}), reply(text("Answer after the wait"))
    )
    repl = start_repl()

    repl.submit("hi")

    screen = repl.wait_for("retrying in 1s (overloaded, attempt 1 of 3)")  # the live countdown, under the spinner
    assert "API error 529: Overloaded — retrying in 2s (overloaded, attempt 1 of 3)" in screen  # and the record above
    assert "Answer after the wait" not in screen
    repl.wait_for_prompt("Answer after the wait")
    assert [r.status for r in fake_api.requests] == [529, 200]


def test_the_status_line_stays_under_the_spinner_with_the_mode_in_its_colour(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    fake_api.script(
        reply(
            tool_use("Glob", {"pattern": "*.md"}),
            usage={
                "input_tokens": 300_000,
                "output_tokens": 700,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        ),
        reply(text("Looking further"), stall_after=1),  # the turn stays open until Esc
    )
    repl = start_repl("--permission-mode", "plan")
    toolbar = row_with(repl, "plan (shift-tab)")
    assert all(c.reverse and c.fg == "cyan" for c in cells(repl, toolbar, "plan"))

    repl.submit("look around")

    # After the first response, mid-turn: the tokens, context and cost of that response are shown.
    repl.wait_for("· plan · 300k/1M context · $0.61")
    repl.wait_for("700 tokens")  # the spinner redraws on its own tick, maybe after the status line
    spinner = row_with(repl, "esc to interrupt")
    status = row_with(repl, "· plan · 300k/1M context · $0.61")
    assert status == spinner + 1 and "700 tokens" in repl.screen.display[spinner]
    assert all(c.reverse and c.fg == "cyan" for c in cells(repl, status, "plan"))

    repl.press("esc")
    repl.wait_for("Interrupted")
    repl.press("shift-tab")  # plan → default
    repl.wait_for("default (shift-tab)")
    toolbar = row_with(repl, "default (shift-tab)")
    assert all(c.fg == "green" and not c.reverse for c in cells(repl, toolbar, "default"))


def test_esc_during_a_retry_countdown_stops_waiting(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    fake_api.script(http_error(529, OVERLOADED_ERROR, headers={"retry-after": "30"}), reply(text("never asked for")))
    repl = start_repl()

    repl.submit("hi")
    repl.wait_for("(overloaded, attempt 1 of 3) · esc to interrupt")
    repl.press("esc")

    repl.wait_for_prompt("Interrupted")
    assert len(fake_api.requests) == 1
