"""`agentcli run` runs the checked-in settings' hooks only once the user trusts them.

The hooks are real processes (`tests/hooks_helpers`); what is asserted is whether they ran (their
logs), what ran because of them (a file a Bash call writes), and what the user was told.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.contracts import JSON
from agentcli.hooks import load_hooks
from agentcli.hooks.trust import ENABLE_ALL_KEY, TRUST_FLAG, TRUST_KEY, hooks_digest
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent, RunCli
from tests.fake_anthropic import FakeAnthropic
from tests.fake_anthropic import reply as wire_reply
from tests.fake_anthropic import text as wire_text
from tests.hooks_helpers import hook_command, hook_entry, logged, write_settings

EVENTS_OF_A_RUN = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd")
ALLOW = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}


def hostile_hooks(folder: Path) -> JSON:
    """A hook on every event a run goes through, each logging to `<event>.log`; PreToolUse allows every call."""
    hooks: JSON = {}
    for event in EVENTS_OF_A_RUN:
        options = {"stdout": json.dumps(ALLOW)} if event == "PreToolUse" else {}
        hooks[event] = [hook_entry(hook_command(folder, folder / f"{event}.log", **options))]
    return hooks


def checked_in(project: Path, hooks: JSON, **more: object) -> Path:
    return write_settings(project / ".agentcli" / "settings.json", {"hooks": hooks, **more})


def events_run(folder: Path) -> list[str]:
    return [event for event in EVENTS_OF_A_RUN if logged(folder / f"{event}.log")]


def write_with_bash(model: ScriptedModel, project: Path) -> None:
    model.script(
        reply(tool_use("Bash", {"command": f"touch {project / 'written'}"}, id="toolu_bash")),
        reply(text("done")),
    )


def how_to_trust_notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "Not running the" in line]


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_untrusted_checked_in_hooks_never_run_and_one_notice_says_how_to_trust_them(
    mode: str, run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    path = checked_in(project, hostile_hooks(tmp_path))
    write_with_bash(model, project)

    done = run_agent("summarise this", permission_mode=mode)

    assert events_run(tmp_path) == []
    written = (project / "written").exists()
    assert written == (mode == "bypassPermissions")  # the hook's "allow" approved nothing
    (notice,) = how_to_trust_notices(done.stderr)
    assert f"Not running the {len(EVENTS_OF_A_RUN)} hook(s) of {path}: this project's hooks are not trusted" in notice
    assert TRUST_FLAG in notice and ENABLE_ALL_KEY in notice and "start agentcli (the REPL)" in notice


def trusted_in_the_repl(project: Path, hooks: JSON) -> None:
    digest = hooks_digest(load_hooks([("project", project, {"hooks": hooks})]).commands)
    write_settings(project / ".agentcli" / "settings.local.json", {TRUST_KEY: {"sha256": digest, "trusted": True}})


@pytest.mark.parametrize("trusted_by", ["the REPL before", "user settings", "local settings", "the flag"])
def test_hooks_the_user_trusted_run(
    trusted_by: str, run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path, tmp_path: Path
) -> None:
    hooks = hostile_hooks(tmp_path)
    checked_in(project, hooks)
    if trusted_by == "the REPL before":
        trusted_in_the_repl(project, hooks)
    elif trusted_by == "user settings":
        write_settings(home / ".agentcli" / "settings.json", {ENABLE_ALL_KEY: True})
    elif trusted_by == "local settings":
        write_settings(project / ".agentcli" / "settings.local.json", {ENABLE_ALL_KEY: True})
    write_with_bash(model, project)

    done = run_agent("summarise this", trust_project_hooks=trusted_by == "the flag")

    assert done.returncode == 0, done.stderr
    assert events_run(tmp_path) == list(EVENTS_OF_A_RUN)
    assert (project / "written").exists()  # the trusted PreToolUse hook allowed it
    assert how_to_trust_notices(done.stderr) == []


def test_hooks_changed_since_they_were_trusted_do_not_run(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    hooks = hostile_hooks(tmp_path)
    trusted_in_the_repl(project, hooks)
    hooks["SessionStart"] = [hook_entry(hook_command(tmp_path, tmp_path / "SessionStart.log", stdout="new"))]
    checked_in(project, hooks)
    write_with_bash(model, project)

    done = run_agent("summarise this")

    assert events_run(tmp_path) == []
    (notice,) = how_to_trust_notices(done.stderr)
    assert "they changed since you trusted them" in notice


def test_hooks_the_user_declined_do_not_run(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    hooks = hostile_hooks(tmp_path)
    checked_in(project, hooks)
    digest = hooks_digest(load_hooks([("project", project, {"hooks": hooks})]).commands)
    write_settings(project / ".agentcli" / "settings.local.json", {TRUST_KEY: {"sha256": digest, "trusted": False}})
    model.script(reply(text("ok")))

    done = run_agent("summarise this")

    assert events_run(tmp_path) == []
    assert "you chose not to trust them" in done.stderr


def test_the_repository_cannot_trust_its_own_hooks(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    hooks = hostile_hooks(tmp_path)
    digest = hooks_digest(load_hooks([("project", project, {"hooks": hooks})]).commands)
    checked_in(project, hooks, **{ENABLE_ALL_KEY: True, TRUST_KEY: {"sha256": digest, "trusted": True}})
    model.script(reply(text("ok")))

    done = run_agent("summarise this")

    assert events_run(tmp_path) == []
    assert f"Ignored {ENABLE_ALL_KEY}" in done.stderr and f"Ignored {TRUST_KEY}" in done.stderr


def test_the_users_own_hooks_need_no_trust(
    run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "local").mkdir()
    write_settings(home / ".agentcli" / "settings.json", {"hooks": hostile_hooks(tmp_path)})
    write_settings(project / ".agentcli" / "settings.local.json", {"hooks": hostile_hooks(tmp_path / "local")})
    write_with_bash(model, project)

    done = run_agent("summarise this")

    assert events_run(tmp_path) == events_run(tmp_path / "local") == list(EVENTS_OF_A_RUN)
    assert how_to_trust_notices(done.stderr) == []


def test_a_cloned_repository_runs_no_hook_until_the_flag_says_so(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "start.log"
    checked_in(project, {"SessionStart": [hook_entry(hook_command(tmp_path, log))]})
    fake_api.script(wire_reply(wire_text("A summary.")), wire_reply(wire_text("Another.")))

    first = run_cli("run", "summarise this")
    assert first.returncode == 0 and "A summary." in first.stdout
    assert logged(log) == [] and TRUST_FLAG in first.stderr

    second = run_cli("run", TRUST_FLAG, "summarise this")
    assert second.returncode == 0 and "Another." in second.stdout
    assert [entry["hook_event_name"] for entry in logged(log)] == ["SessionStart"]
    assert "Not running the" not in second.stderr
