"""Claude Code's `statusLine` in the REPL, in-process: the command gets the session as JSON,
its first line shows above agentcli's status line (the prompt's toolbar), it runs again as the
conversation changes, in the background, and one from the checked-in settings needs the
project's hooks to be trusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prompt_toolkit.formatted_text import fragment_list_to_text, to_formatted_text

from agentcli.hooks.trust import TRUST_KEY, hooks_digest
from agentcli.providers.scripted import ScriptedModel
from agentcli.providers.scripted import reply as scripted_reply
from agentcli.providers.scripted import text as scripted_text
from agentcli.repl.app import Repl
from agentcli.settings import load_settings
from agentcli.statusline import setting
from agentcli.statusline.setting import status_line_command
from tests.conftest import RunAgent
from tests.fake_anthropic import FakeAnthropic, reply, text
from tests.hooks_helpers import write_settings
from tests.repl.conftest import MakeRepl
from tests.status_line_helpers import behave, inputs, open_gate, status_script, status_settings
from tests.waiting import wait_until

USAGE = {"input_tokens": 1200, "output_tokens": 30, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def toolbar(repl: Repl) -> list[str]:
    """The lines of the prompt's toolbar, as the user sees them (colours aside)."""
    bottom = repl.prompt.bottom_toolbar
    assert callable(bottom)
    return fragment_list_to_text(to_formatted_text(bottom())).split("\n")


class Said:
    """What the REPL printed so far, its lines joined (rich wraps a notice at the console's width)."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys
        self.words: list[str] = []

    def __call__(self) -> str:
        self.words += self.capsys.readouterr().out.split()
        return " ".join(self.words)

    def wait_for(self, needle: str) -> None:
        wait_until(lambda: needle in self(), f"{needle!r} said")


def shown_after(repl: Repl, needle: str) -> str:
    """Wait until the toolbar's first line (the command's) holds `needle`; that line."""
    wait_until(lambda: needle in toolbar(repl)[0], f"{needle!r} in the status line")
    return toolbar(repl)[0]


def after_one_turn(
    repl_with: MakeRepl, fake_api: FakeAnthropic, settings: Path, tmp_path: Path, turns: int
) -> tuple[Repl, Path, str]:
    """A REPL whose status line (configured in `settings`) showed after a first turn of `turns`
    scripted; the REPL, the script's folder and the line."""
    folder = status_script(tmp_path / "status")
    status_settings(settings, folder)
    fake_api.script(*(reply(text(f"Answer {n}."), usage=USAGE) for n in range(turns)))
    repl, _ = repl_with()
    repl.handle("one")
    return repl, folder, shown_after(repl, "in:1200 ")


def test_the_command_gets_the_session_and_its_first_line_shows_above_agentclis_status(
    repl_with: MakeRepl, fake_api: FakeAnthropic, home: Path, project: Path, tmp_path: Path
) -> None:
    folder = status_script(tmp_path / "status")
    status_settings(home / ".claude" / "settings.json", folder)  # Claude Code's own file, unchanged
    fake_api.script(reply(text("First."), usage=USAGE), reply(text("Second."), usage=USAGE))
    repl, _ = repl_with()
    assert len(toolbar(repl)) == 1  # nothing from the command yet

    repl.handle("hello")

    line = shown_after(repl, "in:1200 ")
    session = repl.session
    cost = session.cost_usd(session.usage)
    assert line == f"{session.model_name} in:1200 ${cost:.4f}" and cost > 0
    assert toolbar(repl)[1].startswith(f" {session.model_name} · default")  # agentcli's own, under it
    given = inputs(folder)[-1]
    assert given["hook_event_name"] == "Status"
    assert given["session_id"] == session.id
    assert given["transcript_path"] == str(session.transcript.path) and session.transcript.path.exists()
    assert given["cwd"] == given["workspace"]["current_dir"] == given["workspace"]["project_dir"] == str(project)
    assert given["model"] == {"id": session.model_name, "display_name": session.model_name}
    assert given["cost"]["total_cost_usd"] == pytest.approx(cost)
    api_ms = given["cost"]["total_api_duration_ms"]  # a count of milliseconds, whatever the machine's speed
    assert isinstance(api_ms, int) and api_ms >= 0 and given["cost"]["total_lines_added"] == 0
    window = given["context_window"]
    assert window["current_usage"] == USAGE
    assert window["total_input_tokens"] == 1200 and window["total_output_tokens"] == 30
    assert window["context_window_size"] == session.model_info.context_window
    assert window["used_percentage"] == round(1230 * 100 / session.model_info.context_window, 1)
    assert given["permission_mode"] == "default" and given["exceeds_200k_tokens"] is False
    assert (folder / "cwd").read_text() == str(project)
    assert "ANTHROPIC_API_KEY" not in json.loads((folder / "env.json").read_text())  # as a hook's

    repl.handle("again")  # the conversation changed: it runs again, and the line follows
    shown_after(repl, "in:2400 ")


def test_only_colours_reach_the_screen(
    repl_with: MakeRepl, fake_api: FakeAnthropic, home: Path, tmp_path: Path
) -> None:
    folder = status_script(tmp_path / "status")
    behave(folder, "hostile")
    status_settings(home / ".agentcli" / "settings.json", folder)
    fake_api.script(reply(text("Hi.")))
    repl, _ = repl_with()

    repl.handle("hello")

    assert shown_after(repl, "moved") == "redmoved"  # no screen clear, title or cursor move
    bottom = repl.prompt.bottom_toolbar
    assert callable(bottom)
    fragments = to_formatted_text(bottom())
    assert [fragment[0] for fragment in fragments[:4]] == ["ansired"] * 3 + [""]  # "red" in red, then "m…"
    assert not any("\x1b" in fragment[1] or "\x9b" in fragment[1] for fragment in fragments)


def test_a_failing_command_keeps_the_last_line_and_is_reported_once(
    repl_with: MakeRepl, fake_api: FakeAnthropic, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repl, folder, first = after_one_turn(repl_with, fake_api, home / ".agentcli" / "settings.json", tmp_path, 4)

    behave(folder, "fail")
    repl.handle("two")
    said = Said(capsys)
    said.wait_for("failed (exit status 3): last words")
    runs = len(inputs(folder))
    repl.handle("three")  # fails again, and says nothing
    wait_until(lambda: len(inputs(folder)) > runs, "a run after the third turn")  # it read "fail" first
    behave(folder, "ok")
    assert toolbar(repl)[0] == first  # the line it showed last stays meanwhile
    repl.handle("four")
    shown_after(repl, "in:4800 ")  # runs one after the other: the third's failure came before this

    assert said().count("failed (exit status 3)") == 1 and "first words" not in said()


def test_a_slow_command_never_holds_up_the_prompt(
    repl_with: MakeRepl, fake_api: FakeAnthropic, home: Path, tmp_path: Path
) -> None:
    repl, folder, before = after_one_turn(repl_with, fake_api, home / ".agentcli" / "settings.json", tmp_path, 3)

    behave(folder, "block")
    repl.handle("two")
    wait_until((folder / "blocked").exists, "the command blocking")
    behave(folder, "ok")  # its next run (the one that follows this one) won't block
    repl.handle("three")  # a whole turn while the command waits
    assert len(fake_api.requests) == 3
    assert toolbar(repl)[0] == before

    open_gate(folder)
    shown_after(repl, "in:3600 ")  # the refreshes asked for meanwhile made a run with the latest


def test_a_command_past_its_timeout_is_stopped_and_reported(
    repl_with: MakeRepl,
    fake_api: FakeAnthropic,
    home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(setting, "TIMEOUT_S", 0.2)
    folder = status_script(tmp_path / "status")
    behave(folder, "block")  # and the gate is never opened
    status_settings(home / ".agentcli" / "settings.json", folder)
    fake_api.script(reply(text("Hi.")))
    repl, _ = repl_with()

    repl.handle("hello")

    Said(capsys).wait_for("was stopped after 0.2 s")
    assert len(toolbar(repl)) == 1


@pytest.mark.parametrize("trusted", [True, False])
def test_a_checked_in_status_line_runs_only_when_the_projects_hooks_are_trusted(
    trusted: bool,
    repl_with: MakeRepl,
    fake_api: FakeAnthropic,
    project: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = status_script(tmp_path / "status")
    path = status_settings(project / ".claude" / "settings.json", folder)
    command = status_line_command(load_settings(project), print)
    assert command is not None and command.command.source == path
    answer = {"sha256": hooks_digest([command.command]), "trusted": trusted}  # the user's answer, remembered
    write_settings(project / ".agentcli" / "settings.local.json", {TRUST_KEY: answer})
    fake_api.script(reply(text("Hi."), usage=USAGE))
    repl, _ = repl_with()

    repl.handle("hello")

    if trusted:
        shown_after(repl, "in:1200 ")
    else:
        assert "Not running the 1 hook(s) of" in Said(capsys)()
        assert repl.session.parts.status_line is None  # decided as the REPL started: nothing runs it later
        assert len(toolbar(repl)) == 1 and inputs(folder) == []


def test_the_users_trust_in_the_projects_hooks_covers_its_status_line(
    repl_with: MakeRepl, fake_api: FakeAnthropic, home: Path, project: Path, tmp_path: Path
) -> None:
    folder = status_script(tmp_path / "status")
    status_settings(project / ".agentcli" / "settings.json", folder)
    write_settings(home / ".agentcli" / "settings.json", {"enableAllProjectHooks": True})
    fake_api.script(reply(text("Hi."), usage=USAGE))
    repl, _ = repl_with()  # nothing asked: no key was sent

    repl.handle("hello")

    shown_after(repl, "in:1200 ")


def test_agentcli_run_neither_runs_nor_asks_about_a_status_line(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    folder = status_script(tmp_path / "status")
    status_settings(project / ".claude" / "settings.json", folder)

    model.script(scripted_reply(scripted_text("Hi.")))
    done = run_agent("hello")

    assert done.returncode == 0 and "Not running" not in done.stderr and "statusLine" not in done.stderr
    assert inputs(folder) == []


def test_a_status_line_agentcli_cannot_use_is_skipped_with_one_notice(
    repl_with: MakeRepl, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(home / ".claude" / "settings.json", {"statusLine": {"type": "static", "text": "hi"}})
    repl, _ = repl_with()

    out = Said(capsys)()
    assert "No status line: statusLine in" in out and "has type 'static': agentcli runs only \"command\"" in out
    assert len(toolbar(repl)) == 1
