""" "Don't ask again" rules: the narrowest useful one, and it must really cover the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.permissions.bash_rules import covers
from agentcli.permissions.gate import Gate
from agentcli.permissions.suggest import bash_rules_for
from tests.permissions.helpers import Recorder, check, outcome, rules


def suggested(command: str, allow: tuple[str, ...] = ()) -> tuple[str, ...]:
    gate = Gate(rules(allow=allow))
    patterns = [r.bash for r in gate.rules.of("allow") if r.bash is not None]
    return bash_rules_for(command, covers(command, patterns))


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git diff HEAD~1", "Bash(git diff:*)"),
        ("git status", "Bash(git status:*)"),
        ("npm run build -- --watch", "Bash(npm run build:*)"),
        ("uv run pytest -q", "Bash(uv run pytest:*)"),
        ("gh pr list --limit 5", "Bash(gh pr list:*)"),
        ("python -m pytest -q tests/", "Bash(python -m pytest:*)"),
        ("pytest -q tests/", "Bash(pytest:*)"),
        ("ls -la", "Bash(ls:*)"),
        ("ls *", "Bash(ls:*)"),
        ("rm -rf build", "Bash(rm -rf build)"),
        ("python script.py", "Bash(python script.py)"),
        ("sudo apt install x", "Bash(sudo apt install x)"),
        ("git -C sub status", "Bash(git -C sub status)"),
        ("echo $(date)", "Bash(echo $(date))"),
        ("FOO=1 make", "Bash(FOO=1 make)"),
        ("git commit -m 'fix the bug'", "Bash(git commit:*)"),
    ],
)
def test_narrowest_useful_rule(command: str, rule: str, tmp_path: Path) -> None:
    assert suggested(command) == (rule,)
    # The suggestion really lets exactly this command through.
    assert outcome(Gate(rules(allow=(rule,))), "Bash", {"command": command}, tmp_path) == "allow"


def test_only_the_uncovered_parts_get_rules() -> None:
    assert suggested("echo hi && touch x && rm y", allow=("Bash(echo:*)",)) == ("Bash(touch:*)", "Bash(rm y)")


@pytest.mark.parametrize("command", ["echo a\necho $(date)", "ls * foo $(x)", "rm x *"])
def test_no_rule_when_none_can_be_written_exactly(command: str) -> None:
    assert suggested(command) == ()


def test_a_glob_ending_command_never_becomes_a_prefix_rule(tmp_path: Path) -> None:
    # `Bash(rm -f *)` would read back as the prefix rule rm -f:*; it must not be offered.
    assert suggested("rm -f *") == ()
    assert suggested("rm -f *.o") == ("Bash(rm -f *.o)",)
    assert outcome(Gate(rules(allow=("Bash(rm -f *.o)",))), "Bash", {"command": "rm -f *.o x"}, tmp_path) == "ask"


def test_path_suggestions(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    recorder = Recorder()
    gate = Gate(prompter=recorder)
    check(gate, "Edit", {"file_path": "src/pkg/a.py", "old_string": "", "new_string": "x"}, project)
    check(gate, "Write", {"file_path": "README.md", "content": ""}, project)
    check(gate, "Write", {"file_path": "../elsewhere/[x].txt", "content": ""}, project)
    check(gate, "Read", {"file_path": "../elsewhere/notes.txt"}, project)
    check(gate, "mcp__srv__do", {}, project)
    elsewhere = (tmp_path / "elsewhere").resolve()
    assert [(r.suggestion.rules, r.suggestion.scope) for r in recorder.requests if r.suggestion] == [
        (("Edit(./src/pkg/**)",), "session"),
        (("Edit(./README.md)",), "session"),
        ((f"Edit(/{elsewhere}/\\[x\\].txt)",), "session"),
        ((f"Read(/{elsewhere}/**)",), "session"),
        (("mcp__srv__do",), "local"),
    ]
