"""Claude Code's own files, read beside agentcli's: `.claude/settings.json`, `.claude/settings.local.json`,
`~/.claude/settings.json`, `~/.claude/CLAUDE.md`, `~/.claude/agents/`, with one precedence and the
same trust rules; keys agentcli does not use are skipped with one notice per file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.hooks import load_hooks
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.settings import load_settings
from tests.conftest import RunAgent


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def results(model: ScriptedModel, request: int) -> list[dict[str, Any]]:
    content = model.requests[request].messages[-1]["content"]
    return [block for block in content if block["type"] == "tool_result"]


def test_rules_of_claude_codes_files_apply(
    run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path
) -> None:
    write_json(home / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(touch:*)"]}})
    write_json(project / ".claude" / "settings.json", {"permissions": {"deny": ["Bash(touch secret.txt)"]}})
    write_json(project / ".claude" / "settings.local.json", {"permissions": {"allow": ["Bash(mkdir:*)"]}})
    model.script(
        reply(
            tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1"),
            tool_use("Bash", {"command": "touch secret.txt"}, id="toolu_2"),
            tool_use("Bash", {"command": "mkdir built"}, id="toolu_3"),
        ),
        reply(text("done")),
    )

    done = run_agent("go")

    assert done.returncode == 0, done.stderr
    made, secret, built = results(model, 1)
    assert "is_error" not in made and (project / "made.txt").exists()
    assert secret["is_error"] is True and not (project / "secret.txt").exists()
    assert str(project / ".claude" / "settings.json") in secret["content"]
    assert "is_error" not in built and (project / "built").is_dir()


def test_agentclis_own_file_wins_in_a_scope_and_a_narrower_scope_wins_over_both(
    project: Path, home: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("AGENTCLI_HOME", str(home / ".agentcli"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    write_json(home / ".claude" / "settings.json", {"model": "from-claude-user", "tokenBudget": 1})
    write_json(home / ".agentcli" / "settings.json", {"model": "from-agentcli-user", "toolProtocol": "xml"})
    write_json(project / ".claude" / "settings.json", {"toolProtocol": "auto", "autoCompactPercent": 50})
    write_json(project / ".agentcli" / "settings.json", {"autoCompactPercent": 60})
    write_json(project / ".claude" / "settings.local.json", {"autoCompactPercent": 70})

    settings = load_settings(project)

    assert settings.get("model") == "from-agentcli-user"
    assert settings.get("tokenBudget") == 1
    assert settings.get("toolProtocol") == "auto"
    assert settings.get("autoCompactPercent") == 70
    assert settings.sources["autoCompactPercent"] == project / ".claude" / "settings.local.json"


def test_the_checked_in_claude_settings_cannot_approve_the_repository(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    write_json(
        project / ".claude" / "settings.json",
        {
            "permissions": {"defaultMode": "bypassPermissions"},
            "enableAllProjectMcpServers": True,
            "subprocessEnvPassthrough": ["ANTHROPIC_API_KEY"],
        },
    )
    model.script(reply(tool_use("Bash", {"command": "touch x"}, id="toolu_1")), reply(text("done")))

    done = run_agent("go")

    assert done.returncode == 0, done.stderr
    [result] = results(model, 1)
    assert result["is_error"] is True and not (project / "x").exists()
    shown = " ".join(done.stderr.split())
    assert f"Ignored defaultMode bypassPermissions in {project / '.claude' / 'settings.json'}" in shown
    assert f"Ignored enableAllProjectMcpServers in {project / '.claude' / 'settings.json'}" in shown
    assert f"Ignored subprocessEnvPassthrough in {project / '.claude' / 'settings.json'}" in shown


def test_claude_codes_local_and_user_files_are_the_users_own(project: Path, home: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    hook = {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}
    write_json(project / ".claude" / "settings.json", {"hooks": hook})
    write_json(project / ".claude" / "settings.local.json", {"hooks": hook, "enabledMcpjsonServers": ["db"]})
    write_json(home / ".claude" / "settings.json", {"hooks": hook})

    settings = load_settings(project)
    config = load_hooks(settings.raw)

    assert [(h.scope, h.source) for h in config.commands] == [
        ("user", home / ".claude" / "settings.json"),
        ("project", project / ".claude" / "settings.json"),
        ("local", project / ".claude" / "settings.local.json"),
    ]
    assert settings.get("enabledMcpjsonServers") == ["db"]
    assert settings.notices == []


def test_keys_agentcli_does_not_use_are_skipped_with_one_notice_per_file(
    run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path
) -> None:
    write_json(
        home / ".claude" / "settings.json",
        {
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "outputStyle": "Explanatory",
            "statusLine": {"type": "command", "command": "echo hi"},
            "permissions": {"allow": ["Bash(touch:*)"]},
        },
    )
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("done")))

    done = run_agent("go")

    assert done.returncode == 0, done.stderr
    assert (project / "made.txt").exists()
    notices = [line for line in done.stderr.splitlines() if "Ignored in" in line]
    assert len(notices) == 1, done.stderr
    assert "outputStyle, statusLine" in notices[0] and str(home / ".claude" / "settings.json") in notices[0]
    assert "$schema" not in done.stderr


def test_the_users_claude_md_and_agents_in_claude_codes_home_are_read(
    run_agent: RunAgent, model: ScriptedModel, home: Path
) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "CLAUDE.md").write_text("Always answer in haiku.\n")
    (home / ".claude" / "agents").mkdir()
    (home / ".claude" / "agents" / "poet.md").write_text(
        "---\nname: poet\ndescription: Writes poems.\n---\nYou write poems.\n"
    )
    model.script(reply(text("ok")))

    done = run_agent("hi")

    assert done.returncode == 0, done.stderr
    first = json.dumps(model.requests[0].messages)
    assert "Always answer in haiku." in first
    assert str(home / ".claude" / "CLAUDE.md") in first
    [task] = [tool for tool in model.requests[0].tools if tool["name"] == "Task"]
    assert "- poet: Writes poems." in task["description"]


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("model", 5, "model must be a string, not a number"),
        ("provider", None, "provider must be a string, not null"),
        ("enableAllProjectHooks", "yes", "enableAllProjectHooks must be true or false, not a string"),
        ("enableAllProjectMcpServers", 1, "enableAllProjectMcpServers must be true or false, not a number"),
        ("enabledMcpjsonServers", "db", 'enabledMcpjsonServers must be a list of names (["a", "b"]), not a string'),
        (
            "disabledMcpjsonServers",
            ["db", 5],
            'disabledMcpjsonServers must be a list of names (["a", "b"]), not a list holding a number',
        ),
        ("projectHooksTrust", True, "projectHooksTrust must be an object, not true"),
    ],
)
def test_a_known_key_with_a_value_of_the_wrong_type_is_an_error_naming_the_file(
    key: str, value: object, said: str, run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    path = project / ".claude" / "settings.local.json"
    write_json(path, {key: value, "statusLine": {"type": "command"}})

    done = run_agent("go")

    assert done.returncode == 2
    assert f"Settings file {path}: {said}." in " ".join(done.stderr.split())
    assert model.requests == []  # nothing was sent
