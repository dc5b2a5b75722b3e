"""The permission question in a real terminal: arrow keys, the one-line answer, wrapping."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import AGENTCLI, StartRepl, cli_env
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.terminal import Terminal

QUESTION = "Do you want to proceed?"


def test_arrow_down_to_no_and_enter_denies_and_collapses_to_one_line(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    fake_api.script(reply(tool_use("Bash", {"command": "touch wiped"})), reply(text("Understood.")))
    repl = start_repl()

    repl.submit("clean up")
    screen = repl.wait_for(QUESTION)
    assert "❯ 1. Yes" in screen  # the first option is highlighted at the start
    repl.press("down", "down")
    repl.wait_for("❯ 3. No")
    repl.press("enter")
    repl.wait_for("what to do differently (Enter to skip)")
    repl.submit("use make clean")

    screen = repl.wait_for_prompt("Understood.")
    assert "✗ Denied Bash(touch wiped) · use make clean" in screen
    assert QUESTION not in screen and "─ Bash command" not in screen and "Enter to skip" not in screen
    assert not (project / "wiped").exists()
    [result] = fake_api.requests[1].body["messages"][-1]["content"]
    assert result["is_error"] is True and "use make clean" in result["content"]


def test_up_and_down_move_the_highlight_and_enter_takes_it(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    fake_api.script(reply(tool_use("Bash", {"command": "git status --short"})), reply(text("Clean tree.")))
    repl = start_repl()

    repl.submit("status?")
    repl.wait_for(QUESTION)
    repl.press("down", "down", "down", "up")  # the highlight stops at the last option
    repl.wait_for("❯ 2. Yes, and don't ask again")
    repl.press("enter")

    screen = repl.wait_for_prompt("Clean tree.")
    assert "✓ Allowed Bash(git status --short) · and Bash(git status:*) from now on" in screen
    saved = json.loads((project / ".agentcli" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == ["Bash(git status:*)"]


def test_an_approved_edit_shows_one_line_and_its_diff_once(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    fake_api.script(
        reply(tool_use("Read", {"file_path": "calc.py"})),
        reply(tool_use("Edit", {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"})),
        reply(text("Fixed the sign.")),
    )
    repl = start_repl()

    repl.submit("fix add")
    screen = repl.wait_for(QUESTION)
    assert "+    return a + b" in screen  # the proposed change, in the question
    assert "agentcli asks before changing files" in screen and "No rule allows it yet" not in screen
    repl.press("enter")

    screen = repl.wait_for_prompt("Fixed the sign.")
    assert screen.count("✓ Allowed Edit(calc.py)") == 1
    assert screen.count("return a + b") == 1  # the diff of the result only: the question is gone
    assert QUESTION not in screen and "Edit file" not in screen
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_the_dont_ask_again_option_wraps_under_its_own_text_at_60_columns(
    fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(reply(tool_use("Bash", {"command": "git status --short"})), reply(text("Not run.")))
    env = cli_env(home, fake_api.url)
    env["TERM"] = "xterm-256color"
    repl = Terminal([AGENTCLI], env=env, cwd=project, cols=60)
    try:
        repl.wait_for("(shift-tab)")
        repl.submit("status?")
        screen = repl.wait_for(QUESTION)
        lines = screen.splitlines()
        first = next(i for i, line in enumerate(lines) if "2. Yes, and don't ask" in line)
        indent = lines[first].index("Yes,")
        wrapped = lines[first + 1 : next(i for i in range(first, len(lines)) if "3. No" in lines[i])]
        assert len(wrapped) >= 1, screen
        for line in wrapped:
            assert line[:indent].strip() == "" and line[indent] != " ", screen
        assert "settings.local.json)" in " ".join(wrapped)
        repl.press("esc")
        repl.wait_for("Not run.")
    finally:
        repl.close()


def test_a_diff_taller_than_the_terminal_is_clipped_and_d_shows_all_of_it(
    fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    content = "".join(f"line {n}\n" for n in range(1, 61))
    fake_api.script(reply(tool_use("Write", {"file_path": "long.txt", "content": content})), reply(text("Wrote it.")))
    env = cli_env(home, fake_api.url)
    env["TERM"] = "xterm-256color"
    repl = Terminal([AGENTCLI], env=env, cwd=project, rows=24, cols=100)
    try:
        repl.wait_for("(shift-tab)")
        repl.submit("write it")
        screen = repl.wait_for(QUESTION)
        assert "more lines (press d to see them all)" in screen and "+line 60" not in screen
        assert "1. Yes" in screen  # the options are on screen
        repl.press("d")
        # the whole diff is printed first, then the question is drawn again below it: wait for that
        screen = repl.wait_for("more lines (shown in full above)")
        assert "+line 1 " in screen and "+line 60" in screen
        repl.press("1")
        repl.wait_for_prompt("Wrote it.")
        assert (project / "long.txt").read_text() == content
    finally:
        repl.close()


def test_an_outside_file_question_takes_arrows_and_collapses(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("TOP SECRET")
    (project / "CLAUDE.md").write_text("See @../outside/secret.md")
    fake_api.script(reply(text("Answered.")))
    repl = start_repl()

    repl.submit("hello")
    repl.wait_for("Allow agentcli to read these files")
    repl.press("down")
    repl.wait_for("❯ 2. No")
    repl.press("enter")

    screen = repl.wait_for_prompt("Answered.")
    assert f"✗ Not sending {secret.resolve()} to the model" in screen
    assert "Files outside the project" not in screen
    assert "TOP SECRET" not in json.dumps(fake_api.requests[0].body["messages"])
