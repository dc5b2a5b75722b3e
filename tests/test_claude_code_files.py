"""Files shaped like those people write for Claude Code (tests/data/claude_code, one per way real
ones failed) load and behave as Claude Code documents, by the checks bench/corpus_check.py runs
over the public corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.corpus_check import Outcome, check_agent, check_command, check_skill

FIXTURES = Path(__file__).parent / "data" / "claude_code"
TOOLS = {"Read", "Write", "Edit", "Bash", "Grep", "Glob", "TodoWrite"}


def entries() -> list[tuple[str, Path, str]]:
    """(kind, file, its path below the kind's folder, or a skill's folder name)."""
    found = [("command", p, p.relative_to(FIXTURES / "commands").as_posix()) for p in FIXTURES.glob("commands/**/*.md")]
    found += [("agent", p, p.relative_to(FIXTURES / "agents").as_posix()) for p in FIXTURES.glob("agents/**/*.md")]
    found += [("skill", p, p.parent.name) for p in FIXTURES.glob("skills/*/SKILL.md")]
    return sorted(found)


def check(kind: str, path: Path, relative: str, scratch: Path) -> Outcome:
    entry = {"kind": kind, "source": "fixtures", "path": str(path.relative_to(FIXTURES)), "relative": relative}
    if kind == "command":
        return check_command(entry, path, scratch)
    if kind == "agent":
        return check_agent(entry, path, scratch, TOOLS)
    return check_skill(entry, path, scratch)


@pytest.mark.parametrize(
    ("kind", "path", "relative"), entries(), ids=lambda value: str(value).split("claude_code/")[-1]
)
def test_each_file_loads_and_behaves_as_claude_code_documents(
    kind: str, path: Path, relative: str, tmp_path: Path
) -> None:
    outcome = check(kind, path, relative, tmp_path)

    assert outcome.counted and outcome.loads and outcome.problems == []
