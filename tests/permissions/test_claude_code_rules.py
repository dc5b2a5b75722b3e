"""Settings and rules people write for Claude Code: `Task(...)`/`Agent(...)`, `Skill(...)`,
`WebFetch(domain:...)`, rules that cannot be read (fail closed), `permissions` keys agentcli does
not know, the dontAsk mode, `manual`/`auto`, `disableBypassPermissionsMode`, `additionalDirectories`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from agentcli.access import NOTHING, Access, unknown
from agentcli.contracts import JSON, ToolContext
from agentcli.errors import UsageError
from agentcli.permissions.gate import Gate, build_gate
from agentcli.permissions.prompt import Answer
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.settings import load_settings
from agentcli.workspace.local import LocalWorkspace
from tests.conftest import RunAgent
from tests.permissions.helpers import TOOLS, Recorder, StandIn, check, outcome


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    project.mkdir()
    monkeypatch.setenv("AGENTCLI_HOME", str(home / ".agentcli"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    return {
        "project_dir": project,
        "user": home / ".claude" / "settings.json",
        "project": project / ".claude" / "settings.json",
        "local": project / ".claude" / "settings.local.json",
    }


def write(path: Path, permissions: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": permissions}))


def gate_for(places: dict[str, Path], mode: str | None = None) -> tuple[Gate, list[str]]:
    settings = load_settings(places["project_dir"])
    gate = build_gate(settings, places["project_dir"], mode)
    return gate, settings.notices


def contacts_its_url(tool_input: JSON, ctx: ToolContext) -> Access:
    """WebFetch's declaration (issue 27 brings the tool): it contacts its url's host."""
    return Access(hosts=(urlsplit(str(tool_input["url"])).hostname or "",))


def touches_nothing(tool_input: JSON, ctx: ToolContext) -> Access:
    return NOTHING


def does_anything(tool_input: JSON, ctx: ToolContext) -> Access:
    return unknown("a stand-in")


def test_task_agent_and_skill_rules_name_what_the_call_starts(places: dict[str, Path]) -> None:
    write(places["user"], {"deny": ["Agent(Explore)", "Skill(deploy *)"], "ask": ["Task(review*)"]})
    gate, _ = gate_for(places)
    cwd = places["project_dir"]
    task, skill = StandIn("Task", touches_nothing), StandIn("Skill", touches_nothing)
    TOOLS.update(Task=task, Skill=skill)
    try:
        assert not check(gate, "Task", {"subagent_type": "Explore", "prompt": "p"}, cwd).allowed
        assert check(gate, "Task", {"subagent_type": "general-purpose", "prompt": "p"}, cwd).allowed
        assert outcome(gate, "Task", {"subagent_type": "reviewer", "prompt": "p"}, cwd) == "ask"
        assert not check(gate, "Skill", {"skill": "deploy", "args": "prod"}, cwd).allowed
        assert not check(gate, "Skill", {"skill": "/deploy"}, cwd).allowed
        assert check(gate, "Skill", {"skill": "commit"}, cwd).allowed
    finally:
        del TOOLS["Task"], TOOLS["Skill"]


def test_webfetch_domain_rules_match_the_host_a_call_contacts(places: dict[str, Path]) -> None:
    write(places["user"], {"allow": ["WebFetch(domain:docs.python.org)"], "deny": ["WebFetch(domain:*.evil.test)"]})
    gate, _ = gate_for(places)
    ctx = ToolContext(LocalWorkspace(places["project_dir"]))
    recorder = Recorder(Answer.no())
    gate.prompter = recorder
    fetch = StandIn("WebFetch", contacts_its_url)

    assert gate.check(fetch, {"url": "https://docs.python.org/3/library/re.html"}, ctx).allowed
    assert not gate.check(fetch, {"url": "https://a.b.evil.test/x"}, ctx).allowed
    assert not gate.check(fetch, {"url": "https://example.com/"}, ctx).allowed  # asked, and the user said no
    assert [request.tool for request in recorder.requests] == ["WebFetch"]


def test_a_deny_or_ask_rule_that_cannot_be_read_covers_every_call_of_its_tool(places: dict[str, Path]) -> None:
    write(
        places["project"],
        {"allow": ["Bash", "Read(~bob/x)"], "deny": ["Bash(rm -rf /", "grep(secret)"], "ask": ["Edit(../x)"]},
    )
    gate, notices = gate_for(places)
    cwd = places["project_dir"]

    assert not check(gate, "Bash", {"command": "ls"}, cwd).allowed
    assert not check(gate, "Grep", {"pattern": "x"}, cwd).allowed  # grep(...): the Grep tool, in the right case
    assert check(gate, "Read", {"file_path": str(cwd / "a.txt")}, cwd).allowed
    assert outcome(gate, "Edit", {"file_path": str(cwd / "a.txt"), "old_string": "a", "new_string": "b"}, cwd) == "ask"
    said = " ".join(notices)
    assert 'The deny rule "Bash(rm -rf /"' in said and "it denies every Bash call" in said
    assert 'The ask rule "Edit(../x)"' in said and "it asks about every Edit call" in said
    assert 'Skipped the allow rule "Read(~bob/x)"' in said


def test_a_deny_rule_with_wildcards_inside_covers_every_command_of_its_leading_words(places: dict[str, Path]) -> None:
    write(places["user"], {"allow": ["Bash"], "deny": ["Bash(curl * -d *)", "Bash(git push -f*)"]})
    gate, notices = gate_for(places)
    cwd = places["project_dir"]

    for command in (
        "curl -X POST -d x https://e.test",
        "curl https://e.test",
        "git push -f",
        "git push --force-with-lease",
    ):
        assert not check(gate, "Bash", {"command": command}, cwd).allowed, command
    for command in ("git status", "wget https://e.test"):
        assert check(gate, "Bash", {"command": command}, cwd).allowed, command
    said = " ".join(notices)
    assert 'it denies every Bash command starting "curl"' in said
    assert 'it denies every Bash command starting "git push"' in said


def test_a_rule_for_a_tool_agentcli_lacks_allows_nothing_and_denies_everything_of_it(places: dict[str, Path]) -> None:
    write(places["user"], {"allow": ["WebSearch(cats)"], "deny": ["PowerShell(Remove-Item *)"]})
    gate, notices = gate_for(places)
    cwd = places["project_dir"]
    TOOLS.update(WebSearch=StandIn("WebSearch", does_anything), PowerShell=StandIn("PowerShell", does_anything))
    try:
        assert outcome(gate, "WebSearch", {"query": "cats"}, cwd) == "ask"
        assert outcome(gate, "PowerShell", {"command": "Get-Date"}, cwd) == "deny"
    finally:
        del TOOLS["WebSearch"], TOOLS["PowerShell"]
    assert notices == []


def test_permissions_keys_agentcli_does_not_know_are_named_once_and_the_rest_applies(places: dict[str, Path]) -> None:
    write(places["user"], {"allow": ["Bash(ls:*)"], "disableAutoMode": "disable", "denyInsteadOfPrompting": True})
    gate, notices = gate_for(places)

    assert check(gate, "Bash", {"command": "ls -la"}, places["project_dir"]).allowed
    [notice] = [n for n in notices if "permissions.disableAutoMode" in n]
    assert "permissions.denyInsteadOfPrompting" in notice and str(places["user"]) in notice


def test_dont_ask_denies_what_would_be_asked_and_runs_what_rules_allow(
    run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path
) -> None:
    write(home / ".claude" / "settings.json", {"allow": ["Bash(touch allowed.txt)"]})
    model.script(
        reply(
            tool_use("Bash", {"command": "touch allowed.txt"}, id="toolu_1"),
            tool_use("Bash", {"command": "touch other.txt"}, id="toolu_2"),
        ),
        reply(text("done")),
    )

    done = run_agent("go", permission_mode="dontAsk")

    assert done.returncode == 0, done.stderr
    assert (project / "allowed.txt").exists() and not (project / "other.txt").exists()


def test_dont_ask_never_asks_in_the_repl_either(places: dict[str, Path]) -> None:
    write(places["local"], {"defaultMode": "dontAsk"})
    gate, _ = gate_for(places)
    recorder = Recorder()
    gate.prompter = recorder

    decision = check(gate, "Bash", {"command": "touch x"}, places["project_dir"])

    assert not decision.allowed and "dontAsk mode" in decision.message
    assert recorder.requests == []


def test_manual_is_default_and_auto_is_ignored_with_a_notice(places: dict[str, Path]) -> None:
    write(places["user"], {"defaultMode": "acceptEdits"})
    write(places["project"], {"defaultMode": "auto"})
    write(places["local"], {"defaultMode": "manual"})
    gate, notices = gate_for(places)
    assert gate.mode == "default"

    places["local"].unlink()
    gate, notices = gate_for(places)
    assert gate.mode == "acceptEdits"
    assert any(f"Ignored defaultMode auto in {places['project']}" in n for n in notices)


def test_disable_bypass_permissions_mode_turns_the_mode_off_from_any_file(places: dict[str, Path]) -> None:
    write(places["user"], {"defaultMode": "bypassPermissions"})
    write(places["project"], {"disableBypassPermissionsMode": "disable"})

    gate, notices = gate_for(places)

    assert gate.mode == "default"
    assert any("disableBypassPermissionsMode in" in n and str(places["project"]) in n for n in notices)
    with pytest.raises(UsageError, match="--permission-mode bypassPermissions is turned off by"):
        gate_for(places, "bypassPermissions")


def test_additional_directories_are_worked_in_as_the_project_is(places: dict[str, Path], tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    (lib / ".git").mkdir(parents=True)
    (lib / "util.py").write_text("x = 1\n")
    other = tmp_path / "other"
    other.mkdir()
    write(places["local"], {"additionalDirectories": [str(lib)], "defaultMode": "acceptEdits"})
    gate, _ = gate_for(places)
    cwd = places["project_dir"]

    assert outcome(gate, "Read", {"file_path": str(lib / "util.py")}, cwd) == "allow"
    edit = {"file_path": str(lib / "util.py"), "old_string": "1", "new_string": "2"}
    assert outcome(gate, "Edit", edit, cwd) == "allow"
    assert outcome(gate, "Write", {"file_path": str(lib / ".git" / "config"), "content": "x"}, cwd) == "ask"
    assert outcome(gate, "Read", {"file_path": str(other / "a.txt")}, cwd) == "ask"


def test_a_checked_in_file_cannot_add_working_folders(places: dict[str, Path], tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    write(places["project"], {"additionalDirectories": [str(secrets)]})
    gate, notices = gate_for(places)

    assert outcome(gate, "Read", {"file_path": str(secrets / "key")}, places["project_dir"]) == "ask"
    assert any(f"Ignored permissions.additionalDirectories in {places['project']}" in n for n in notices)
