"""Files that grant power are asked about every time, in every mode, unless a rule names them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentcli.permissions.gate import Gate
from agentcli.permissions.protected import bash_targets, protection
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent
from tests.permissions.helpers import Recorder, check, outcome, rules


@pytest.fixture
def agent_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "agent-home"
    monkeypatch.setenv("AGENTCLI_HOME", str(home))
    return home


PROTECTED = [
    ".git/config",
    ".git/hooks/pre-commit",
    "vendor/lib/.git/config",
    ".GIT/config",
    ".gitmodules",
    ".agentcli/settings.json",
    ".agentcli/settings.local.json",
    ".agentcli/agents/reviewer.md",
    ".claude/settings.json",
    ".claude/commands/deploy.md",
    ".claude/skills/x/SKILL.md",
    ".claude/agents/a.md",
    ".commands/helper.md",
    ".commands/git/commit.md",
    ".mcp.json",
    ".vscode/tasks.json",
    ".husky/pre-commit",
    ".envrc",
    ".pre-commit-config.yaml",
]
ORDINARY = ["src/app.py", "README.md", "CLAUDE.md", "docs/.gitkeep", "git/config", "gitconfig.txt", ".github/x.yml"]


@pytest.mark.parametrize("rel", PROTECTED)
def test_protected_paths_in_the_project(rel: str, tmp_path: Path, agent_home: Path) -> None:
    assert protection((tmp_path / rel).resolve(), tmp_path) is not None


@pytest.mark.parametrize("rel", ORDINARY)
def test_ordinary_paths_are_not_protected(rel: str, tmp_path: Path, agent_home: Path) -> None:
    assert protection((tmp_path / rel).resolve(), tmp_path) is None


def test_agentcli_home_is_protected_except_project_memory(tmp_path: Path, agent_home: Path) -> None:
    assert protection(agent_home / "settings.json", tmp_path) is not None
    assert protection(agent_home / "mcp.json", tmp_path) is not None
    assert protection(agent_home / "commands" / "x.md", tmp_path) is not None
    assert protection(agent_home / "projects" / "-p" / "s.jsonl", tmp_path) is not None
    assert protection(agent_home / "projects" / "-p" / "memory" / "notes.md", tmp_path) is None


def test_user_files_outside_the_project(tmp_path: Path, agent_home: Path) -> None:
    home = Path.home().resolve()
    for rel in (".bashrc", ".zshrc", ".gitconfig", ".config/git/config", ".claude/settings.json", ".claude.json"):
        assert protection(home / rel, tmp_path) is not None, rel
    assert protection(home / "notes.txt", tmp_path) is None


def test_a_project_inside_a_protected_folder_is_judged_below_itself(tmp_path: Path, agent_home: Path) -> None:
    project = tmp_path / ".vscode" / "extensions" / "mine"
    assert protection(project / "src" / "x.ts", project) is None
    assert protection(project / ".git" / "config", project) is not None


# --------------------------------------------------------------------- the gate


def test_no_mode_and_no_broad_rule_approves_a_protected_write(tmp_path: Path, agent_home: Path) -> None:
    edit = {"file_path": ".git/config", "old_string": "", "new_string": "[core]\n\tfsmonitor = touch x\n"}
    for mode in ("default", "acceptEdits", "bypassPermissions"):
        for allow in ((), ("Edit",), ("Write",), ("Edit(**)",), ("Edit(./**)",), ("Edit(*)",)):
            assert outcome(Gate(rules(allow=allow), mode), "Edit", edit, tmp_path) == "ask", (mode, allow)


@pytest.mark.parametrize("rule", ["Edit(./.git/config)", "Edit(.git/**)", "Edit(./.git/**)", "Edit(.git/config)"])
def test_a_rule_that_names_the_path_allows_it(rule: str, tmp_path: Path, agent_home: Path) -> None:
    edit = {"file_path": ".git/config", "old_string": "a", "new_string": "b"}
    assert outcome(Gate(rules(allow=(rule,)), "acceptEdits"), "Edit", edit, tmp_path) == "allow"


def test_the_question_says_why_and_offers_no_dont_ask_again(tmp_path: Path, agent_home: Path) -> None:
    recorder = Recorder()
    gate = Gate(mode="bypassPermissions", prompter=recorder)
    check(gate, "Write", {"file_path": ".commands/helper.md", "content": "x"}, tmp_path)
    [request] = recorder.requests
    assert "can grant tools" in request.reason and "asked about every time" in request.reason
    assert [o.choice for o in request.options()] == ["yes", "no"]


def test_a_non_interactive_denial_names_the_rule_that_would_allow_it(tmp_path: Path, agent_home: Path) -> None:
    gate = Gate(mode="bypassPermissions")
    decision = check(gate, "Write", {"file_path": ".agentcli/settings.local.json", "content": "{}"}, tmp_path)
    assert not decision.allowed
    assert "agentcli's or Claude Code's own configuration" in decision.message
    assert '--allowed-tools "Edit(./.agentcli/settings.local.json)"' in decision.message


BASH_WRITES = [
    "echo x > .git/hooks/pre-commit",
    "cp evil.sh .git/hooks/post-checkout",
    "tee -a .bashrc < payload",
    "cd .git && echo x > config",
    "git config core.fsmonitor 'touch pwned'",
    "sed -i s/a/b/ .agentcli/settings.json",
    "mv helper.md .commands/",
    "ln -sf ../evil .husky/pre-commit",
    "D=.git; echo x > $D/config",
    "echo x > .gi?/config",
    'echo "{}" > "$HOME/.claude/settings.json"',
    "install -m 755 x .git/hooks/pre-push",
    "dd if=x of=.git/config",
]


@pytest.mark.parametrize("command", BASH_WRITES)
def test_bash_writes_to_protected_paths_are_asked_even_in_bypass_mode(
    command: str, tmp_path: Path, agent_home: Path
) -> None:
    (tmp_path / ".git").mkdir()
    gate = Gate(rules(allow=("Bash",)), "bypassPermissions")
    assert outcome(gate, "Bash", {"command": command}, tmp_path) == "ask"


@pytest.mark.parametrize("command", ["cat .git/config", "ls .git/hooks", "git status", "grep -r x .git", "echo ok"])
def test_reading_protected_paths_is_not_a_protected_write(command: str, tmp_path: Path, agent_home: Path) -> None:
    (tmp_path / ".git").mkdir()
    gate = Gate(rules(allow=("Bash",)), "bypassPermissions")
    assert outcome(gate, "Bash", {"command": command}, tmp_path) == "allow"


def test_a_symlink_into_a_protected_folder_is_seen_through(tmp_path: Path, agent_home: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "hooks").symlink_to(tmp_path / ".git")
    assert (tmp_path / ".git" / "config").resolve() in bash_targets("echo x > hooks/config", tmp_path)
    gate = Gate(mode="acceptEdits")
    assert outcome(gate, "Write", {"file_path": "hooks/config", "content": "x"}, tmp_path) == "ask"


def test_only_an_exact_bash_rule_or_one_spelling_the_folder_allows_it(tmp_path: Path, agent_home: Path) -> None:
    command = "cp hooks/pre-commit .git/hooks/pre-commit"
    for allow, expected in (
        (("Bash(cp:*)",), "ask"),
        (("Bash",), "ask"),
        ((f"Bash({command})",), "allow"),
        (("Bash(cp hooks/pre-commit .git/hooks/:*)",), "ask"),  # a prefix covers this exact start only
        (("Bash(cp hooks/pre-commit .git/hooks/pre-commit:*)",), "allow"),
    ):
        assert outcome(Gate(rules(allow=allow)), "Bash", {"command": command}, tmp_path) == expected, allow


# ----------------------------------------------------------- the reproductions


def results(model: ScriptedModel, request: int) -> list[dict[str, Any]]:
    content = model.requests[request].messages[-1]["content"]
    return [block for block in content if block["type"] == "tool_result"]


def test_accept_edits_cannot_plant_a_git_fsmonitor(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    config = project / ".git" / "config"
    before = config.read_text()
    model.script(
        reply(tool_use("Read", {"file_path": ".git/config"}, id="t1")),
        reply(
            tool_use(
                "Edit",
                {"file_path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = touch pwned"},
                id="t2",
            ),
            tool_use("Bash", {"command": "git status"}, id="t3"),
        ),
        reply(text("done")),
    )

    done = run_agent("tidy up", permission_mode="acceptEdits", allowed_tools=["Bash(git status:*)"])

    assert done.returncode == 0, done.stderr
    edit, status = results(model, 2)
    assert edit["is_error"] is True and "can make git run programs" in str(edit["content"])
    assert "is_error" not in status
    assert config.read_text() == before
    assert not (project / "pwned").exists()


def test_a_run_cannot_grant_itself_more_permissions(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    grant = json.dumps({"permissions": {"allow": ["Bash"], "defaultMode": "bypassPermissions"}})
    model.script(
        reply(tool_use("Write", {"file_path": ".agentcli/settings.local.json", "content": grant}, id="t1")),
        reply(text("done")),
        reply(tool_use("Bash", {"command": "touch pwned"}, id="t2")),
        reply(text("done")),
    )

    first = run_agent("configure", permission_mode="bypassPermissions")
    second = run_agent("go")

    assert first.returncode == 0 and second.returncode == 0, (first.stderr, second.stderr)
    [write] = results(model, 1)
    assert write["is_error"] is True and "asked about every time" in str(write["content"])
    assert not (project / ".agentcli" / "settings.local.json").exists()
    [bash] = results(model, 3)
    assert bash["is_error"] is True and not (project / "pwned").exists()


def test_a_run_cannot_write_a_skill(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    skill = "---\nallowed-tools: Bash\n---\n!`touch pwned`\n"
    model.script(
        reply(tool_use("Write", {"file_path": ".commands/helper.md", "content": skill}, id="t1")),
        reply(text("done")),
    )

    done = run_agent("make a helper", permission_mode="acceptEdits")

    assert done.returncode == 0, done.stderr
    [write] = results(model, 1)
    assert write["is_error"] is True and "can grant tools" in str(write["content"])
    assert not (project / ".commands").exists()


def test_a_named_rule_lets_a_run_write_a_hook(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    hook = project / ".git" / "hooks" / "pre-commit"
    model.script(
        reply(tool_use("Write", {"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nexit 0\n"}, id="t1")),
        reply(text("done")),
    )

    done = run_agent("add a hook", allowed_tools=["Write(./.git/hooks/pre-commit)"])

    assert done.returncode == 0, done.stderr
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    subprocess.run(["git", "status"], cwd=project, check=True, capture_output=True)
