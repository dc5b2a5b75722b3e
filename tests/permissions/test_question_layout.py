"""The permission question's text and layout at different widths, and where an answer's rule is kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from agentcli.permissions.gate import Gate
from agentcli.permissions.prompt import Answer, PermissionRequest
from agentcli.permissions.render import PermissionQuestion, preview_limit
from agentcli.permissions.rules import RuleSource
from agentcli.permissions.suggest import Suggestion
from tests.permissions.helpers import Recorder, check

LONG_RULE = Suggestion(("Bash(npm run build:*)",), "local")


def bash_request(command: str = "npm run build -- --watch", reason: str = "why") -> PermissionRequest:
    return PermissionRequest("Bash", {"command": command}, "bash", "Bash command", command, reason, LONG_RULE)


def lines_at(width: int, question: PermissionQuestion, height: int = 50) -> list[str]:
    console = Console(record=True, width=width, height=height, force_terminal=True, color_system=None)
    console.print(question)
    return console.export_text().splitlines()


def test_at_160_columns_each_option_is_one_line_and_the_first_is_highlighted() -> None:
    lines = lines_at(160, PermissionQuestion(bash_request()))

    options = [line for line in lines if line.lstrip("❯ ")[:2] in ("1.", "2.", "3.")]
    assert options[0].startswith("❯ 1. Yes")
    assert options[1].startswith("  2. Yes, and don't ask again for Bash(npm run build:*) in this project (saved to")
    assert options[2].startswith("  3. No")


@pytest.mark.parametrize("width", [60, 44])
def test_a_narrow_terminal_wraps_an_option_under_its_own_text(width: int) -> None:
    lines = lines_at(width, PermissionQuestion(bash_request(), highlighted=1))

    first = next(i for i, line in enumerate(lines) if "2. Yes, and don't ask again" in line)
    last = next(i for i, line in enumerate(lines) if "3. No" in line)
    assert lines[first].startswith("❯ 2. ")
    continued = lines[first + 1 : last]
    assert continued and all(line.startswith("     ") and line[5] != " " for line in continued), lines
    assert all(len(line) <= width for line in lines)


def test_a_question_taller_than_the_terminal_shows_what_fits_and_counts_the_rest() -> None:
    diff = "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,80 @@\n" + "".join(f"+row {n}\n" for n in range(1, 81))
    request = PermissionRequest("Write", {}, "edit", "Write file", "a.txt", "why", None, diff=diff)
    console = Console(width=80, height=30, force_terminal=True)

    limit = preview_limit(request, console, 26)

    assert limit is not None and 0 < limit < 83
    shown = lines_at(80, PermissionQuestion(request, limit=limit))
    assert len(shown) <= 26
    assert f"… {83 - limit} more lines (press d to see them all)" in "\n".join(shown)
    assert preview_limit(request, Console(width=80, height=200, force_terminal=True), 196) is None


def test_a_long_command_is_clipped_the_same_way() -> None:
    command = "\n".join(f"echo {n}" for n in range(100))
    request = bash_request(command)
    limit = preview_limit(request, Console(width=100, height=40, force_terminal=True), 36)

    assert limit is not None
    shown = "\n".join(lines_at(100, PermissionQuestion(request, limit=limit)))
    assert f"echo {limit - 1}" in shown and f"echo {limit}\n" not in shown
    assert f"… {100 - limit} more lines" in shown


def test_why_it_asks_is_said_in_plain_words(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "calc.py").write_text("x = 1\n")
    recorder = Recorder(Answer.no(), Answer.no())
    gate = Gate(prompter=recorder)

    check(gate, "Bash", {"command": "git status --short"}, tmp_path)
    check(gate, "Write", {"file_path": "src/calc.py", "content": "x = 2\n"}, tmp_path)

    bash, edit = (r.reason for r in recorder.requests)
    assert bash == "agentcli asks before running commands; choose 2 to allow `git status …` from now on."
    assert edit.startswith("agentcli asks before changing files")
    assert "choose 2 to allow edits in ./src/ for the rest of this session" in edit


def test_a_rule_kept_by_dont_ask_again_comes_from_the_file_it_is_saved_in(tmp_path: Path) -> None:
    local = tmp_path / ".agentcli" / "settings.local.json"
    gate = Gate(prompter=Recorder(Answer.always(["Bash(git status:*)"])), local_settings=local)

    assert check(gate, "Bash", {"command": "git status"}, tmp_path).allowed
    gate.remember(["Edit(./src/**)"])

    sources = {rule.text: rule.source for rule in gate.rules.rules}
    assert sources["Bash(git status:*)"] == RuleSource("local", str(local))
    assert sources["Edit(./src/**)"].scope == "session"  # not saved anywhere
