"""The gate through the loop: `agentcli run` in-process with the scripted model (rules, modes, settings)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent


def results(model: ScriptedModel, request: int) -> list[dict[str, Any]]:
    content = model.requests[request].messages[-1]["content"]
    return [block for block in content if block["type"] == "tool_result"]


def test_a_denied_bash_call_is_an_error_result_naming_the_rule(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    model.script(
        reply(text("Creating it."), tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")),
        reply(text("I was not allowed to.")),
    )

    done = run_agent("make a file")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "I was not allowed to.\n"
    [result] = results(model, 1)
    assert result["tool_use_id"] == "toolu_1" and result["is_error"] is True
    assert "`touch made.txt` needs approval, and this run is non-interactive" in result["content"]
    assert '--allowed-tools "Bash(touch:*)"' in result["content"]
    assert "✗ Bash(touch made.txt) — Permission denied: the Bash command `touch made.txt` needs approval" in done.stderr
    assert '--allowed-tools "Bash(touch:*)"' in done.stderr
    assert not (project / "made.txt").exists()


def test_a_prefix_rule_lets_the_command_run_but_not_a_compound(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    model.script(
        reply(
            tool_use("Bash", {"command": "echo hi"}, id="toolu_1"),
            tool_use("Bash", {"command": "echo hi && touch x"}, id="toolu_2"),
            tool_use("Bash", {"command": "echo $(touch y)"}, id="toolu_3"),
            tool_use("Bash", {"command": "echo hi > z"}, id="toolu_4"),
        ),
        reply(text("done")),
    )

    done = run_agent("go", allowed_tools=["Bash(echo:*)"])

    assert done.returncode == 0, done.stderr
    ran, compound, substitution, redirect = results(model, 1)
    assert "is_error" not in ran and ran["content"].startswith("hi")
    for denied in (compound, substitution, redirect):
        assert denied["is_error"] is True and "Permission denied" in denied["content"]
    assert '--allowed-tools "Bash(touch:*)"' in compound["content"]
    assert not (project / "x").exists()
    assert not (project / "y").exists()
    assert not (project / "z").exists()
    assert "● Bash(echo hi)" in done.stderr
    assert "✗ Bash(echo hi && touch x) — Permission denied" in done.stderr


def test_rules_from_settings_files(run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path) -> None:
    (home / ".agentcli" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(touch:*)"]}}))
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.local.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(touch secret.txt)"]}})
    )
    model.script(
        reply(
            tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1"),
            tool_use("Bash", {"command": "touch secret.txt"}, id="toolu_2"),
        ),
        reply(text("done")),
    )

    done = run_agent("go", allowed_tools=["Bash(touch secret.txt)"])

    assert done.returncode == 0, done.stderr
    allowed, denied = results(model, 1)
    assert "is_error" not in allowed and (project / "made.txt").exists()
    assert denied["is_error"] is True and not (project / "secret.txt").exists()
    assert 'deny rule "Bash(touch secret.txt)"' in denied["content"]
    assert str(project / ".agentcli" / "settings.local.json") in denied["content"]


def test_plan_mode_from_settings_refuses_commands(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "plan"}}))
    (project / "notes.txt").write_text("n\n")
    model.script(
        reply(
            tool_use("Read", {"file_path": "notes.txt"}, id="toolu_1"),
            tool_use("Bash", {"command": "touch x"}, id="toolu_2"),
        ),
        reply(text("planned")),
    )

    done = run_agent("go", allowed_tools=["Bash"])

    assert done.returncode == 0, done.stderr
    read, bash = results(model, 1)
    assert "is_error" not in read
    assert bash["is_error"] is True and "plan mode" in bash["content"]
    assert not (project / "x").exists()


def test_reading_outside_the_project_needs_an_absolute_rule(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    outside = project.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    (project / "link").symlink_to(outside)
    calls = (
        tool_use("Read", {"file_path": "../outside/secret.txt"}, id="toolu_1"),
        tool_use("Read", {"file_path": "link/secret.txt"}, id="toolu_2"),
    )
    model.script(reply(*calls), reply(text("no")), reply(*calls), reply(text("yes")))

    done = run_agent("read it", permission_mode="acceptEdits")

    assert done.returncode == 0, done.stderr
    for result in results(model, 1):
        assert result["is_error"] is True and "top secret" not in result["content"]
        assert "(outside the project)" in result["content"]
        assert f'--allowed-tools "Read(/{outside.resolve()}/**)"' in result["content"]

    done = run_agent("read it", allowed_tools=[f"Read(/{outside.resolve()}/**)"])

    assert done.returncode == 0, done.stderr
    for result in results(model, 3):
        assert "is_error" not in result and "top secret" in result["content"]


def test_malformed_rules_in_a_file_fail_closed_and_in_a_flag_are_a_usage_error(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    (project / ".agentcli").mkdir()
    settings = project / ".agentcli" / "settings.json"
    rules = {"allow": ["Read", "Bash(git diff:*", "Bash(touch:*)"], "deny": ["Bash(rm -rf /"]}
    settings.write_text(json.dumps({"permissions": rules}))
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("done")))

    done = run_agent("hi")

    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stderr.split())
    assert f'Skipped the allow rule "Bash(git diff:*" in {settings} (permissions.allow[1])' in shown
    assert f'The deny rule "Bash(rm -rf /" in {settings} (permissions.deny[0]) cannot be read' in shown
    assert "it denies every Bash call" in shown
    [result] = results(model, 1)
    assert result["is_error"] is True and not (project / "made.txt").exists()  # the allow rule is outdone

    settings.unlink()
    done = run_agent("hi", disallowed_tools=["Edit(../x)"])

    assert done.returncode == 2
    assert 'Invalid permission rule "Edit(../x)" in --disallowed-tools' in done.stderr


def test_an_allow_rule_of_the_wrong_kind_is_skipped_and_a_deny_rule_of_the_wrong_kind_stops(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    (project / ".agentcli").mkdir()
    settings = project / ".agentcli" / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": [{"tool": "Bash"}, "Bash(touch:*)"]}}))
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("done")))

    done = run_agent("hi")

    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stderr.split())
    assert f"Skipped the allow rule {{'tool': 'Bash'}} in {settings} (permissions.allow[0])" in shown
    assert (project / "made.txt").exists()  # the file's other rules apply

    settings.write_text(json.dumps({"permissions": {"allow": "Bash", "deny": [{"tool": "Bash"}]}}))
    done = run_agent("hi")

    assert done.returncode == 2  # a deny rule agentcli cannot read: nothing runs rather than it be lost
    assert f"in {settings} (permissions.deny[0])" in " ".join(done.stderr.split())


def test_accept_edits_writes_inside_the_project_only(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    outside = project.parent / "outside.txt"
    calls = (
        tool_use("Write", {"file_path": "inside.txt", "content": "in\n"}, id="toolu_1"),
        tool_use("Write", {"file_path": "../outside.txt", "content": "out\n"}, id="toolu_2"),
    )
    model.script(reply(*calls), reply(text("done")), reply(*calls), reply(text("done")))

    done = run_agent("write", permission_mode="default")

    assert done.returncode == 0, done.stderr
    inside, beyond = results(model, 1)
    assert inside["is_error"] is True and "--permission-mode acceptEdits" in inside["content"]
    assert beyond["is_error"] is True
    assert not (project / "inside.txt").exists() and not outside.exists()

    done = run_agent("write", permission_mode="acceptEdits")

    assert done.returncode == 0, done.stderr
    inside, beyond = results(model, 3)
    assert "is_error" not in inside and (project / "inside.txt").read_text() == "in\n"
    assert beyond["is_error"] is True and "outside the project" in beyond["content"]
    assert f'--allowed-tools "Edit(/{outside.resolve()})"' in beyond["content"]
    assert not outside.exists()


def test_a_repository_cannot_switch_every_question_off(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    (project / ".agentcli").mkdir()
    for name in ("settings.json", "settings.local.json"):
        (project / ".agentcli" / name).write_text(json.dumps({"permissions": {"defaultMode": "bypassPermissions"}}))
    model.script(reply(tool_use("Bash", {"command": "touch pwned"}, id="toolu_1")), reply(text("done")))

    done = run_agent("go")

    assert done.returncode == 0, done.stderr
    [result] = results(model, 1)
    assert result["is_error"] is True and not (project / "pwned").exists()
    assert done.stderr.count("Ignored defaultMode bypassPermissions") == 2


def test_bypass_mode_from_the_user_settings_still_counts(
    run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path
) -> None:
    (home / ".agentcli" / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "bypassPermissions"}}))
    model.script(reply(tool_use("Bash", {"command": "touch made"}, id="toolu_1")), reply(text("done")))

    done = run_agent("go")

    assert done.returncode == 0, done.stderr
    assert (project / "made").exists()
