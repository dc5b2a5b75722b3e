"""The session's user messages: reminders first, refreshed after edits, history never rewritten.

Driven in-process: SessionContext + the real Agent loop, the model scripted (each request
checked as the API would check it).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentcli.agents.build import build_agent
from agentcli.agents.sources import ToolList
from agentcli.context.outside import OutsideFile, OutsideFiles
from agentcli.context.session import SessionContext, parse_command
from agentcli.contracts import JSON, ToolContext
from agentcli.errors import UsageError
from agentcli.loop import Agent, LoopConfig
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.tools.read import ReadTool
from agentcli.workspace.local import LocalWorkspace
from tests.context.gates import RuleGate, ShellBash
from tests.context.helpers import write
from tests.fake_anthropic import validation_error


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel(check=validation_error)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "agentcli-home"


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def session(
    cwd: Path, home: Path, model: ScriptedModel, gate: RuleGate | None = None, notices: list[str] | None = None
) -> tuple[SessionContext, Agent]:
    context = SessionContext(
        LocalWorkspace(cwd), "claude-test", home=home, on_notice=(notices if notices is not None else []).append
    )
    gate = gate or RuleGate()
    tools = ToolList("test", (ReadTool(), ShellBash()))
    agent = build_agent(
        sources=[tools, context.tool_source(gate, tools)],
        system=context.system,
        model=model,
        gate=gate,
        config=LoopConfig(model="claude-test"),
        ctx=ToolContext(LocalWorkspace(cwd)),
        on_event=lambda event: None,
    )
    return context, agent


def send(context: SessionContext, agent: Agent, words: str) -> None:
    prepared = context.prepare(words, agent.ctx)
    with context.turn(prepared):
        agent.run(prepared.content)


def without_cache_marks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_marks(v) for v in value]
    return value


def texts(message: JSON) -> list[str]:
    return [block["text"] for block in message["content"]]


def test_reminders_first_then_refreshed_after_an_edit_and_history_untouched(
    cwd: Path, home: Path, model: ScriptedModel
) -> None:
    write(cwd / "CLAUDE.md", "Use tabs.")
    write(cwd / ".commands" / "deploy.md", "---\nargument-hint: <env>\n---\nDeploy the app")
    context, agent = session(cwd, home, model)
    model.script(reply(text("one")), reply(text("two")), reply(text("three")))

    send(context, agent, "first")
    first_sent = json.dumps(agent.messages[0])
    write(cwd / "CLAUDE.md", "Use spaces, not tabs.")
    send(context, agent, "second")
    send(context, agent, "third")

    bodies = [dataclasses.asdict(r) for r in model.requests]
    instructions, skills, words = texts(bodies[0]["messages"][0])
    assert instructions.startswith("<system-reminder>\n") and instructions.endswith("\n</system-reminder>")
    assert (
        f"Contents of {cwd / 'CLAUDE.md'} (project instructions, checked into the codebase):\n\nUse tabs."
        in instructions
    )
    assert skills.startswith("<system-reminder>\nSkills") and "- /deploy <env>: Deploy the app" in skills
    assert words == "first"

    refreshed, words = texts(bodies[1]["messages"][2])
    assert "The instruction files changed during this session" in refreshed
    assert "Use spaces, not tabs." in refreshed and "Use tabs." not in refreshed.replace("not tabs.", "")
    assert words == "second"
    assert texts(bodies[2]["messages"][4]) == ["third"]  # nothing changed: no reminder

    # Earlier messages go out unchanged on every later request (cache marks aside), and are never rewritten.
    first_message = without_cache_marks(bodies[0]["messages"][0])
    for later in bodies[1:]:
        assert without_cache_marks(later["messages"][0]) == first_message
    assert json.dumps(without_cache_marks(bodies[2]["messages"][2])) == json.dumps(
        without_cache_marks(bodies[1]["messages"][2])
    )
    assert json.dumps(agent.messages[0]) == first_sent
    assert all(r.system == bodies[0]["system"] for r in model.requests)


def test_skill_file_changes_and_removals_are_announced(cwd: Path, home: Path, model: ScriptedModel) -> None:
    write(cwd / ".commands" / "a.md", "Skill A")
    context, _ = session(cwd, home, model)

    assert "- /a: Skill A" in context.user_message("1")[0]["text"]
    write(cwd / ".commands" / "b.md", "Skill B")
    [changed, _] = context.user_message("2")
    assert "The skills changed during this session" in changed["text"] and "- /b: Skill B" in changed["text"]
    (cwd / ".commands" / "a.md").unlink()
    (cwd / ".commands" / "b.md").unlink()
    [removed, _] = context.user_message("3")
    assert removed["text"] == "<system-reminder>\nNo skills are available any more.\n</system-reminder>"
    write(cwd / "CLAUDE.md", "late rules")
    [late, _] = context.user_message("4")
    assert "late rules" in late["text"] and "changed during" not in late["text"]
    assert context.user_message("5") == [{"type": "text", "text": "5"}]


def test_a_refused_command_does_not_use_up_the_reminders(cwd: Path, home: Path, model: ScriptedModel) -> None:
    write(cwd / "CLAUDE.md", "rules")
    context, agent = session(cwd, home, model)
    with pytest.raises(UsageError, match="Unknown command /nope"):
        context.prepare("/nope", agent.ctx)
    assert "rules" in context.prepare("hello", agent.ctx).content[0]["text"]


def test_slash_command_expands_into_the_user_message(cwd: Path, home: Path, model: ScriptedModel) -> None:
    write(cwd / ".commands" / "git" / "fix.md", "---\nmodel: claude-other\n---\nFix issue #$1 in @$2")
    write(cwd / "src" / "a.py", "x = 1\n")
    context, agent = session(cwd, home, model)

    prepared = context.prepare("/git:fix 42 src/a.py", agent.ctx)

    assert prepared.model == "claude-other"
    assert prepared.content[-1]["text"] == 'Fix issue #42 in src/a.py\n\n<file path="src/a.py">\nx = 1\n</file>'
    assert "<system-reminder>" in prepared.content[0]["text"]


def test_what_counts_as_a_command() -> None:
    assert parse_command("/commit") == ("commit", "")
    assert parse_command("  /git:commit  fix the\nthing ") == ("git:commit", "fix the\nthing")
    assert parse_command("/usr/bin/python is broken") is None
    assert parse_command("please /commit") is None
    assert parse_command("/") is None


def test_skill_rules_hold_for_the_turn_only(cwd: Path, home: Path, model: ScriptedModel) -> None:
    write(cwd / ".commands" / "ship.md", "---\nallowed-tools: Bash(make ship:*)\n---\nShip it")
    write(cwd / ".commands" / "lint.md", "---\nallowed-tools: Bash(make lint:*)\n---\nLint it")
    gate = RuleGate()
    context, agent = session(cwd, home, model, gate)
    model.script(
        reply(tool_use("Skill", {"skill": "lint"}, id="toolu_s")),
        reply(tool_use("Bash", {"command": "make ship now"}, id="toolu_1")),
        reply(text("shipped")),
    )

    send(context, agent, "/ship")

    bash_checks = [c for c in gate.checks if c[0] == "Bash"]
    assert bash_checks == [("Bash", {"command": "make ship now"}, ["Bash(make ship:*)", "Bash(make lint:*)"])]
    assert gate.allow == []


HELPER = "---\nallowed-tools: Bash(touch:*)\n---\nStamp: !`touch bang`"
NOT_IN_FORCE = (
    "/helper's allowed-tools are not in force: .commands/helper.md was created or changed during this session; "
    "run /helper yourself once to trust it."
)


def results(model: ScriptedModel, request: int) -> list[JSON]:
    return list(model.requests[request].messages[-1]["content"])


def test_a_skill_written_during_the_session_grants_the_model_nothing_until_the_user_runs_it(
    cwd: Path, home: Path, model: ScriptedModel
) -> None:
    gate = RuleGate()
    notices: list[str] = []
    context, agent = session(cwd, home, model, gate, notices)
    write(cwd / ".commands" / "helper.md", HELPER)  # after the session began, as a model's Write would
    model.script(
        reply(tool_use("Skill", {"skill": "helper"}, id="toolu_1")),
        reply(tool_use("Bash", {"command": "touch later"}, id="toolu_2")),
        reply(text("stuck")),
    )

    send(context, agent, "set it up")

    assert not (cwd / "bang").exists() and not (cwd / "later").exists()
    [skill_result] = results(model, 1)
    assert skill_result["is_error"] is True
    assert "its command !`touch bang` is not allowed" in skill_result["content"]
    assert NOT_IN_FORCE in skill_result["content"]
    [bash_result] = results(model, 2)
    assert bash_result["is_error"] is True
    assert [rules for name, _, rules in gate.checks if name == "Bash"] == [[], []]
    assert len(notices) == 1 and notices[0].startswith(NOT_IN_FORCE)

    # The user runs it by hand: its rules apply, and from now on the model may run this content too.
    model.script(reply(text("stamped")))
    send(context, agent, "/helper")
    assert (cwd / "bang").exists()
    (cwd / "bang").unlink()
    model.script(
        reply(tool_use("Skill", {"skill": "helper"}, id="toolu_3")),
        reply(tool_use("Bash", {"command": "touch later"}, id="toolu_4")),
        reply(text("done")),
    )
    send(context, agent, "again")
    assert (cwd / "bang").exists() and (cwd / "later").exists()
    assert "not in force" not in json.dumps(model.requests[-1].messages[-3:])

    # Changed once more: untrusted again.
    write(cwd / ".commands" / "helper.md", HELPER.replace("bang", "bang2"))
    model.script(reply(tool_use("Skill", {"skill": "helper"}, id="toolu_5")), reply(text("no")))
    send(context, agent, "and again")
    assert not (cwd / "bang2").exists()
    assert NOT_IN_FORCE in results(model, -1)[0]["content"]


def test_a_skill_unchanged_since_the_session_began_grants_the_model_its_rules(
    cwd: Path, home: Path, model: ScriptedModel
) -> None:
    write(cwd / ".commands" / "helper.md", HELPER)
    notices: list[str] = []
    context, agent = session(cwd, home, model, RuleGate(), notices)
    model.script(reply(tool_use("Skill", {"skill": "helper"}, id="toolu_1")), reply(text("done")))

    send(context, agent, "stamp it")

    assert (cwd / "bang").exists()
    [skill_result] = results(model, 1)
    assert "is_error" not in skill_result and skill_result["content"].endswith("Stamp:")
    assert notices == []


def test_a_skill_the_model_runs_grants_nothing_in_the_next_user_message(
    cwd: Path, home: Path, model: ScriptedModel
) -> None:
    write(cwd / ".commands" / "helper.md", "---\nallowed-tools: Bash(touch:*)\n---\nStamp files.")
    gate = RuleGate()
    context, agent = session(cwd, home, model, gate)
    model.script(
        reply(tool_use("Skill", {"skill": "helper"}, id="toolu_1")),
        reply(tool_use("Bash", {"command": "touch one"}, id="toolu_2")),
        reply(text("one done")),
        reply(tool_use("Bash", {"command": "touch two"}, id="toolu_3")),
        reply(text("two refused")),
    )

    send(context, agent, "stamp one")
    send(context, agent, "stamp two")

    assert (cwd / "one").exists() and not (cwd / "two").exists()
    assert results(model, 4)[0]["is_error"] is True
    assert gate.allow == []


def test_outside_imports_are_asked_about_once_and_again_only_for_new_ones(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    write(tmp_path / "outside" / "a.md", "A, which imports @b.md")
    write(tmp_path / "outside" / "b.md", "B")
    write(tmp_path / "outside" / "c.md", "C")
    write(project / "CLAUDE.md", "@../outside/a.md")
    asked: list[list[str]] = []

    def ask(files: Sequence[OutsideFile]) -> bool:
        asked.append([f"{f.mention} by {f.named_by.name}" for f in files])
        return True

    local = project / ".agentcli" / "settings.local.json"
    outside = OutsideFiles(project, save_to=local, ask=ask)
    context = SessionContext(LocalWorkspace(project), "claude-test", home=home, outside=outside)
    context.tool_source(RuleGate(), ToolList("test", (ReadTool(),)))
    ctx = ToolContext(LocalWorkspace(project))

    first = context.prepare("one", ctx).content[0]["text"]
    assert asked == [["../outside/a.md by CLAUDE.md"], ["b.md by a.md"]]  # the approved file's own import next
    assert "A, which imports" in first and "\n\nB" in first
    context.prepare("two", ctx)
    assert len(asked) == 2
    write(project / "CLAUDE.md", "@../outside/a.md @../outside/c.md")
    context.prepare("three", ctx)
    assert asked[2:] == [["../outside/c.md by CLAUDE.md"]]
    saved = json.loads(local.read_text())["allowedExternalImports"]
    assert saved == [str((tmp_path / "outside" / name).resolve()) for name in ("a.md", "b.md", "c.md")]
