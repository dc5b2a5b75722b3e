"""Finding and parsing skill files; the skills list the model sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.skills.frontmatter import SkillFileError
from agentcli.skills.listing import render_skill_list
from agentcli.skills.loader import load_skills
from tests.context.helpers import write


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "agentcli-home"


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def test_sources_names_and_shadowing(cwd: Path, home: Path) -> None:
    write(cwd / ".commands" / "commit.md", "Project commit")
    write(cwd / ".commands" / "git" / "push.md", "Push it")
    write(cwd / ".claude" / "commands" / "legacy.md", "From Claude Code")
    write(cwd / ".claude" / "commands" / "commit.md", "Claude commit")
    write(home / "commands" / "commit.md", "User commit")
    write(home / "commands" / "mine.md", "Only mine")
    write(cwd / ".commands" / ".drafts" / "wip.md", "hidden")
    write(cwd / ".commands" / "notes.txt", "not markdown")

    catalog = load_skills(cwd, home)

    assert catalog.names() == ["commit", "git:push", "legacy", "mine", "push"]  # `push`: git/push.md's short name
    commit = catalog.skills["commit"]
    assert (commit.description, commit.source) == ("Project commit", "project")
    assert catalog.skills["legacy"].source == "project (.claude)"
    assert catalog.skills["mine"].source == "user"
    hidden = {(h.path, w.path) for h, w in catalog.shadowed}
    assert hidden == {
        (cwd / ".claude" / "commands" / "commit.md", commit.path),
        (home / "commands" / "commit.md", commit.path),
    }


def test_frontmatter_fields(cwd: Path, home: Path) -> None:
    write(
        cwd / ".commands" / "fix.md",
        "---\n"
        "description: Fix an issue\n"
        "argument-hint: [issue-number]\n"
        "allowed-tools: Bash(git diff:*), Read, Bash(gh issue view:*)\n"
        "model: claude-haiku-4-5\n"
        "disable-model-invocation: true\n"
        "---\n"
        "Fix issue $1.\n",
    )
    write(
        cwd / ".commands" / "list.md", "---\nallowed-tools:\n  - Read\n  - Bash(ls:*)\n---\n\n## Heading line\nbody\n"
    )

    catalog = load_skills(cwd, home)

    fix = catalog.skills["fix"]
    assert fix.description == "Fix an issue"
    assert fix.argument_hint == "[issue-number]"
    assert fix.allowed_tools == ("Bash(git diff:*)", "Read", "Bash(gh issue view:*)")
    assert fix.model == "claude-haiku-4-5"
    assert fix.disable_model_invocation is True
    assert fix.body == "Fix issue $1.\n"
    listed = catalog.skills["list"]
    assert listed.allowed_tools == ("Read", "Bash(ls:*)")
    assert listed.description == "Heading line"  # default: the first non-empty line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\ndescription: x\nbody without end", "the opening `---` line is never closed"),
        ("---\ndisable-model-invocation: maybe\n---\nbody", "disable-model-invocation must be true or false"),
        ("---\nallowed-tools: {a: 1}\n---\nbody", "allowed-tools must be a string or a list"),
    ],
)
def test_malformed_frontmatter_names_the_file(cwd: Path, home: Path, text: str, expected: str) -> None:
    path = write(cwd / ".commands" / "bad.md", text)
    write(cwd / ".commands" / "good.md", "fine")

    catalog = load_skills(cwd, home)

    assert "good" in catalog.skills and "bad" not in catalog.skills
    with pytest.raises(SkillFileError) as error:
        catalog.require("bad")
    assert expected.format(path=path) in str(error.value)
    assert str(path) in str(error.value)


def test_unknown_name_lists_close_matches(cwd: Path, home: Path) -> None:
    for name in ("commit", "review", "compact-notes"):
        write(cwd / ".commands" / f"{name}.md", name)
    catalog = load_skills(cwd, home)
    with pytest.raises(SkillFileError, match=r"Unknown command /comit\. Did you mean /commit\?"):
        catalog.require("comit")
    with pytest.raises(SkillFileError, match=r"Available: /commit, /compact-notes, /review\."):
        catalog.require("zzz")


def test_skill_list_has_hints_leaves_out_user_only_skills_and_keeps_to_budget(cwd: Path, home: Path) -> None:
    write(cwd / ".commands" / "review.md", "---\nargument-hint: <ref>\n---\nReview the changes")
    write(cwd / ".commands" / "secret.md", "---\ndisable-model-invocation: true\n---\nUser only")
    for n in range(30):
        write(cwd / ".commands" / f"bulk{n:02}.md", f"Bulk skill number {n} " + "x" * 100)

    catalog = load_skills(cwd, home)
    text = render_skill_list(catalog, budget=600)

    assert "- /review <ref>: Review the changes" in text
    assert "secret" not in text
    listed = [line for line in text.splitlines() if line.startswith("- /")]
    assert sum(len(line) + 1 for line in listed) <= 600
    left_out = 31 - len(listed)
    assert f"({left_out} more not described, to keep this list short: /bulk" in text
    assert render_skill_list(load_skills(cwd / "nothing", home)) == ""


def test_project_skills_are_found_from_a_subfolder_up_to_the_repository_top(tmp_path: Path, home: Path) -> None:
    outside = tmp_path / "outer"
    repo = outside / "repo"
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    (repo / ".git").mkdir()
    write(outside / ".commands" / "outside.md", "beyond the repository")
    write(repo / ".commands" / "top.md", "Top")
    write(repo / ".commands" / "both.md", "From the top")
    write(sub / ".commands" / "both.md", "From the subfolder")

    catalog = load_skills(sub, home)

    assert catalog.names() == ["both", "top"]
    assert catalog.skills["both"].description == "From the subfolder"
    assert load_skills(outside, home).names() == ["outside"]  # not a repository: only cwd
