"""Frontmatter that is not strict YAML, as people write it for Claude Code: read as meant, one warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.agents.definitions import load_agent_catalog
from agentcli.agents.task import AgentTypes
from agentcli.skills.frontmatter import read_frontmatter
from agentcli.skills.lenient import read_leniently
from agentcli.skills.loader import load_skills
from agentcli.skills.notices import SkillNotices
from tests.context.helpers import write


def test_each_key_keeps_the_text_written_and_values_yaml_can_read_keep_their_type() -> None:
    raw = (
        "argument-hint: [file] [--flag]\n"
        "description: Use when: the user asks <example>user: hi</example>\n"
        'tools: ["Read", "Grep"]\n'
        "disable-model-invocation: true\n"
        "maxTurns: 20\n"
        "# model: opus\n"
        "model: 'sonnet'\n"
        "notes: first line\n"
        "  second line\n"
        "Context: flush-left text after a key starts a field of its own\n"
        "<commentary>not a key: continues it</commentary>\n"
        "block: |\n"
        "  kept\n"
        "  as lines\n"
        "folded: >\n"
        "  one\n"
        "  paragraph\n"
        "allowed-tools:\n"
        "  - Read\n"
        "  - Bash(git diff:*)\n"
    )

    fields = read_leniently(raw)

    assert fields == {
        "argument-hint": "[file] [--flag]",
        "description": "Use when: the user asks <example>user: hi</example>",
        "tools": ["Read", "Grep"],
        "disable-model-invocation": True,
        "maxTurns": 20,
        "model": "sonnet",
        "notes": "first line second line",
        "Context": "flush-left text after a key starts a field of its own "
        "<commentary>not a key: continues it</commentary>",
        "block": "kept\nas lines",
        "folded": "one paragraph",
        "allowed-tools": ["Read", "Bash(git diff:*)"],
    }


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        ("description: ok\nargument-hint: [pr-number] [--draft]\n", 3),
        ("name: x\ndescription: Use this agent when: reviewing\n", 3),
        ("tools: *\n", 2),
    ],
)
def test_the_warning_names_the_file_and_the_line(raw: str, line: int) -> None:
    front = read_frontmatter(f"---\n{raw}---\nBody\n", "/p/x.md")

    assert front.body == "Body\n"
    assert front.warning is not None
    assert front.warning.startswith(f"/p/x.md, line {line}: the frontmatter is not valid YAML (")
    assert front.warning.endswith("read each `key: value` line as written.")


def test_strict_yaml_gives_no_warning_and_a_bom_is_ignored() -> None:
    front = read_frontmatter("\ufeff---\ndescription: fine\n---\nBody", "x.md")
    assert (front.fields, front.body, front.warning) == ({"description": "fine"}, "Body", None)


def test_a_command_and_a_skill_with_loose_frontmatter_work_and_are_reported_once(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    command = write(
        project / ".claude" / "commands" / "review-pr.md",
        "---\nargument-hint: [pr-number] [--draft]\ndescription: Review a PR: the diff first\n"
        "allowed-tools: Bash(gh pr diff:*), Read\n---\nReview PR $1.\n",
    )
    skill = write(
        project / ".claude" / "skills" / "triage" / "SKILL.md",
        "---\nname: triage\ndescription: Use when: an issue comes in\n---\nTriage it.\n",
    )
    said: list[str] = []
    notices = SkillNotices(said.append)

    catalog = load_skills(project, home)
    notices.report(catalog)
    notices.report(load_skills(project, home))

    review = catalog.skills["review-pr"]
    assert (review.argument_hint, review.description) == ("[pr-number] [--draft]", "Review a PR: the diff first")
    assert review.allowed_tools == ("Bash(gh pr diff:*)", "Read")
    assert catalog.skills["triage"].description == "Use when: an issue comes in"
    assert len(said) == 2  # once each, though read twice
    about_command, about_skill = sorted(said)
    assert about_command.startswith(f"{command}, line 2: the frontmatter is not valid YAML (")
    assert about_skill.startswith(f"{skill}, line 3: the frontmatter is not valid YAML (")
    assert all(text.endswith("); read each `key: value` line as written.") for text in said)


def test_an_agent_with_loose_frontmatter_is_started_as_written_with_one_warning(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    path = write(
        project / ".claude" / "agents" / "analyzer.md",
        "---\nname: analyzer\n"
        "description: Use this agent when analyzing transcripts. Examples: <example>Context: the user\n"
        "user: analyze this\n"
        "assistant: I'll use the analyzer agent.</example>\n"
        'model: inherit\ncolor: yellow\ntools: ["Read", "Grep"]\n---\nYou analyze transcripts.\n',
    )
    said: list[str] = []
    types = AgentTypes(project, home, said.append)

    analyzer = types.catalog().get("analyzer")
    types.catalog()

    assert analyzer is not None
    assert analyzer.description == (
        "Use this agent when analyzing transcripts. Examples: <example>Context: the user "
        "user: analyze this assistant: I'll use the analyzer agent.</example>"
    )
    assert analyzer.tools == ("Read", "Grep")
    assert analyzer.model is None and analyzer.prompt == "You analyze transcripts."
    [warning] = said
    assert warning.startswith(f"{path}, line 3: the frontmatter is not valid YAML (mapping values are not allowed")


def test_agent_definitions_in_subfolders_are_found_and_names_are_unique_per_agents_folder(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "project"
    agents = project / ".claude" / "agents"
    write(agents / "backend" / "api-designer.md", "---\nname: api-designer\ndescription: Designs APIs\n---\nDesign.")
    write(agents / "frontend" / "react" / "hooks.md", "---\nname: hooks-expert\ndescription: Hooks\n---\nHooks.")
    second = write(agents / "more" / "api.md", "---\nname: api-designer\ndescription: Another\n---\nAgain.")
    write(agents / ".drafts" / "wip.md", "---\nname: wip\ndescription: Draft\n---\nDraft.")

    catalog = load_agent_catalog(project, home)

    assert {"api-designer", "hooks-expert"} <= set(catalog.names()) and "wip" not in catalog.names()
    designer = catalog.get("api-designer")
    assert designer is not None and designer.source == str(agents / "backend" / "api-designer.md")
    [invalid] = catalog.invalid
    assert invalid.path == second and "defines the agent type 'api-designer'" in invalid.problem
