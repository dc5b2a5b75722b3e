"""The `statusLine` command's line on the REPL's screen (in a real pseudo-terminal): above
agentcli's own status line, at the prompt and under the spinner, in its colours, and unable to
move the cursor, clear the screen or retitle the terminal; one from the checked-in settings is
put to the user with the project's hooks."""

from __future__ import annotations

from pathlib import Path

from agentcli.hooks import load_hooks
from agentcli.hooks.trust import TRUST_KEY, hooks_digest
from tests.conftest import AGENTCLI, StartRepl, cli_env
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.hooks_helpers import hook_command, hook_entry, logged, write_settings
from tests.status_line_helpers import behave, inputs, status_script, status_settings
from tests.terminal import Terminal
from tests.waiting import wait_until

USAGE = {"input_tokens": 300_000, "output_tokens": 700, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def row_with(repl: Terminal, needle: str) -> int:
    """The lowest screen row (not the scrollback) on which `needle` is shown."""
    rows = [y for y, line in enumerate(repl.screen.display) if needle in line]
    assert rows, f"{needle!r} is not on screen:\n{repl.text()}"
    return rows[-1]


def test_the_commands_line_shows_above_agentclis_in_its_colours_and_nothing_else(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path, tmp_path: Path
) -> None:
    folder = status_script(tmp_path / "status")
    behave(folder, "hostile")  # colours, and a screen clear, a window title and a cursor move
    status_settings(home / ".claude" / "settings.json", folder)
    fake_api.script(
        reply(tool_use("Glob", {"pattern": "*.md"}), usage=USAGE),
        reply(text("Looking further"), stall_after=1),  # the turn stays open until Esc
    )
    repl = start_repl()

    repl.wait_for("redmoved")  # run as the REPL starts
    toolbar = row_with(repl, "default (shift-tab)")
    assert row_with(repl, "redmoved") == toolbar - 1
    line = repl.screen.display[toolbar - 1]
    start = line.index("redmoved")
    cells = repl.screen.buffer[toolbar - 1]
    assert [cells[x].fg for x in range(start, start + 3)] == ["red"] * 3 and cells[start + 3].fg != "red"
    assert "agentcli" in repl.text()  # the banner: nothing cleared the screen
    assert repl.screen.title != "pwned"

    repl.submit("look around")
    repl.wait_for("· default · 300k/1M context")  # mid-turn, after the first response
    status = row_with(repl, "· default · 300k/1M context")
    assert row_with(repl, "redmoved") == status - 1 and row_with(repl, "esc to interrupt") < status - 1
    assert repl.screen.title != "pwned"

    repl.press("esc")
    repl.wait_for("Interrupted")
    repl.wait_for("default (shift-tab)")
    assert row_with(repl, "redmoved") == row_with(repl, "default (shift-tab)") - 1
    # it ran again as the conversation changed (in the background: its input is written as it starts)
    wait_until(lambda: len(inputs(folder)) >= 2, "a second run of the status line")


def test_a_status_line_the_repository_adds_to_trusted_hooks_is_asked_about_again(
    fake_api: FakeAnthropic, home: Path, project: Path, tmp_path: Path
) -> None:
    settings = project / ".agentcli" / "settings.json"
    hooks = {"SessionStart": [hook_entry(hook_command(tmp_path, tmp_path / "start.log"))]}
    trusted = load_hooks([("project", settings, {"hooks": hooks})]).commands
    answer = {"sha256": hooks_digest(trusted), "trusted": True}  # the user trusted the hooks as they were
    write_settings(project / ".agentcli" / "settings.local.json", {TRUST_KEY: answer})
    folder = status_script(tmp_path / "status")
    status_settings(settings, folder, hooks=hooks)  # then the repository added a status line
    fake_api.script(reply(text("answered")))
    env = cli_env(home, fake_api.url)
    env.pop("NO_COLOR")
    env["TERM"] = "xterm-256color"

    repl = Terminal([AGENTCLI], env=env, cwd=project, cols=160)
    try:
        screen = repl.wait_for("Trust these hooks and run them in this project?")
        assert "StatusLine" in screen and "status.py" in screen  # what would run is shown
        repl.type("2")
        repl.wait_for("(shift-tab)")
        repl.submit("hi")
        repl.wait_for_prompt("answered")
    finally:
        repl.close()
    assert inputs(folder) == [] and logged(tmp_path / "start.log") == []
