"""Where skills and commands come from, and which one answers to a name."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.skills.listing import DESCRIBED_BUDGET, NAMES_BUDGET, render_skill_list
from agentcli.skills.loader import load_skills
from tests.context.helpers import write


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    (path / ".git").mkdir(parents=True)
    return path


def skill(folder: Path, name: str, description: str, extra: str = "") -> Path:
    return write(folder / name / "SKILL.md", f"---\ndescription: {description}\n{extra}---\nBody of {name}.\n")


def test_skill_folders_are_read_from_the_project_up_to_the_repository_top_then_the_users(
    tmp_path: Path, repo: Path
) -> None:
    home, claude = tmp_path / "agentcli-home", tmp_path / "user" / ".claude"
    sub = repo / "packages" / "web"
    skill(repo / ".claude" / "skills", "shared", "From the repository top")
    skill(repo / ".claude" / "skills", "deploy", "Top deploy")
    skill(sub / ".claude" / "skills", "deploy", "Nearest deploy")
    skill(sub / ".agentcli" / "skills", "lint", "agentcli's own")
    skill(sub / ".claude" / "skills", "lint", "Claude Code's")
    skill(home / "skills", "mine", "From AGENTCLI_HOME")
    skill(claude / "skills", "theirs", "From ~/.claude")
    skill(claude / "skills", "shared", "The user's shared")
    skill(tmp_path / ".claude" / "skills", "above", "Above the repository")
    write(repo / ".claude" / "skills" / "not-a-skill" / "README.md", "no SKILL.md here")
    skill(repo / ".claude" / "skills" / ".hidden", "x", "hidden")

    catalog = load_skills(sub, home, claude)

    found = {name: (s.description, s.source, s.kind) for name, s in catalog.skills.items()}
    assert found == {
        "deploy": ("Nearest deploy", "project (.claude)", "skill"),
        "lint": ("agentcli's own", "project", "skill"),
        "shared": ("From the repository top", "project (.claude)", "skill"),
        "mine": ("From AGENTCLI_HOME", "user", "skill"),
        "theirs": ("From ~/.claude", "user (~/.claude)", "skill"),
    }
    assert catalog.skills["deploy"].folder == sub / ".claude" / "skills" / "deploy"
    hidden = sorted((h.description, w.description) for h, w in catalog.shadowed)
    assert hidden == [
        ("Claude Code's", "agentcli's own"),
        ("The user's shared", "From the repository top"),
        ("Top deploy", "Nearest deploy"),
    ]


def test_a_skill_takes_a_commands_name_wherever_each_lives(tmp_path: Path, repo: Path) -> None:
    home, claude = tmp_path / "agentcli-home", tmp_path / "user" / ".claude"
    skill(claude / "skills", "commit", "User skill")
    write(repo / ".commands" / "commit.md", "Project command")
    write(claude / "commands" / "standup.md", "A command from ~/.claude/commands")

    catalog = load_skills(repo, home, claude)

    assert catalog.skills["commit"].kind == "skill" and catalog.skills["commit"].description == "User skill"
    assert [(h.path, w.path) for h, w in catalog.shadowed] == [
        (repo / ".commands" / "commit.md", claude / "skills" / "commit" / "SKILL.md")
    ]
    assert catalog.skills["standup"].source == "user (~/.claude)"


def test_a_command_in_a_subfolder_answers_to_its_file_name_and_collisions_are_settled_in_order(
    tmp_path: Path, repo: Path
) -> None:
    home, claude = tmp_path / "agentcli-home", tmp_path / "user" / ".claude"
    commands = repo / ".claude" / "commands"
    write(commands / "tools" / "lint.md", "Lint from tools/")
    write(commands / "frontend" / "lint.md", "Lint from frontend/")
    write(commands / "git" / "push.md", "Push")
    write(commands / "release" / "push.md", "Release push")
    write(repo / ".commands" / "push.md", "Top-level push")
    write(commands / "svelte" / "svelte:test.md", "A file name with a colon")

    catalog = load_skills(repo, home, claude)

    assert catalog.get("lint") is catalog.skills["frontend:lint"]  # `frontend/` sorts before `tools/`
    assert catalog.get("tools:lint") is not None and catalog.get("frontend:lint") is not None
    assert catalog.get("push") is catalog.skills["push"]  # a full name beats every short one
    assert catalog.get("svelte:test") is catalog.skills["svelte:svelte:test"]
    lost = sorted((command.name, holder) for command, holder in catalog.short_names_lost)
    assert lost == [("git:push", "push"), ("release:push", "push"), ("tools:lint", "frontend:lint")]
    assert catalog.shown_name(catalog.skills["frontend:lint"]) == "lint"
    assert catalog.shown_name(catalog.skills["tools:lint"]) == "tools:lint"
    listing = render_skill_list(catalog)
    assert "- /lint: Lint from frontend/" in listing and "- /tools:lint: Lint from tools/" in listing


def test_the_listing_for_a_hundred_skills_is_bounded_and_says_what_it_left_out(tmp_path: Path, repo: Path) -> None:
    home, claude = tmp_path / "agentcli-home", tmp_path / "user" / ".claude"
    for n in range(100):
        where = repo / ".claude" / "skills" if n < 50 else claude / "skills"
        skill(where, f"skill-{n:03}", f"Does task number {n}. Use when the user asks for task {n}. " + "x" * 150)

    listing = render_skill_list(load_skills(repo, home, claude))

    described = [line for line in listing.splitlines() if line.startswith("- /")]
    assert 20 < len(described) < 100
    assert sum(len(line) + 1 for line in described) <= DESCRIBED_BUDGET
    assert described[0].startswith("- /skill-000: Does task number 0.")  # the project's first
    assert all(len(line) < 300 for line in described)
    left_out = 100 - len(described)
    [tail] = [line for line in listing.splitlines() if line.startswith(f"({left_out} more not described")]
    assert tail.endswith("/skill-099. Run one to see what it does.)")
    assert len(tail) < NAMES_BUDGET + 200


def test_a_skills_model_is_its_turns_and_inherit_means_the_sessions(tmp_path: Path, repo: Path) -> None:
    home, claude = tmp_path / "agentcli-home", tmp_path / "user" / ".claude"
    skill(repo / ".claude" / "skills", "quick", "Quick answers", "model: claude-haiku-4-5\n")
    skill(repo / ".claude" / "skills", "same", "Same model", "model: inherit\n")

    catalog = load_skills(repo, home, claude)

    assert catalog.skills["quick"].model == "claude-haiku-4-5"
    assert catalog.skills["same"].model is None
