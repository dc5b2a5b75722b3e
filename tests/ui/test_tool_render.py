"""Tool calls, results, diffs, API errors and the spinner, as the terminal shows them."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from rich.console import RenderableType

from agentcli.contracts import ToolResult
from agentcli.errors import ModelAPIError
from agentcli.events import Notice, Retrying, TextDelta, ToolCallFinished, ToolCallStarted
from agentcli.output.labels import format_tokens
from agentcli.ui.tool_render import (
    ApiErrorLine,
    Spinner,
    ToolCallLine,
    format_elapsed,
    render_event,
)
from tests.ui.helpers import FakeClock, make_console, output
from tests.ui.screen import screen_of

CWD = Path("/work/project")


def shown(renderable: RenderableType | None, *, color: bool = False, width: int = 80) -> str:
    """The raw text written for `renderable` (with escape codes when `color`)."""
    assert renderable is not None
    console = make_console(terminal=color, color="truecolor" if color else None, width=width)
    console.print(renderable)
    return output(console)


def finished(name: str, tool_input: dict[str, object], result: ToolResult) -> ToolCallFinished:
    return ToolCallFinished("toolu_1", name, tool_input, result)


def unified(old: str, new: str, path: str = "src/app.py") -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}", n=1
        )
    )


def test_a_tool_call_is_one_line_with_a_project_relative_path() -> None:
    event = ToolCallStarted("toolu_1", "Read", {"file_path": str(CWD / "src/app.py")})

    assert shown(render_event(event, cwd=CWD)) == "● Read(src/app.py)\n"


def test_a_long_command_stays_on_one_line() -> None:
    event = ToolCallStarted("toolu_1", "Bash", {"command": "pytest -q \\\n  " + "tests/ " * 30})

    lines = shown(render_event(event), width=60).splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("● Bash(pytest -q \\ tests/")
    assert len(lines[0]) <= 60


def test_a_result_shows_the_tool_summary() -> None:
    event = finished("Read", {"file_path": "src/app.py"}, ToolResult("1\tx", summary="Read 120 lines"))

    assert shown(render_event(event)) == "  ⎿ Read 120 lines\n"


def test_program_output_cannot_send_escape_codes_to_the_terminal() -> None:
    nasty = "\x1b]0;pwned\x07\x1b[2Jcleared\x1b[31m FAILED\x1b[0m\nprogress 10%\rprogress 100%"
    result = ToolResult(nasty, is_error=True, summary=nasty + "\nExit code 1")

    raw = shown(render_event(finished("Bash", {"command": "x"}, result)), color=True)

    assert "pwned" not in raw and "\x1b[2J" not in raw and "\x07" not in raw
    assert screen_of(raw).splitlines() == ["  ⎿ cleared FAILED", "    progress 100%", "    Exit code 1"]


def test_a_commands_control_characters_are_shown_escaped_in_its_tool_line() -> None:
    event = ToolCallStarted("toolu_1", "Bash", {"command": "echo hi\x1b[2J \u202eevil \x9bX"})

    raw = shown(render_event(event), color=True, width=120)

    assert "\x1b[2J" not in raw and "\u202e" not in raw and "\x9b" not in raw
    assert screen_of(raw).splitlines() == ["● Bash(echo hi\\x1b[2J \\u202eevil \\x9bX)"]


def test_program_output_cannot_reorder_or_drive_the_terminal_with_c1_or_bidi_controls() -> None:
    nasty = "ok \u202edetrevni\u202c \x9b2J done\x1b"
    result = ToolResult(nasty, summary=nasty + "\nExit code 0")

    raw = shown(render_event(finished("Bash", {"command": "x"}, result)), color=True)

    assert "\u202e" not in raw and "\x9b" not in raw
    assert screen_of(raw).splitlines() == ["  ⎿ ok \\u202edetrevni\\u202c \\x9b2J done\\x1b", "    Exit code 0"]


def test_task_names_and_notices_are_shown_escaped() -> None:
    raw = shown(render_event(Notice("careful\x1b[2J")), color=True)
    spinner = Spinner("Running tests\x1b[2J", clock=FakeClock())

    assert "\x1b[2J" not in raw and "careful\\x1b[2J" in screen_of(raw)
    assert "\x1b[2J" not in shown(spinner, color=True) and "tests\\x1b[2J" in spinner.status_text()


def test_an_error_result_is_red() -> None:
    result = ToolResult("File does not exist: nope.py", is_error=True, summary="File does not exist: nope.py")

    raw = shown(render_event(finished("Read", {"file_path": "nope.py"}, result)), color=True)

    assert "\x1b[31mFile does not exist: nope.py" in raw
    assert screen_of(raw) == "  ⎿ File does not exist: nope.py"


def test_without_a_summary_the_first_line_of_the_content_is_shown() -> None:
    result = ToolResult("first line\nsecond line")

    assert shown(render_event(finished("Glob", {"pattern": "*.py"}, result))) == "  ⎿ first line\n"


def test_an_edit_shows_a_numbered_diff_with_its_summary_line() -> None:
    old = "".join(f"line {n}\n" for n in range(1, 21))
    new = old.replace("line 3\n", "line three\n").replace("line 15\n", "")
    event = finished("Edit", {"file_path": str(CWD / "src/app.py")}, ToolResult("ok", diff=unified(old, new)))

    raw = shown(render_event(event, cwd=CWD), color=True)
    lines = screen_of(raw).splitlines()

    assert lines == [
        "  ⎿ Updated src/app.py: 1 addition, 2 removals",
        "       2   line 2",
        "       3 - line 3",
        "       3 + line three",
        "       4   line 4",
        "         ⋮",
        "      14   line 14",
        "      15 - line 15",
        "      15   line 16",
    ]
    assert "\x1b[32m+ line three" in raw
    assert "\x1b[31m- line 3" in raw


def test_a_new_file_is_reported_as_created_and_a_long_diff_is_cut() -> None:
    content = "".join(f"row {n}\n" for n in range(100))
    diff = "".join(difflib.unified_diff([], content.splitlines(keepends=True), "/dev/null", "b/new.txt"))
    event = finished("Write", {"file_path": "new.txt"}, ToolResult("ok", diff=diff))

    lines = shown(render_event(event)).splitlines()

    assert lines[0] == "  ⎿ Created new.txt: 100 lines"
    assert lines[1] == "       1 + row 0"
    assert lines[-1] == "      … +60 lines · ctrl+o to show all"
    assert len(lines) == 42


def test_the_tools_own_summary_heads_its_diff() -> None:
    summary = "Updated src/app.py: 1 addition, 1 removal"
    event = finished("Edit", {"file_path": "src/app.py"}, ToolResult("ok", summary=summary, diff=unified("a\n", "b\n")))

    assert shown(render_event(event)).splitlines() == [f"  ⎿ {summary}", "      1 - a", "      1 + b"]


def test_a_diff_of_a_file_with_crlf_line_ends() -> None:
    diff = unified("one\r\ntwo\r\n", "one\r\n2\r\n")
    event = finished("Edit", {"file_path": "src/app.py"}, ToolResult("ok", diff=diff))

    assert shown(render_event(event)).splitlines() == [
        "  ⎿ Updated src/app.py: 1 addition, 1 removal",
        "      1   one",
        "      2 - two",
        "      2 + 2",
    ]


def test_a_failed_edit_shows_the_error_not_a_diff() -> None:
    result = ToolResult("old_string not found", is_error=True, summary="old_string not found", diff="+x\n")

    assert shown(render_event(finished("Edit", {"file_path": "a.py"}, result))) == "  ⎿ old_string not found\n"


def test_a_retry_says_when_the_next_attempt_comes() -> None:
    event = Retrying(
        attempt=2, delay=4.0, reason="the stream reported an error: Overloaded", fault="overloaded", retries=3
    )

    assert shown(render_event(event), width=100) == (
        "⚠ the stream reported an error: Overloaded — retrying in 4s (overloaded, attempt 2 of 3)\n"
    )


def test_a_fatal_api_error_names_the_next_step() -> None:
    error = ModelAPIError(
        "API error 401: invalid x-api-key",
        status=401,
        hint="Set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in your environment.",
    )

    text = shown(ApiErrorLine.from_error(error), width=200)

    assert text == (
        "✗ API error 401: invalid x-api-key — Set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in your environment.\n"
    )


def test_a_notice_and_events_shown_elsewhere() -> None:
    assert shown(render_event(Notice("Context is 90% full"))) == "! Context is 90% full\n"
    assert render_event(TextDelta("hi")) is None


def test_the_call_dot_turns_green_or_red_when_the_outcome_is_known() -> None:
    ok = finished("Read", {"file_path": "a"}, ToolResult("x"))
    failed = finished("Read", {"file_path": "a"}, ToolResult("x", is_error=True))

    assert "\x1b[1;32m● " in shown(ToolCallLine.from_event(ok), color=True)
    assert "\x1b[1;31m● " in shown(ToolCallLine.from_event(failed), color=True)


def test_the_spinner_shows_elapsed_time_and_tokens() -> None:
    clock = FakeClock()
    spinner = Spinner(clock=clock)
    clock.now += 3.4
    assert spinner.status_text() == "Thinking… 3s"

    spinner.tokens = 1234
    assert spinner.status_text() == "Thinking… 3s · 1.2k tokens"
    assert shown(spinner)[1:] == " Thinking… 3s · 1.2k tokens\n"


@pytest.mark.parametrize(
    ("count", "text"), [(1, "1"), (999, "999"), (1000, "1k"), (1234, "1.2k"), (34_567, "34k"), (1_500_000, "1.5M")]
)
def test_token_counts_are_short(count: int, text: str) -> None:
    assert format_tokens(count) == text


def test_elapsed_time_past_a_minute() -> None:
    assert format_elapsed(65.9) == "1m 05s"
