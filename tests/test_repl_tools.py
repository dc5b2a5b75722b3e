"""Tool calls in the REPL, as a person sees them in a real pseudo-terminal: the running call
with its spinner, command output, Ctrl-O, and what an interrupt leaves in the scrollback."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from tests.conftest import StartRepl
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.terminal import Terminal

CTRL_O = "\x0f"
WAIT_FOR_RELEASE = "until [ -e release ]; do sleep 0.05; done; echo released"
"""A command that runs until the test creates `release`: no guessing how long it takes."""


def rows(screen: str) -> list[str]:
    return [line.rstrip() for line in screen.splitlines()]


def wait_for_seconds(repl: Terminal, label: str, timeout: float = 15) -> str:
    """Wait until the spinner line `label Ns · … esc to interrupt` is on screen."""
    pattern = re.compile(re.escape(label) + r" \d+s\b.*esc to interrupt")
    deadline = time.monotonic() + timeout
    while not pattern.search(repl.text()):
        if not repl.pump() or time.monotonic() > deadline:
            raise AssertionError(f"no spinner {label!r} with seconds; the screen shows:\n{repl.text()}")
    return repl.text()


def test_an_approved_command_shows_its_call_line_and_a_spinner_while_it_runs(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    fake_api.script(reply(tool_use("Bash", {"command": WAIT_FOR_RELEASE})), reply(text("It was released.")))
    repl = start_repl()

    repl.submit("wait for the release")
    repl.wait_for("Do you want to proceed?")
    repl.press("1")

    screen = wait_for_seconds(repl, "Running…")
    assert "● Bash(until [ -e release ]" in screen
    assert "released\n" not in screen  # still running: no result yet
    (project / "release").touch()

    screen = repl.wait_for("It was released.")
    result = rows(screen)
    line = next(i for i, row in enumerate(result) if row.startswith("● Bash(until"))
    assert result[line + 1 : line + 3] == ["  ⎿ Exit code 0, 1 line of output", "    released"]


def test_a_call_allowed_without_asking_shows_the_same(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    fake_api.script(reply(tool_use("Bash", {"command": WAIT_FOR_RELEASE})), reply(text("Released.")))
    repl = start_repl("--permission-mode", "bypassPermissions")

    repl.submit("wait for the release")

    screen = wait_for_seconds(repl, "Running…")
    assert "● Bash(until [ -e release ]" in screen
    (project / "release").touch()
    repl.wait_for("Released.")


def test_while_the_model_writes_a_call_the_spinner_says_it_is_preparing_it(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    big = tool_use("Write", {"file_path": "big.txt", "content": "line\n" * 2000})
    fake_api.script(reply(text("I'll write the file."), big, stall_after=20), reply(text("Stopped.")))
    repl = start_repl()

    repl.submit("write a big file")

    screen = wait_for_seconds(repl, "Preparing Write…")
    assert "Running" not in screen
    repl.press("esc")
    repl.wait_for("Interrupted · tell the model what to do instead")


def test_long_output_shows_its_first_and_last_lines_and_ctrl_o_shows_them_all(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    fake_api.script(reply(tool_use("Bash", {"command": "seq 101 140"})), reply(text("Counted.")))
    repl = start_repl("--allowed-tools", "Bash(seq:*)")

    repl.submit("count")
    screen = repl.wait_for_prompt("Counted.")

    shown = rows(screen)
    start = shown.index("● Bash(seq 101 140)")
    assert shown[start + 1 : start + 11] == [
        "  ⎿ Exit code 0, 40 lines of output",
        "    101",
        "    102",
        "    103",
        "    104",
        "    105",
        "    … 32 lines hidden · ctrl+o to show all",
        "    138",
        "    139",
        "    140",
    ]
    assert "    120" not in shown

    repl.type(CTRL_O)

    screen = repl.wait_for("    120")
    expanded = rows(screen)
    again = len(expanded) - expanded[::-1].index("● Bash(seq 101 140)") - 1
    assert again > start
    assert expanded[again + 2 : again + 42] == [f"    {n}" for n in range(101, 141)]


def test_esc_while_a_command_runs_keeps_its_line_marked_interrupted(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    fake_api.script(
        reply(tool_use("Bash", {"command": "sleep 30"}), tool_use("Bash", {"command": "echo never-run"})),
        reply(text("Fine.")),
    )
    repl = start_repl("--allowed-tools", "Bash(sleep:*),Bash(echo:*)")

    repl.submit("wait")
    wait_for_seconds(repl, "Running…")
    repl.press("esc")

    screen = repl.wait_for_prompt("Interrupted · tell the model what to do instead")
    shown = rows(screen)
    start = shown.index("● Bash(sleep 30)")
    assert shown[start : start + 4] == [
        "● Bash(sleep 30)",
        "  ⎿ Interrupted",
        "● Bash(echo never-run)",
        "  ⎿ Interrupted · tell the model what to do instead",
    ]
    repl.submit("go on")
    repl.wait_for("Fine.")
    results = fake_api.requests[1].body["messages"][2]["content"]
    assert [r.get("is_error") for r in results[:2]] == [True, True]
    assert "never-run" not in str(results)


def test_after_thousands_of_lines_of_output_the_repl_still_takes_input_and_answers(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    fake_api.script(
        reply(tool_use("Bash", {"command": "seq 1 5000"})),
        reply(text("Counted to 5000.")),
        reply(text("Still here.")),
    )
    repl = start_repl("--allowed-tools", "Bash(seq:*)")

    repl.submit("count")
    repl.wait_for_prompt("Counted to 5000.")
    repl.type(CTRL_O)  # all 5,000 lines through the terminal
    repl.wait_for("    4000\n")  # not in the preview: the full output is being printed
    repl.submit("and now?")

    screen = repl.wait_for_prompt("Still here.")
    assert "    4999" in screen
    assert len(fake_api.requests) == 3
    result = fake_api.requests[1].body["messages"][-1]["content"][0]
    assert "4999\n5000" in json.dumps(result["content"]).replace("\\n", "\n")
