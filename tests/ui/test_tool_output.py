"""Tool output in the REPL: previews of long output, Ctrl-O's full view, running and interrupted calls."""

from __future__ import annotations

from pathlib import Path

from rich.console import RenderableType

from agentcli.contracts import ToolResult
from agentcli.events import Event, ToolCallFinished, ToolCallRunning
from agentcli.executor import INTERRUPTED
from agentcli.repl.view import TurnView
from agentcli.ui.tool_render import OutputPreview, ToolResultView
from tests.ui.helpers import make_console, output
from tests.ui.screen import screen_of

CWD = Path("/work/project")


def screen(renderable: RenderableType, width: int = 80) -> list[str]:
    console = make_console(terminal=True, color="truecolor", width=width)
    console.print(renderable)
    return screen_of(output(console)).splitlines()


def bash_result(lines: int, *, code: int = 0) -> ToolResult:
    """What the Bash tool reports for a command that printed `lines` numbered lines."""
    text = "\n".join(f"out {n}" for n in range(1, lines + 1))
    status = f"Exit code {code}"
    summary = f"{status}, {lines} line{'' if lines == 1 else 's'} of output"
    return ToolResult(f"{text}\n{status}", is_error=code != 0, summary=summary, output=text)


def bash_done(result: ToolResult, call_id: str = "toolu_1", command: str = "make") -> ToolCallFinished:
    return ToolCallFinished(call_id, "Bash", {"command": command}, result)


def test_long_output_shows_its_first_and_last_lines_and_counts_the_rest() -> None:
    view = ToolResultView(bash_done(bash_result(40)))

    assert screen(view) == [
        "  ⎿ Exit code 0, 40 lines of output",
        "    out 1",
        "    out 2",
        "    out 3",
        "    out 4",
        "    out 5",
        "    … 32 lines hidden · ctrl+o to show all",
        "    out 38",
        "    out 39",
        "    out 40",
    ]
    assert view.hidden == 32


def test_short_output_is_shown_whole() -> None:
    view = ToolResultView(bash_done(bash_result(9)))

    assert screen(view) == ["  ⎿ Exit code 0, 9 lines of output", *[f"    out {n}" for n in range(1, 10)]]
    assert view.hidden == 0


def test_the_full_view_shows_every_line() -> None:
    lines = screen(ToolResultView(bash_done(bash_result(40)), full=True))

    assert lines == ["  ⎿ Exit code 0, 40 lines of output", *[f"    out {n}" for n in range(1, 41)]]


def test_a_failed_command_shows_its_status_in_red_and_its_output() -> None:
    console = make_console(terminal=True, color="truecolor")
    console.print(ToolResultView(bash_done(bash_result(2, code=1))))
    raw = output(console)

    assert screen_of(raw).splitlines() == ["  ⎿ Exit code 1, 2 lines of output", "    out 1", "    out 2"]
    assert "\x1b[31mExit code 1" in raw


def test_output_lines_are_shown_with_control_characters_escaped() -> None:
    text = "\x1b]0;pwned\x07\x1b[2Jcleared\x1b[31m red\x1b[0m\nok \u202eevil \x9b2J\nprogress 10%\rprogress 100%"
    result = ToolResult(text + "\nExit code 0", summary="Exit code 0, 3 lines of output", output=text)
    console = make_console(terminal=True, color="truecolor")
    console.print(ToolResultView(bash_done(result)))
    raw = output(console)

    assert "pwned" not in raw and "\x1b[2J" not in raw and "\u202e" not in raw and "\x9b" not in raw
    assert screen_of(raw).splitlines()[1:] == ["    cleared red", "    ok \\u202eevil \\x9b2J", "    progress 100%"]


def test_a_grep_listing_is_previewed_under_its_summary() -> None:
    listing = "\n".join(f"src/m{n}.py:1:needle" for n in range(20))
    result = ToolResult(listing, summary="Found 20 matching lines in 20 files", output=listing)

    lines = screen(ToolResultView(ToolCallFinished("t", "Grep", {"pattern": "needle"}, result)))

    assert lines[0] == "  ⎿ Found 20 matching lines in 20 files"
    assert lines[1] == "    src/m0.py:1:needle"
    assert "    … 12 lines hidden · ctrl+o to show all" in lines
    assert lines[-1] == "    src/m19.py:1:needle"


def test_a_read_stays_one_summary_line() -> None:
    result = ToolResult("\n".join(f"{n}\tline" for n in range(1, 200)), summary="Read 199 lines")

    view = ToolResultView(ToolCallFinished("t", "Read", {"file_path": "a.py"}, result))

    assert screen(view) == ["  ⎿ Read 199 lines"]
    assert view.hidden == 0


def test_empty_output_adds_no_rows() -> None:
    assert screen(OutputPreview("")) == []
    assert OutputPreview("\n\n").hidden == 0


def turn(events: list[Event], *, terminal: bool = True) -> tuple[TurnView, list[str]]:
    """A TurnView fed `events` within one turn; what the screen shows once the turn is over."""
    console = make_console(terminal=terminal, color="truecolor" if terminal else None, width=80)
    view = TurnView(console, CWD)
    view.begin()
    for event in events:
        view(event)
    view.end()
    return view, screen_of(output(console)).splitlines()


def read_events(call_id: str, path: str, lines: int) -> tuple[ToolCallRunning, ToolCallFinished]:
    tool_input = {"file_path": str(CWD / path)}
    result = ToolResult("x", summary=f"Read {lines} line{'' if lines == 1 else 's'}")
    return (
        ToolCallRunning(call_id, "Read", tool_input, parallel=True),
        ToolCallFinished(call_id, "Read", tool_input, result),
    )


def test_concurrent_calls_are_printed_each_with_its_result_in_call_order() -> None:
    first_running, first_done = read_events("toolu_1", "a.py", 1)
    second_running, second_done = read_events("toolu_2", "b.py", 2)

    _, lines = turn([first_running, second_running, first_done, second_done])

    assert lines == ["● Read(a.py)", "  ⎿ Read 1 line", "● Read(b.py)", "  ⎿ Read 2 lines"]


def test_interrupted_calls_keep_their_lines_and_the_last_says_what_to_do() -> None:
    command = {"command": "sleep 30"}
    events: list[Event] = [
        ToolCallRunning("toolu_1", "Bash", command),
        ToolCallFinished("toolu_1", "Bash", command, INTERRUPTED, interrupted=True),
        ToolCallFinished("toolu_2", "Bash", {"command": "echo later"}, INTERRUPTED, interrupted=True),
    ]
    console = make_console(terminal=True, color="truecolor", width=80)
    view = TurnView(console, CWD)
    view.begin()
    for event in events:
        view(event)
    view.interrupted()

    assert screen_of(output(console)).splitlines() == [
        "● Bash(sleep 30)",
        "  ⎿ Interrupted",
        "● Bash(echo later)",
        "  ⎿ Interrupted · tell the model what to do instead",
    ]


def test_an_interrupt_without_tool_calls_is_one_line() -> None:
    console = make_console(width=80)
    view = TurnView(console, CWD)
    view.begin()
    view.interrupted()

    assert output(console) == "  ⎿ Interrupted · tell the model what to do instead\n"


def test_ctrl_o_shows_the_latest_result_that_was_cut_short() -> None:
    long_run = bash_done(bash_result(40), "toolu_1", "seq 40")
    short_run = bash_done(bash_result(2), "toolu_2", "seq 2")
    view, _ = turn([long_run, short_run], terminal=False)
    console = make_console(width=80)
    view.console = console

    view.expand_last_result()

    lines = screen_of(output(console)).splitlines()
    assert lines[0] == "● Bash(seq 40)"
    assert lines[2:] == [f"    out {n}" for n in range(1, 41)]


def test_ctrl_o_before_any_long_output_says_so() -> None:
    console = make_console(width=80)
    TurnView(console, CWD).expand_last_result()

    assert output(console) == "No tool output was cut short yet.\n"
