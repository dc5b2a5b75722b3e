"""Every expansion form of a skill: $ARGUMENTS, $1..$9, @path, !`cmd`, appended ARGUMENTS."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.contracts import ToolContext
from agentcli.skills.catalog import Skill
from agentcli.skills.expand import expand_skill, split_arguments
from agentcli.skills.frontmatter import SkillFileError
from agentcli.skills.shell import GatedShell
from agentcli.workspace.local import LocalWorkspace
from tests.context.gates import RuleGate, ShellBash
from tests.context.helpers import write


def skill(body: str, allowed: tuple[str, ...] = ()) -> Skill:
    return Skill("t", Path("/skills/t.md"), "project", body, "test", allowed_tools=allowed)


def no_commands(command: str) -> str:
    raise AssertionError(f"no command should run, got {command!r}")


def test_arguments_and_positionals_with_quotes(tmp_path: Path) -> None:
    body = "All: $ARGUMENTS\nFirst: $1; second: $2; ninth: [$9]"
    text = expand_skill(skill(body), '  "fix the bug" src/app.py  ', tmp_path, no_commands)
    assert text == 'All: "fix the bug" src/app.py\nFirst: fix the bug; second: src/app.py; ninth: []'


def test_arguments_are_appended_when_the_body_has_no_placeholder(tmp_path: Path) -> None:
    assert expand_skill(skill("Review.\n"), "HEAD~3", tmp_path, no_commands) == "Review.\n\nARGUMENTS: HEAD~3"
    assert expand_skill(skill("Review.\n"), "", tmp_path, no_commands) == "Review."
    words_left_over = expand_skill(skill("Explain $1"), "a b", tmp_path, no_commands)
    assert words_left_over == "Explain a\n\nARGUMENTS: a b"
    assert expand_skill(skill("Explain $1 and $2"), "a b", tmp_path, no_commands) == "Explain a and b"


def test_unbalanced_quote_falls_back_to_whitespace_words() -> None:
    assert split_arguments("don't stop") == ["don't", "stop"]


def test_file_and_folder_mentions_are_attached(tmp_path: Path) -> None:
    write(tmp_path / "src" / "app.py", "print('hi')\n")
    write(tmp_path / "src" / "pkg" / "m.py", "")
    text = expand_skill(
        skill("Explain @$1 (see @src/).\nOr @src/app.py again, @decorator."), "src/app.py", tmp_path, no_commands
    )
    assert text.startswith("Explain src/app.py (see src/).\nOr src/app.py again, @decorator.")
    assert text.count("<file path=\"src/app.py\">\nprint('hi')\n</file>") == 1
    assert '<folder path="src/">\napp.py\npkg/\n</folder>' in text


def test_mentions_in_code_are_left_alone(tmp_path: Path) -> None:
    body = "Use `@src/x.py` literally.\n```\n@src/y.py $ARGUMENTS\n```\n"
    text = expand_skill(skill(body), "ARG", tmp_path, no_commands)
    assert text == "Use `@src/x.py` literally.\n```\n@src/y.py ARG\n```"


def test_a_missing_file_leaves_a_note_and_a_binary_file_is_an_error(tmp_path: Path) -> None:
    text = expand_skill(skill("Read @nope/x.md, then go on."), "", tmp_path, no_commands)
    assert text == "Read @nope/x.md [agentcli: nope/x.md does not exist, so nothing was attached], then go on."
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2")
    with pytest.raises(SkillFileError, match="binary"):
        expand_skill(skill("@blob.bin"), "", tmp_path, no_commands)


def test_commands_run_with_shell_quoted_arguments(tmp_path: Path) -> None:
    ran: list[str] = []

    def run(command: str) -> str:
        ran.append(command)
        return f"<output of {command}>\n"

    body = "Log: !`git log -n $1 -- $2`\nAll: !`echo $ARGUMENTS`\n```\n!`not run`\n```"
    text = expand_skill(skill(body), "3 'a b; rm -rf x'", tmp_path, run)
    assert ran == ["git log -n 3 -- 'a b; rm -rf x'", "echo 3 'a b; rm -rf x'"]
    assert text.startswith("Log: <output of git log -n 3 -- 'a b; rm -rf x'>\nAll: <output of echo 3")
    assert "!`not run`" in text


def test_empty_expansion_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SkillFileError, match="expands to nothing"):
        expand_skill(skill("\n\n"), "", tmp_path, no_commands)


# ------------------------------------------------------------------ the ! permission check


def test_bang_command_is_checked_by_the_gate_as_bash_with_the_skills_rules(tmp_path: Path) -> None:
    gate = RuleGate()
    shell = GatedShell(gate, ShellBash())
    ctx = ToolContext(LocalWorkspace(tmp_path))
    allowed = skill("Say: !`echo hello`", allowed=("Bash(echo:*)",))

    text = expand_skill(allowed, "", tmp_path, shell.runner(allowed, ctx))

    assert text == "Say: hello"
    assert gate.checks == [("Bash", {"command": "echo hello"}, ["Bash(echo:*)"])]
    assert gate.allow == []  # the skill's rules are gone after the check


def test_bang_command_not_allowed_is_refused_and_not_run(tmp_path: Path) -> None:
    gate = RuleGate(allow=["Bash(echo:*)"])
    shell = GatedShell(gate, ShellBash())
    marker = tmp_path / "ran"
    refused = skill(f"!`touch {marker}`")

    with pytest.raises(SkillFileError) as error:
        expand_skill(refused, "", tmp_path, shell.runner(refused, ToolContext(LocalWorkspace(tmp_path))))

    assert not marker.exists()
    message = str(error.value)
    assert f"/t was not run: its command !`touch {marker}` is not allowed. Bash is not allowed here." in message
    assert "allowed-tools: Bash(touch:*)" in message


def test_bang_command_without_a_bash_tool_is_refused(tmp_path: Path) -> None:
    shell = GatedShell(RuleGate(allow=["Bash"]), None)
    with pytest.raises(SkillFileError, match="Bash is not available"):
        expand_skill(skill("!`ls`"), "", tmp_path, shell.runner(skill("!`ls`"), ToolContext(LocalWorkspace(tmp_path))))


def test_failing_command_output_keeps_its_exit_code(tmp_path: Path) -> None:
    shell = GatedShell(RuleGate(allow=["Bash"]), ShellBash())
    failing = skill("Result: !`echo oops; exit 3`")
    text = expand_skill(failing, "", tmp_path, shell.runner(failing, ToolContext(LocalWorkspace(tmp_path))))
    assert text == "Result: oops\nExit code 3"
