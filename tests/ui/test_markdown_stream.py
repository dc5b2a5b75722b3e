"""Streaming Markdown: what the user sees equals rendering the whole answer at once,
finished blocks are printed once, only the open tail is live, plain terminals get plain text."""

from __future__ import annotations

import re

import pytest

from agentcli.ui.markdown_stream import BlockSplitter, MarkdownStream
from tests.ui.helpers import ANSWER, ColorSystem, FakeClock, deltas, make_console, output, render_whole, stream_all
from tests.ui.screen import screen_of


@pytest.mark.parametrize("seed", range(5))
def test_streamed_answer_prints_what_the_whole_answer_renders_to(seed: int) -> None:
    streamed = stream_all(ANSWER, make_console(), seed=seed)

    assert streamed == render_whole(ANSWER, make_console())


@pytest.mark.parametrize("seed", range(3))
def test_in_a_colour_terminal_the_final_screen_equals_the_whole_render(seed: int) -> None:
    console = make_console(terminal=True, color="truecolor")
    streamed = stream_all(ANSWER, console, seed=seed)
    console.print("What the REPL prints next.")
    whole = make_console(terminal=True, color="truecolor")
    render_whole(ANSWER, whole)
    whole.print("What the REPL prints next.")

    assert "\x1b[2K" in streamed, "the live tail region was never drawn"
    assert screen_of(output(console)) == screen_of(output(whole))


def test_a_code_fence_with_blank_lines_is_one_block_committed_when_closed() -> None:
    console = make_console()
    stream = MarkdownStream(console)
    for piece in deltas("Intro.\n\n```python\ndef f():\n\n\n    return 1\n", seed=1):
        stream.feed(piece)

    assert screen_of(output(console)) == "Intro.", "a blank line inside an open fence ended a block"

    stream.feed("```\nAfter.\n")
    stream.finish()
    shown = output(console)
    assert "```" not in shown
    assert re.search(r"def f\(\): *\n *\n *\n +return 1", shown), shown
    assert shown == render_whole("Intro.\n\n```python\ndef f():\n\n\n    return 1\n```\nAfter.\n", make_console())


def test_an_unclosed_fence_is_committed_on_finish() -> None:
    text = "Look:\n\n```\ncode line\n\nmore code"
    streamed = stream_all(text, make_console())

    assert "more code" in streamed
    assert streamed == render_whole(text, make_console())


def test_a_list_goes_on_after_a_blank_line_and_is_printed_once_it_ends() -> None:
    console = make_console()
    stream = MarkdownStream(console)
    for piece in deltas("- one\n\n- two\n  continued\n\n", seed=2):
        stream.feed(piece)

    assert output(console) == "", "the list was printed before it ended"

    stream.feed("After the list.\n\n")
    printed = output(console)
    assert printed.count("•") == 2
    assert "After the list." in printed
    stream.finish()
    assert output(console) == render_whole("- one\n\n- two\n  continued\n\nAfter the list.\n", make_console())


def test_a_finished_block_is_written_to_the_terminal_once() -> None:
    console = make_console(terminal=True, color="truecolor")
    stream = MarkdownStream(console, clock=FakeClock(step=0.1))  # every feed may redraw the tail
    stream.feed("Alpha paragraph that is complete.\n\n")
    for index in range(30):
        for piece in deltas(f"Paragraph number {index} streams *slowly* in small pieces.\n\n", seed=index):
            stream.feed(piece)
    stream.finish()
    raw = output(console)

    assert raw.count("Alpha paragraph that is complete.") == 1
    assert screen_of(raw).count("Alpha paragraph that is complete.") == 1
    assert screen_of(raw).count("Paragraph number 17 streams") == 1


def test_the_open_tail_is_shown_live_and_replaced_by_the_committed_block() -> None:
    console = make_console(terminal=True, color="truecolor")
    stream = MarkdownStream(console, clock=FakeClock(step=0.1))
    stream.feed("First paragraph.\n\nHello **world** and mo")

    assert screen_of(output(console)).splitlines() == ["First paragraph.", "", "Hello world and mo"]

    stream.feed("re.")
    assert screen_of(output(console)).splitlines()[-1] == "Hello world and more."

    stream.finish()
    expected = render_whole(
        "First paragraph.\n\nHello **world** and more.", make_console(terminal=True, color="truecolor")
    )
    assert screen_of(output(console)) == screen_of(expected)


def test_tail_redraws_are_throttled_and_flush_shows_the_latest_text() -> None:
    clock = FakeClock()
    console = make_console(terminal=True, color="truecolor")
    stream = MarkdownStream(console, refresh_interval=0.05, clock=clock)
    stream.feed("Hel")
    for char in "lo there":
        stream.feed(char)

    assert screen_of(output(console)) == "Hel", "redrawn although less than 50 ms passed"

    clock.now += 0.06
    stream.feed("!")
    assert screen_of(output(console)) == "Hello there!"

    stream.feed(" More")
    stream.flush()
    assert screen_of(output(console)) == "Hello there! More"


def test_the_live_region_is_never_taller_than_the_screen() -> None:
    console = make_console(terminal=True, color="truecolor", height=10)
    stream = MarkdownStream(console, clock=FakeClock(step=0.1))
    text = "```\n" + "".join(f"line {n}\n" for n in range(200))
    for piece in deltas(text, seed=3):
        stream.feed(piece)

    raw = output(console)
    longest_climb = max(len(run) for run in re.findall(r"(?:\x1b\[1A\x1b\[2K)+", raw)) // len("\x1b[1A\x1b[2K")
    assert longest_climb < 10
    on_screen = screen_of(raw)
    assert "line 199" in "\n".join(on_screen.splitlines()[-2:]), "the live region does not show the newest lines"
    assert "line 0" not in on_screen

    stream.feed("```\n")
    stream.finish()
    whole = render_whole(text + "```\n", make_console(terminal=True, color="truecolor", height=10))
    assert screen_of(output(console)) == screen_of(whole)


@pytest.mark.parametrize(
    ("terminal", "color", "no_color", "env"),
    [
        (True, "truecolor", True, {}),
        (True, "truecolor", None, {"NO_COLOR": "1"}),
        (True, "truecolor", None, {"TERM": "dumb"}),
        (True, None, None, {}),
        (False, None, None, {}),
    ],
    ids=["no_color", "NO_COLOR", "TERM=dumb", "color_system=None", "not-a-tty"],
)
def test_plain_terminals_get_finished_blocks_without_escape_codes(
    terminal: bool,
    color: ColorSystem | None,
    no_color: bool | None,
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    console = make_console(terminal=terminal, color=color, no_color=no_color)
    stream = MarkdownStream(console, clock=FakeClock(step=0.1))
    assert stream.plain

    stream.feed("Some **bold** text and a [link](https://example.com).\n\nOpen tail")
    assert output(console).startswith("Some bold text and a link (https://example.com)."), "the URL was lost"
    assert "Open tail" not in output(console), "the open tail was shown in a plain terminal"

    for piece in deltas("\n\n" + ANSWER, seed=4):
        stream.feed(piece)
    stream.finish()
    raw = output(console)
    assert "\x1b" not in raw
    assert "def test_trailing():" in raw
    plain_whole = render_whole(
        "Some **bold** text and a [link](https://example.com).\n\nOpen tail\n\n" + ANSWER, make_console()
    )
    assert screen_of(raw) == screen_of(plain_whole)


def test_leaving_the_with_block_early_keeps_the_partial_answer() -> None:
    console = make_console()
    with pytest.raises(KeyboardInterrupt), MarkdownStream(console) as stream:
        stream.feed("A partial ans")
        raise KeyboardInterrupt

    assert screen_of(output(console)) == "A partial ans"


def test_feeding_after_finish_is_an_error() -> None:
    stream = MarkdownStream(make_console())
    stream.finish()
    with pytest.raises(RuntimeError):
        stream.feed("late")


def split(text: str) -> list[str]:
    splitter = BlockSplitter()
    blocks = [block for char in text for block in splitter.feed(char)]
    return blocks + splitter.finish()


def test_block_boundaries() -> None:
    text = (
        "# Title\n"
        "Para one\nstill para one\n\n\n"
        "```\nfenced\n\n~~~\n```\n"
        "- a\n\n  b\n- c\n\nPara two\n\n"
        "    code\n\n    more code\n\n"
        "<pre>\nraw\n\nhtml\n</pre>\n"
        "> quote\n\nend"
    )

    assert split(text) == [
        "# Title",
        "Para one\nstill para one",
        "```\nfenced\n\n~~~\n```",
        "- a\n\n  b\n- c",
        "Para two",
        "    code\n\n    more code",
        "<pre>\nraw",  # HTML is text: a blank line ends it like any paragraph
        "html\n</pre>\n> quote",
        "end",
    ]


def test_a_longer_fence_is_not_closed_by_a_shorter_one() -> None:
    assert split("````md\n```\ninner\n```\n````\nafter") == ["````md\n```\ninner\n```\n````", "after"]


def test_the_models_text_cannot_send_control_sequences_to_the_terminal() -> None:
    answer = "Done.\x1b[2J\x1b]52;c;cGF5bG9hZA==\x07 Look \u202eright\u202c and \x9b2J.\r\n\nMore **text**."
    console = make_console(terminal=True, color="truecolor")

    raw = stream_all(answer, console)

    for control in ("\x1b[2J", "\x1b]52", "\x07", "\u202e", "\x9b"):
        assert control not in raw, repr(control)
    screen = screen_of(raw)
    assert "Done.\\x1b[2J\\x1b]52;c;cGF5bG9hZA==\\x07 Look \\u202eright\\u202c and \\x9b2J." in screen
    assert "More text." in screen
