"""How answers look: HTML kept as text, headings on the left, links with their URL, code
blocks with one blank line around them; streamed and whole renders alike."""

from __future__ import annotations

import re

import pytest

from agentcli.ui.markdown import terminal_shows_hyperlinks
from agentcli.ui.markdown_stream import MarkdownStream
from tests.ui.helpers import FakeClock, deltas, make_console, output, render_whole, stream_all
from tests.ui.screen import screen_of


def shown(text: str, *, terminal: bool = False, seed: int = 0) -> str:
    """What the user reads after `text` was streamed (a colour terminal, or plain output)."""
    console = make_console(terminal=terminal, color="truecolor" if terminal else None)
    return screen_of(stream_all(text, console, seed=seed))


def lines_of(text: str, *, terminal: bool = False) -> list[str]:
    return shown(text, terminal=terminal).splitlines()


HTML_CASES = [
    ('**"Hello, <name>!"**', '"Hello, <name>!"'),
    ("Fill in <placeholder> here.", "Fill in <placeholder> here."),
    ("<placeholder>", "<placeholder>"),
    ("One<br>two <br/> three", "One<br>two <br/> three"),
    ("Press <kbd>Ctrl</kbd>-C", "Press <kbd>Ctrl</kbd>-C"),
    ("<!-- a note -->", "<!-- a note -->"),
    ("<div>\nhidden?\n</div>", "<div> hidden? </div>"),
    ('Use `git commit -m "<message>"` and <T> generics', 'Use git commit -m "<message>" and <T> generics'),
]


@pytest.mark.parametrize(("markdown", "expected"), HTML_CASES, ids=[case[0] for case in HTML_CASES])
@pytest.mark.parametrize("terminal", [False, True], ids=["plain", "colour"])
def test_html_is_shown_as_text(markdown: str, expected: str, terminal: bool) -> None:
    streamed = shown(markdown + "\n\nAfter.", terminal=terminal)
    whole = screen_of(render_whole(markdown + "\n\nAfter.", make_console()))

    assert streamed.splitlines()[0] == expected
    assert whole.splitlines()[0] == expected


def test_html_blocks_spanning_blank_lines_stream_like_the_whole_answer() -> None:
    answer = "<pre>\nfirst <b>bold?</b>\n\nsecond\n</pre>\n\n<!-- one\n\ntwo -->\n\n<details>\n\n**x**\n\n</details>"

    for seed in range(3):
        streamed = stream_all(answer, make_console(), seed=seed)
        assert streamed == render_whole(answer, make_console())
    assert screen_of(streamed).splitlines() == [
        "<pre> first <b>bold?</b>",
        "",
        "second </pre>",
        "",
        "<!-- one",
        "",
        "two -->",
        "",
        "<details>",
        "",
        "x",
        "",
        "</details>",
    ]


def test_escape_sequences_inside_html_are_still_shown_escaped() -> None:
    raw = stream_all("<b>\x1b[2Jcleared?</b>\n", make_console(terminal=True, color="truecolor"))

    assert "\x1b[2J" not in raw
    assert screen_of(raw) == "<b>\\x1b[2Jcleared?</b>"


@pytest.mark.parametrize("heading", ["# Top title", "## Section", "Setext title\n===="])
def test_headings_are_left_aligned(heading: str) -> None:
    for terminal in (False, True):
        first = lines_of(f"{heading}\n\nBody.", terminal=terminal)[0]
        assert first in ("Top title", "Section", "Setext title"), repr(first)


def test_without_hyperlinks_a_link_shows_its_url_once() -> None:
    answer = "See [the docs](https://example.com/docs), <https://x.org/a> and <me@example.com>.\n"

    for terminal in (False, True):
        assert lines_of(answer, terminal=terminal)[0] == (
            "See the docs (https://example.com/docs), https://x.org/a and me@example.com."
        )


def test_with_hyperlinks_the_link_is_made_by_the_terminal() -> None:
    console = make_console(terminal=True, color="truecolor")
    with MarkdownStream(console, hyperlinks=True, clock=FakeClock(step=0.1)) as stream:
        for piece in deltas("See [the docs](https://example.com/docs).\n", seed=1):
            stream.feed(piece)

    raw = output(console)
    assert "\x1b]8;" in raw and "https://example.com/docs" in raw
    assert screen_of(raw) == "See the docs."


def test_plain_output_never_loses_a_links_url() -> None:
    console = make_console()
    with MarkdownStream(console, hyperlinks=True) as stream:
        stream.feed("See [the docs](https://example.com/docs).\n")

    assert screen_of(output(console)) == "See the docs (https://example.com/docs)."


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, False),
        ({"TERM": "xterm-256color"}, False),
        ({"TERM_PROGRAM": "iTerm.app"}, True),
        ({"TERM_PROGRAM": "WezTerm"}, True),
        ({"TERM": "xterm-kitty"}, True),
        ({"VTE_VERSION": "7200"}, True),
        ({"VTE_VERSION": "4600"}, False),
        ({"WT_SESSION": "abc"}, True),
        ({"VTE_VERSION": "7200", "TMUX": "/tmp/tmux-1000/default,1,0"}, False),
        ({"TERM": "screen-256color", "TERM_PROGRAM": "iTerm.app"}, False),
        ({"FORCE_HYPERLINK": "1", "TMUX": "x"}, True),
        ({"FORCE_HYPERLINK": "0", "TERM_PROGRAM": "iTerm.app"}, False),
    ],
)
def test_which_terminals_show_hyperlinks(environ: dict[str, str], expected: bool) -> None:
    assert terminal_shows_hyperlinks(environ) is expected


CODE_CASES = {
    "after a paragraph": (
        "Run this:\n```bash\npytest -q\n```\nThat is all.",
        ["Run this:", "", "pytest -q", "", "That is all."],
    ),
    "blank lines in the source": (
        "Run this:\n\n```bash\npytest -q\n```\n\nThat is all.",
        ["Run this:", "", "pytest -q", "", "That is all."],
    ),
    "indented code": ("Run this:\n\n    pytest -q\n\nThat is all.", ["Run this:", "", "pytest -q", "", "That is all."]),
    "two in a row": ("```\none\n```\n```\ntwo\n```\nEnd.", ["one", "", "two", "", "End."]),
    "in a list item": (
        "- Run this:\n\n  ```\n  pytest -q\n  ```\n  and look.\n- Next item",
        ["• Run this:", "", "pytest -q", "", "and look.", "• Next item"],
    ),
    "ending a list item": (
        "1. First:\n   ```\n   make\n   ```\n2. Second\n\nAfter.",
        ["1 First:", "", "make", "", "2 Second", "", "After."],
    ),
    "in a quote": ("> Quoted:\n> ```\n> code\n> ```\n> more", ["▌ Quoted:", "▌", "▌ code", "▌", "▌ more"]),
}


@pytest.mark.parametrize("case", CODE_CASES, ids=list(CODE_CASES))
@pytest.mark.parametrize("terminal", [False, True], ids=["plain", "colour"])
def test_a_code_block_has_one_blank_line_before_and_after(case: str, terminal: bool) -> None:
    markdown, expected = CODE_CASES[case]

    seen = [re.sub(r"\s+", " ", line).strip() for line in lines_of(markdown, terminal=terminal)]

    assert seen == expected


@pytest.mark.parametrize("opening", ["- one\n- two", "> quoted\n> words", "1. first\n\n   more"])
def test_an_answer_opening_with_a_list_or_quote_starts_on_its_first_line(opening: str) -> None:
    answer = f"{opening}\n\nA paragraph.\n\n{opening}"

    for seed in range(3):
        streamed = stream_all(answer, make_console(), seed=seed)
        assert streamed == render_whole(answer, make_console())
    lines = screen_of(streamed).splitlines()
    assert lines[0].strip() and lines.count("") == 2, lines
