"""Slash commands as a user meets them: typos, unknown names, /permissions with several rules,
/memory, and a REPL-only command given to `agentcli run`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import AGENTCLI, RunCli, StartRepl, cli_env
from tests.context.helpers import write
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.terminal import Terminal

LOCAL = ".agentcli/settings.local.json"


def test_a_mistyped_built_in_is_suggested_and_nothing_is_sent(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    repl = start_repl()

    repl.submit("/modle")

    repl.wait_for("Unknown command /modle. Did you mean /model?")
    assert fake_api.requests == []


def test_an_unknown_command_lists_the_built_ins_and_the_skills(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    write(project / ".commands" / "commit.md", "Commit the staged changes")
    repl = start_repl()

    repl.submit("/xyz")

    screen = " ".join(repl.wait_for("/commit.").split())  # the line is wider than the screen
    assert "Skills: /commit." in screen
    assert "Unknown command /xyz. Built-in commands: /help, /clear," in screen
    assert "/permissions" in screen and "/memory" in screen
    assert fake_api.requests == []


def test_permissions_allow_takes_several_rules_and_lists_each_with_its_file(
    start_repl: StartRepl, project: Path, home: Path
) -> None:
    write(home / ".agentcli" / "settings.json", '{"permissions": {"deny": ["Bash(rm:*)"]}}')
    repl = start_repl("--allowed-tools", "Glob")

    repl.submit("/permissions allow Read,Bash(git status:*) Edit(src/**)")
    repl.wait_for(f"Added allow rules Read, Bash(git status:*), Edit(src/**) to {LOCAL}.")
    saved = json.loads((project / LOCAL).read_text())
    assert saved["permissions"]["allow"] == ["Read", "Bash(git status:*)", "Edit(src/**)"]
    repl.submit("/permissions")

    screen = repl.wait_for("Bash(rm:*)")
    rows = {line.split()[0]: line for line in screen.splitlines() if line.split()[:1]}
    for rule in ("Read", "Bash(git", "Edit(src/**)"):
        assert f"local settings {LOCAL}" in rows[rule], screen
    assert "--allowed-tools" in rows["Glob"]
    assert f"user settings {home / '.agentcli' / 'settings.json'}" in rows["Bash(rm:*)"]


def test_hooks_permissions_agents_and_mcp_name_claude_codes_files(
    start_repl: StartRepl, project: Path, home: Path
) -> None:
    user = home / ".claude" / "settings.json"
    hook = {"type": "command", "command": "true", "if": "Bash(git *)", "async": True}
    broken = {"matcher": "Edit(", "hooks": [{"type": "command", "command": "guard"}]}
    write(user, json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}, broken]}}))
    write(project / ".claude" / "settings.local.json", '{"permissions": {"deny": ["Agent(Explore)"]}}')
    write(project / ".claude" / "agents" / "poet.md", "---\nname: poet\ndescription: Writes poems.\n---\nYou write.\n")
    write(home / ".agentcli" / "mcp.json", json.dumps({"mcpServers": {"gone": {"command": "/nonexistent/server"}}}))
    repl = start_repl()

    repl.submit("/hooks")
    row = next(line for line in repl.wait_for("(async)").splitlines() if line.lstrip().startswith("PreToolUse"))
    assert "Bash if Bash(git *)" in row and "true (async)" in row and str(user) in row
    screen = repl.wait_for("(bad: asks)")
    guard = next(line for line in screen.splitlines() if "(bad: asks)" in line)
    assert guard.lstrip().startswith("PreToolUse  *") and str(user)[:40] in guard, screen
    repl.submit("/permissions")
    row = next(line for line in repl.wait_for("Agent(Explore)").splitlines() if "Agent(Explore)" in line)
    assert "local settings .claude/settings.local.json" in row
    repl.submit("/agents")
    row = next(line for line in repl.wait_for("Writes poems.").splitlines() if line.lstrip().startswith("poet"))
    assert ".claude/agents/poet.md" in row
    repl.submit("/mcp")
    row = next(line for line in repl.wait_for("server  scope").splitlines() if line.lstrip().startswith("gone"))
    assert str(home / ".agentcli" / "mcp.json") in row


def test_a_bad_rule_among_several_adds_none_of_them(start_repl: StartRepl, project: Path) -> None:
    repl = start_repl()

    repl.submit("/permissions allow Read,Bash(git status:*) bash(ls)")

    repl.wait_for("Nothing was added.")
    assert "case-sensitive" in repl.text()
    assert not (project / LOCAL).exists()


def test_rules_from_dont_ask_again_are_listed_with_the_file_they_are_saved_in(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "calc.py").write_text("x = 1\n")
    fake_api.script(
        reply(tool_use("Bash", {"command": "git status --short"})),
        reply(tool_use("Read", {"file_path": "calc.py"})),
        reply(tool_use("Edit", {"file_path": "calc.py", "old_string": "x = 1", "new_string": "x = 2"})),
        reply(text("Both done.")),
    )
    repl = start_repl()

    repl.submit("go")
    repl.wait_for("Do you want to proceed?")
    repl.press("2")  # don't ask again for Bash(git status:*): saved to the local settings
    repl.wait_for("✓ Allowed Bash(git status --short)")
    repl.wait_for("Do you want to proceed?")
    repl.press("2")  # don't ask again for Edit(./calc.py): this session only
    repl.wait_for_prompt("Both done.")
    repl.submit("/permissions")

    screen = repl.wait_for("this session only (not saved)")
    rows = {line.split()[0]: line for line in screen.splitlines() if line.split()[:1]}
    assert f"local settings {LOCAL}" in rows["Bash(git"], screen
    assert "this session only (not saved)" in rows["Edit(./calc.py)"], screen


def test_permissions_remove_says_where_each_rule_stays(start_repl: StartRepl, project: Path) -> None:
    write(project / ".agentcli" / "settings.json", '{"permissions": {"allow": ["Read"]}}')
    write(project / LOCAL, '{"permissions": {"allow": ["Bash(ls)"]}}')
    repl = start_repl()

    repl.submit("/permissions remove Read,Bash(ls) Bash(nope)")

    repl.wait_for("No rule Bash(nope) is in force")
    screen = repl.text()
    assert f"Removed Bash(ls) from {LOCAL}." in screen
    assert "Removed Read for this session; it stays in .agentcli/settings.json" in screen
    assert json.loads((project / LOCAL).read_text())["permissions"]["allow"] == []


def test_memory_says_claude_md_changed_only_when_it_did(
    fake_api: FakeAnthropic, home: Path, project: Path, tmp_path: Path
) -> None:
    (project / "CLAUDE.md").write_text("Use tabs.\n")
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\n[ -e "$(dirname "$1")/edit-now" ] && echo "Run make lint." >> "$1"\nexit 0\n')
    editor.chmod(0o755)
    env = cli_env(home, fake_api.url)
    env.update(TERM="xterm-256color", EDITOR=str(editor))
    repl = Terminal([AGENTCLI], env=env, cwd=project)
    try:
        repl.wait_for("(shift-tab)")
        repl.submit("/memory 1")  # the editor leaves the file as it was
        screen = repl.wait_for("CLAUDE.md unchanged.")
        assert "will be sent" not in screen

        (project / "edit-now").touch()
        repl.submit("/memory 1")
        repl.wait_for("CLAUDE.md changed: it will be sent with your next message.")
        assert (project / "CLAUDE.md").read_text() == "Use tabs.\nRun make lint.\n"
    finally:
        repl.close()


def test_a_repl_only_command_given_to_run_says_where_it_works(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    write(project / ".commands" / "commit.md", "Commit")

    done = run_cli("run", "/cost")

    assert done.returncode == 2
    assert "/cost is a command of the interactive REPL only: start `agentcli` and type /cost there." in done.stderr
    assert "Did you mean" not in done.stderr and "Traceback" not in done.stderr
    assert fake_api.requests == []


def test_help_shows_which_file_answers_to_each_name(start_repl: StartRepl, project: Path, home: Path) -> None:
    write(project / ".claude" / "commands" / "tools" / "lint.md", "Lint from tools/")
    write(project / ".claude" / "commands" / "frontend" / "lint.md", "Lint from frontend/")
    write(project / ".claude" / "commands" / "commit.md", "Commit, the command")
    write(home / ".claude" / "skills" / "commit" / "SKILL.md", "---\ndescription: Commit, the skill\n---\nCommit.")
    write(project / ".claude" / "skills" / "style" / "SKILL.md", "---\nuser-invocable: false\n---\nHouse style.")
    repl = start_repl()

    repl.submit("/help")

    screen = repl.wait_for("only by this name")
    rows = [" ".join(line.split()) for line in screen.splitlines() if line.startswith("/")]
    assert "/lint Lint from frontend/ (project (.claude)) also /frontend:lint" in rows
    assert "/tools:lint (project (.claude)) only by this name: /lint is /frontend:lint" in rows
    assert "/commit Commit, the skill (user (~/.claude) skill)" in rows
    assert any(row.startswith("/commit (project (.claude)) hidden by the user (~/.claude) skill") for row in rows)
    assert not any(row.startswith("/style") for row in rows)
