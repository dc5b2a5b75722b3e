"""The gate end to end: `agentcli run` as a subprocess against the fake Anthropic server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import RunCli
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use


def results(api: FakeAnthropic, request: int) -> list[dict[str, Any]]:
    content = api.requests[request].body["messages"][-1]["content"]
    return [block for block in content if block["type"] == "tool_result"]


def test_a_denied_bash_call_is_an_error_result_naming_the_rule(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    fake_api.script(
        reply(text("Creating it."), tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")),
        reply(text("I was not allowed to.")),
    )

    done = run_cli("run", "make a file")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "I was not allowed to.\n"
    [result] = results(fake_api, 1)
    assert result["tool_use_id"] == "toolu_1" and result["is_error"] is True
    assert "`touch made.txt` needs approval, and this run is non-interactive" in result["content"]
    assert '--allowed-tools "Bash(touch:*)"' in result["content"]
    assert "✗ Bash(touch made.txt) — Permission denied: the Bash command `touch made.txt` needs approval" in done.stderr
    assert '--allowed-tools "Bash(touch:*)"' in done.stderr
    assert not (project / "made.txt").exists()


def test_a_prefix_rule_lets_the_command_run_but_not_a_compound(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    fake_api.script(
        reply(
            tool_use("Bash", {"command": "echo hi"}, id="toolu_1"),
            tool_use("Bash", {"command": "echo hi && touch x"}, id="toolu_2"),
            tool_use("Bash", {"command": "echo $(touch y)"}, id="toolu_3"),
            tool_use("Bash", {"command": "echo hi > z"}, id="toolu_4"),
        ),
        reply(text("done")),
    )

    done = run_cli("run", "go", "--allowed-tools", "Bash(echo:*)")

    assert done.returncode == 0, done.stderr
    ran, compound, substitution, redirect = results(fake_api, 1)
    assert "is_error" not in ran and ran["content"].startswith("hi")
    for denied in (compound, substitution, redirect):
        assert denied["is_error"] is True and "Permission denied" in denied["content"]
    assert '--allowed-tools "Bash(touch:*)"' in compound["content"]
    assert not (project / "x").exists()
    assert not (project / "y").exists()
    assert not (project / "z").exists()
    assert "● Bash(echo hi)" in done.stderr
    assert "✗ Bash(echo hi && touch x) — Permission denied" in done.stderr


def test_rules_from_settings_files(run_cli: RunCli, fake_api: FakeAnthropic, project: Path, home: Path) -> None:
    (home / ".agentcli" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(touch:*)"]}}))
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.local.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(touch secret.txt)"]}})
    )
    fake_api.script(
        reply(
            tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1"),
            tool_use("Bash", {"command": "touch secret.txt"}, id="toolu_2"),
        ),
        reply(text("done")),
    )

    done = run_cli("run", "go", "--allowed-tools", "Bash(touch secret.txt)")

    assert done.returncode == 0, done.stderr
    allowed, denied = results(fake_api, 1)
    assert "is_error" not in allowed and (project / "made.txt").exists()
    assert denied["is_error"] is True and not (project / "secret.txt").exists()
    assert 'deny rule "Bash(touch secret.txt)"' in denied["content"]
    assert str(project / ".agentcli" / "settings.local.json") in denied["content"]


def test_plan_mode_from_settings_refuses_commands(run_cli: RunCli, fake_api: FakeAnthropic, project: Path) -> None:
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "plan"}}))
    (project / "notes.txt").write_text("n\n")
    fake_api.script(
        reply(
            tool_use("Read", {"file_path": "notes.txt"}, id="toolu_1"),
            tool_use("Bash", {"command": "touch x"}, id="toolu_2"),
        ),
        reply(text("planned")),
    )

    done = run_cli("run", "go", "--allowed-tools", "Bash")

    assert done.returncode == 0, done.stderr
    read, bash = results(fake_api, 1)
    assert "is_error" not in read
    assert bash["is_error"] is True and "plan mode" in bash["content"]
    assert not (project / "x").exists()


def test_reading_outside_the_project_needs_an_absolute_rule(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    outside = project.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    (project / "link").symlink_to(outside)
    calls = (
        tool_use("Read", {"file_path": "../outside/secret.txt"}, id="toolu_1"),
        tool_use("Read", {"file_path": "link/secret.txt"}, id="toolu_2"),
    )
    fake_api.script(reply(*calls), reply(text("no")), reply(*calls), reply(text("yes")))

    done = run_cli("run", "read it", "--permission-mode", "acceptEdits")

    assert done.returncode == 0, done.stderr
    for result in results(fake_api, 1):
        assert result["is_error"] is True and "top secret" not in result["content"]
        assert "(outside the project)" in result["content"]
        assert f'--allowed-tools "Read(/{outside.resolve()}/**)"' in result["content"]

    done = run_cli("run", "read it", "--allowed-tools", f"Read(/{outside.resolve()}/**)")

    assert done.returncode == 0, done.stderr
    for result in results(fake_api, 3):
        assert "is_error" not in result and "top secret" in result["content"]


def test_malformed_rules_are_a_usage_error_naming_file_and_rule(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / ".agentcli").mkdir()
    settings = project / ".agentcli" / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Read", "Bash(git diff:*"]}}))

    done = run_cli("run", "hi")

    assert done.returncode == 2
    assert f'Invalid permission rule "Bash(git diff:*" in {settings} (permissions.allow[1])' in done.stderr
    assert fake_api.requests == []

    settings.unlink()
    done = run_cli("run", "hi", "--disallowed-tools", "Edit(../x)")

    assert done.returncode == 2
    assert 'Invalid permission rule "Edit(../x)" in --disallowed-tools' in done.stderr


def test_accept_edits_writes_inside_the_project_only(run_cli: RunCli, fake_api: FakeAnthropic, project: Path) -> None:
    outside = project.parent / "outside.txt"
    calls = (
        tool_use("Write", {"file_path": "inside.txt", "content": "in\n"}, id="toolu_1"),
        tool_use("Write", {"file_path": "../outside.txt", "content": "out\n"}, id="toolu_2"),
    )
    fake_api.script(reply(*calls), reply(text("done")), reply(*calls), reply(text("done")))

    done = run_cli("run", "write", "--permission-mode", "default")

    assert done.returncode == 0, done.stderr
    inside, beyond = results(fake_api, 1)
    assert inside["is_error"] is True and "--permission-mode acceptEdits" in inside["content"]
    assert beyond["is_error"] is True
    assert not (project / "inside.txt").exists() and not outside.exists()

    done = run_cli("run", "write", "--permission-mode", "acceptEdits")

    assert done.returncode == 0, done.stderr
    inside, beyond = results(fake_api, 3)
    assert "is_error" not in inside and (project / "inside.txt").read_text() == "in\n"
    assert beyond["is_error"] is True and "outside the project" in beyond["content"]
    assert f'--allowed-tools "Edit(/{outside.resolve()})"' in beyond["content"]
    assert not outside.exists()


def test_a_repository_cannot_switch_every_question_off(run_cli: RunCli, fake_api: FakeAnthropic, project: Path) -> None:
    (project / ".agentcli").mkdir()
    for name in ("settings.json", "settings.local.json"):
        (project / ".agentcli" / name).write_text(json.dumps({"permissions": {"defaultMode": "bypassPermissions"}}))
    fake_api.script(reply(tool_use("Bash", {"command": "touch pwned"}, id="toolu_1")), reply(text("done")))

    done = run_cli("run", "go")

    assert done.returncode == 0, done.stderr
    [result] = results(fake_api, 1)
    assert result["is_error"] is True and not (project / "pwned").exists()
    assert done.stderr.count("Ignored defaultMode bypassPermissions") == 2


def test_bypass_mode_from_the_user_settings_still_counts(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path, home: Path
) -> None:
    (home / ".agentcli" / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "bypassPermissions"}}))
    fake_api.script(reply(tool_use("Bash", {"command": "touch made"}, id="toolu_1")), reply(text("done")))

    done = run_cli("run", "go")

    assert done.returncode == 0, done.stderr
    assert (project / "made").exists()
