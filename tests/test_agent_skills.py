"""Agent Skills as a Claude Code user has them: `NAME/SKILL.md` folders with supporting files.

Driven in-process through `agentcli run`'s code (`run_agent`) with the real permission gate and
a scripted model: what the model is sent (the listing, the body only when invoked), what runs,
and what a denial leaves untouched.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.contracts import JSON
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent
from tests.context.helpers import write

BODY_MARKER = "Step 7 of the secret procedure"
PDF_SKILL = f"""---
name: pdf
description: Extract text and tables from PDF files. Use when the user mentions a PDF.
license: Proprietary. LICENSE.txt has the terms
metadata:
  owner: docs-team
---
# PDF processing

{BODY_MARKER}: read references/forms.md before filling a form.
Run the extractor: `python3 scripts/extract.py FILE`.
"""


def first_text(request_messages: list[JSON]) -> str:
    return json.dumps(request_messages[0]["content"])


def tool_result(model: ScriptedModel, request: int) -> JSON:
    found: list[JSON] = [b for b in model.requests[request].messages[-1]["content"] if b.get("type") == "tool_result"]
    [result] = found
    return result


def make_pdf_skill(folder: Path) -> Path:
    write(folder / "SKILL.md", PDF_SKILL)
    write(folder / "references" / "forms.md", "Fill each field in order.\n")
    write(folder / "scripts" / "extract.py", "open('extracted.txt', 'w').write('done')\n")
    return folder


def test_only_names_and_descriptions_are_listed_and_the_body_comes_when_the_model_runs_it(
    model: ScriptedModel, run_agent: RunAgent, project: Path, home: Path
) -> None:
    folder = make_pdf_skill(home / ".claude" / "skills" / "pdf")  # a user skill: outside the project
    write(home / "notes" / "private.txt", "not the skill's")
    model.script(
        reply(tool_use("Skill", {"skill": "pdf"}, id="toolu_skill")),
        reply(tool_use("Read", {"file_path": str(folder / "references" / "forms.md")}, id="toolu_ref")),
        reply(tool_use("Read", {"file_path": str(home / "notes" / "private.txt")}, id="toolu_other")),
        reply(tool_use("Bash", {"command": f"python3 {folder}/scripts/extract.py in.pdf"}, id="toolu_script")),
        reply(text("Done.")),
    )

    ran = run_agent("get the text out of report.pdf")

    assert ran.returncode == 0, ran.stderr
    first = model.requests[0]
    listing = first_text(first.messages)
    assert "- /pdf: Extract text and tables from PDF files. Use when the user mentions a PDF." in listing
    assert BODY_MARKER not in json.dumps(first.messages) and BODY_MARKER not in json.dumps(first.tools)
    skill_tool = next(t for t in first.tools if t["name"] == "Skill")
    assert "only names and descriptions" in skill_tool["description"]
    invoked = tool_result(model, 1)
    assert not invoked.get("is_error")
    assert f"Base directory for this skill: {folder}" in invoked["content"]
    assert BODY_MARKER in invoked["content"]
    # Its own supporting files may be read (run cannot ask); other files outside the project may not.
    reference = tool_result(model, 2)
    assert not reference.get("is_error") and "Fill each field in order." in reference["content"]
    assert tool_result(model, 3)["is_error"] is True
    # Its scripts run only through the gate, as any Bash call: in `run`, without a rule, refused.
    assert tool_result(model, 4)["is_error"] is True
    assert not (project / "extracted.txt").exists()


def test_the_user_runs_a_skill_with_arguments_like_a_command(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    folder = project / ".claude" / "skills" / "migrate"
    write(
        folder / "SKILL.md",
        "---\n"
        "description: Migrate a component\n"
        "argument-hint: [component] [from] [to]\n"
        "allowed-tools: Read Bash(ls:*)\n"
        "---\n"
        "Migrate $1 from $ARGUMENTS[1] to $3 (all: $ARGUMENTS).\n"
        "Files: !`ls ${CLAUDE_SKILL_DIR}/templates`\n"
        "Template: @${CLAUDE_SKILL_DIR}/templates/vue.txt\n"
        "Notes: @docs/missing.md\n",
    )
    write(folder / "templates" / "vue.txt", "<template></template>\n")
    model.script(reply(text("Migrated.")))

    ran = run_agent("/migrate SearchBar React Vue")

    assert ran.returncode == 0, ran.stderr
    sent = model.requests[0].messages[0]["content"][-1]["text"]
    assert sent.startswith(f"Base directory for this skill: {folder}\n\n")
    assert "Migrate SearchBar from React to Vue (all: SearchBar React Vue)." in sent
    assert "Files: vue.txt" in sent
    assert f'<file path="{folder}/templates/vue.txt">\n<template></template>\n</file>' in sent
    assert "Notes: @docs/missing.md [agentcli: docs/missing.md does not exist, so nothing was attached]" in sent


def test_frontmatter_says_who_may_run_a_skill(model: ScriptedModel, run_agent: RunAgent, project: Path) -> None:
    skills = project / ".claude" / "skills"
    write(skills / "background" / "SKILL.md", "---\ndescription: House style\nuser-invocable: false\n---\nStyle.")
    write(skills / "deploy" / "SKILL.md", "---\ndescription: Deploy\ndisable-model-invocation: true\n---\nDeploy.")

    refused = run_agent("/background")
    assert refused.returncode == 2
    assert "/background is for the model only (user-invocable: false" in refused.stderr
    assert model.requests == []

    model.script(
        reply(tool_use("Skill", {"skill": "background"}, id="toolu_1")),
        reply(tool_use("Skill", {"skill": "deploy"}, id="toolu_2")),
        reply(text("ok")),
    )
    ran = run_agent("style?")
    assert ran.returncode == 0, ran.stderr
    listing = first_text(model.requests[0].messages)
    assert "/background: House style" in listing and "deploy" not in listing
    assert "Style." in tool_result(model, 1)["content"]
    assert "can only be run by the user" in tool_result(model, 2)["content"]


def test_a_skill_takes_precedence_over_a_command_of_the_same_name_and_says_so_once(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    write(project / ".claude" / "skills" / "commit" / "SKILL.md", "Commit as the skill says.")
    write(project / ".claude" / "commands" / "commit.md", "Commit as the command says.")
    model.script(reply(text("ok")))

    ran = run_agent("/commit")

    assert ran.returncode == 0, ran.stderr
    assert "Commit as the skill says." in model.requests[0].messages[0]["content"][-1]["text"]
    skill_file = project / ".claude" / "skills" / "commit" / "SKILL.md"
    notice = f"/commit is the skill {skill_file}; the command {project / '.claude/commands/commit.md'}"
    assert ran.stderr.count(notice) == 1


def test_a_forked_skill_runs_as_a_sub_agent_of_its_type_and_returns_its_report(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    write(
        project / ".claude" / "skills" / "research" / "SKILL.md",
        "---\ndescription: Research a topic in the code\ncontext: fork\nagent: Explore\n---\nResearch $ARGUMENTS.",
    )
    model.script(
        reply(tool_use("Skill", {"skill": "research", "args": "the cache"}, id="toolu_fork")),
        reply(text("The cache is in cache.py.")),  # the sub-agent
        reply(text("Found it.")),  # the main agent again
    )

    ran = run_agent("where is the cache?")

    assert ran.returncode == 0, ran.stderr
    _, sub, back = model.requests
    assert "You are Explore" in sub.system[0]["text"]
    assert sorted(t["name"] for t in sub.tools) == ["Glob", "Grep", "Read"]
    assert sub.messages[0]["content"][-1]["text"].endswith("Research the cache.")
    assert "where is the cache?" not in json.dumps(sub.messages)
    report = tool_result(model, 2)
    assert report["content"].startswith("The cache is in cache.py.")
    assert "Research the cache." not in json.dumps(back.messages[-1])


def test_a_forked_skill_run_by_the_user_reports_to_the_main_agent(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    write(project / ".claude" / "skills" / "audit" / "SKILL.md", "---\ncontext: fork\n---\nAudit $1 for leaks.")
    model.script(reply(text("No leaks in api.py.")), reply(text("The audit found no leaks.")))

    ran = run_agent("/audit api.py")

    assert ran.returncode == 0, ran.stderr
    sub, main = model.requests
    assert sub.system[0]["text"].startswith("You are a sub-agent of agentcli")  # general-purpose, the default
    assert sub.messages[0]["content"][-1]["text"].endswith("\n\nAudit api.py for leaks.")
    told = [b["text"] for b in main.messages[0]["content"]]
    assert "The user ran /audit api.py, which runs as a sub-agent. Its report:" in told
    assert any(t.startswith("No leaks in api.py.") for t in told)
    assert "The audit found no leaks." in ran.stdout
    assert "/audit ran as a sub-agent: general-purpose: 1 turn, 0 tool calls" in ran.stderr


def test_a_forked_skill_naming_an_unknown_agent_type_says_so(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    write(project / ".claude" / "skills" / "odd" / "SKILL.md", "---\ncontext: fork\nagent: Nobody\n---\nDo it.")
    model.script(reply(tool_use("Skill", {"skill": "odd"}, id="toolu_1")), reply(text("ok")))

    ran = run_agent("do the odd thing")

    assert ran.returncode == 0, ran.stderr
    result = tool_result(model, 1)
    assert result["is_error"] is True
    assert "runs as a sub-agent of type 'Nobody'" in result["content"] and "Explore" in result["content"]
