"""`opusplan`, as in Claude Code: requests made in plan mode go to the `opus` model, the others
to `sonnet`, each resolved for the provider in use; the model follows the mode from one request
to the next (an approved ExitPlanMode, Shift-Tab, `/model`), and `--continue` keeps the choice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.asking import PlanVerdict
from agentcli.errors import UsageError
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.session import Session, SessionOptions
from tests.ask_helpers import ScriptedUser
from tests.conftest import RunAgent
from tests.fake_anthropic import validation_error
from tests.session_helpers import records, transcript_files

OPUS = "claude-opus-5-5"
SONNET = "claude-sonnet-5-5"
PLAN = "## Plan\n1. Write greet.py"
WRITE = {"file_path": "greet.py", "content": "print('hi')\n"}


def session(project: Path, scripted: ScriptedModel, user: ScriptedUser | None = None, **options: Any) -> Session:
    user = user or ScriptedUser()
    return Session(SessionOptions(**options), project, lambda event: None, model=scripted, prompter=user, ask_user=user)


@pytest.mark.usefixtures("in_process_env")
def test_plan_mode_requests_go_to_opus_and_after_the_plan_is_approved_to_sonnet_in_the_same_turn(
    project: Path,
) -> None:
    model = ScriptedModel(
        reply(tool_use("Glob", {"pattern": "*.py"})),
        reply(text("My plan."), tool_use("ExitPlanMode", {"plan": PLAN}, id="toolu_plan")),
        reply(tool_use("Write", WRITE, id="toolu_write")),
        reply(text("Done.")),
        check=validation_error,
    )
    user = ScriptedUser(verdicts=[PlanVerdict("acceptEdits")])

    with session(project, model, user, model="opusplan", permission_mode="plan") as opened:
        opened.send("add a greeting")

    assert [request.model for request in model.requests] == [OPUS, OPUS, SONNET, SONNET]
    assert (project / "greet.py").read_text() == WRITE["content"]


@pytest.mark.usefixtures("in_process_env")
def test_the_setting_follows_shift_tab_into_plan_mode_and_out_again(project: Path, home: Path) -> None:
    (home / ".agentcli" / "settings.json").write_text(json.dumps({"model": "opusplan"}))
    model = ScriptedModel(reply(text("one")), reply(text("two")), reply(text("three")))

    with session(project, model) as opened:
        opened.send("first")
        assert opened.gate.cycle_mode() == "acceptEdits"
        assert opened.gate.cycle_mode() == "plan"
        assert opened.model_name == OPUS
        opened.send("second")
        opened.gate.mode = "default"
        opened.send("third")

    assert [request.model for request in model.requests] == [SONNET, OPUS, SONNET]


@pytest.mark.usefixtures("in_process_env")
def test_each_half_resolves_for_the_provider_and_through_claude_codes_variables(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedModel(reply(text("planned")), reply(text("done")))
    with session(project, model, model="openai:opusplan", permission_mode="plan") as opened:
        opened.send("plan it")
        opened.gate.mode = "acceptEdits"
        opened.send("do it")
    assert [request.model for request in model.requests] == ["gpt-5.5", "gpt-5"]

    monkeypatch.setenv("ANTHROPIC_DEFAULT_OPUS_MODEL", "claude-opus-4-1")
    model = ScriptedModel(reply(text("planned")))
    with session(project, model, model="opusplan", permission_mode="plan") as opened:
        opened.send("plan it")
    assert model.requests[0].model == "claude-opus-4-1"


@pytest.mark.usefixtures("in_process_env")
def test_a_provider_without_the_table_is_told_which_half_to_map(project: Path) -> None:
    with pytest.raises(UsageError, match=r"The model alias 'opus' names no model for ollama"):
        session(project, ScriptedModel(), model="ollama:opusplan")

    (project / ".agentcli").mkdir()
    mapped = {"modelAliases": {"ollama": {"opus": "qwen3-coder:30b", "sonnet": "qwen3-coder"}}}
    (project / ".agentcli" / "settings.local.json").write_text(json.dumps(mapped))
    model = ScriptedModel(reply(text("planned")))
    with session(project, model, model="ollama:opusplan", permission_mode="plan") as opened:
        opened.send("plan it")
    assert model.requests[0].model == "qwen3-coder:30b"


@pytest.mark.usefixtures("in_process_env")
def test_slash_model_opusplan_switches_from_the_next_request_and_continue_keeps_it(project: Path, home: Path) -> None:
    model = ScriptedModel(reply(text("one")), reply(text("two")))
    with session(project, model, model="haiku", permission_mode="plan") as opened:
        opened.send("first")
        opened.set_model("opusplan")
        assert opened.model_choice.describe() == f"opusplan: {OPUS} in plan mode, {SONNET} otherwise"
        opened.send("second")
    assert [request.model for request in model.requests] == ["claude-haiku-5-5", OPUS]
    [path] = transcript_files(home, project)
    assert [line["model"] for line in records(path) if line["type"] == "model"] == ["opusplan"]

    model = ScriptedModel(reply(text("three")))
    with session(project, model, continue_session=True) as opened:
        opened.send("third")  # default mode
    assert model.requests[0].model == SONNET


def test_an_agent_definition_naming_opusplan_gets_its_sonnet(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    folder = project / ".agentcli" / "agents"
    folder.mkdir(parents=True)
    (folder / "helper.md").write_text("---\nname: helper\ndescription: Helps.\nmodel: opusplan\n---\nHelp.\n")
    task = {"description": "help", "prompt": "help", "subagent_type": "helper"}
    model.script(reply(tool_use("Task", task, id="toolu_1")), reply(text("helped")), reply(text("ok")))

    assert run_agent("go", model="opus").returncode == 0
    assert [request.model for request in model.requests] == [OPUS, SONNET, OPUS]
