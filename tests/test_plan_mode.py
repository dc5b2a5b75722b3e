"""Plan mode's hand-over, in-process: in plan mode the model only looks, then calls
ExitPlanMode(plan); the user approves it (edits accepted, or asked about) and the work starts in
the same turn, or sends it back with what to change. In `agentcli run` the plan is the run's
answer and nothing changes. The approved plan is kept: a `plan` transcript record, the session's
`approved_plan`, across a resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.asking import PlanVerdict
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.session import Session, SessionOptions
from agentcli.tools.exit_plan import ApprovedPlan, ApprovedPlans, ExitPlanModeTool
from tests.ask_helpers import ScriptedUser, results, sent
from tests.conftest import RunAgent
from tests.fake_anthropic import validation_error
from tests.session_helpers import records, transcript_files

PLAN = "## Plan\n1. Add `greet()` to greet.py\n2. Check it with `python greet.py`"
WRITE = {"file_path": "greet.py", "content": "def greet():\n    return 'hi'\n"}


def plan_then_write() -> ScriptedModel:
    """The model reads, hands over its plan, and (once approved) writes greet.py in the same turn."""
    return ScriptedModel(
        reply(tool_use("Glob", {"pattern": "*.py"})),
        reply(text("Here is my plan."), tool_use("ExitPlanMode", {"plan": PLAN}, id="toolu_plan")),
        reply(tool_use("Write", WRITE, id="toolu_write")),
        reply(text("Done: greet.py written.")),
        check=validation_error,
    )


def plan_session(project: Path, model: ScriptedModel, user: ScriptedUser) -> Session:
    options = SessionOptions(permission_mode="plan")
    return Session(options, project, lambda event: None, model=model, prompter=user, ask_user=user)


@pytest.mark.usefixtures("in_process_env")
def test_approved_with_edits_accepted_the_work_starts_in_the_same_turn_without_asking(
    project: Path, home: Path
) -> None:
    model = plan_then_write()
    user = ScriptedUser(verdicts=[PlanVerdict("acceptEdits")])

    with plan_session(project, model, user) as session:
        result = session.send("add a greeting")
        assert session.gate.mode == "acceptEdits"
        assert session.approved_plan == ApprovedPlan(PLAN, "acceptEdits")

    assert result.text == "Done: greet.py written."
    assert [review.plan for review in user.reviewed] == [PLAN]
    approval = results(model.requests[2])["toolu_plan"]
    assert approval.get("is_error") is not True
    assert "approved your plan" in approval["content"] and "acceptEdits" in approval["content"]
    assert (project / "greet.py").read_text() == WRITE["content"]
    assert user.permissions == []  # acceptEdits: the Write was not asked about
    [path] = transcript_files(home, project)
    lines = records(path)
    [plan] = [line for line in lines if line["type"] == "plan"]
    assert plan["plan"] == PLAN and plan["mode"] == "acceptEdits"
    after = lines[lines.index(plan) + 1]  # the record before the results that tell the model
    assert after["type"] == "message" and "approved your plan" in json.dumps(after["message"])


@pytest.mark.usefixtures("in_process_env")
def test_approved_and_keep_asking_switches_to_default_and_the_edit_is_asked_about(project: Path) -> None:
    model = plan_then_write()
    user = ScriptedUser(verdicts=[PlanVerdict("default")])

    with plan_session(project, model, user) as session:
        session.send("add a greeting")
        assert session.gate.mode == "default"

    assert [request.tool for request in user.permissions] == ["Write"]
    assert "default" in results(model.requests[2])["toolu_plan"]["content"]
    assert (project / "greet.py").exists()


@pytest.mark.usefixtures("in_process_env")
def test_keep_planning_sends_what_to_change_back_and_nothing_may_change(project: Path) -> None:
    model = plan_then_write()
    user = ScriptedUser(verdicts=[PlanVerdict(None, "use f-strings and add a test")])

    with plan_session(project, model, user) as session:
        session.send("add a greeting")
        assert session.gate.mode == "plan"
        assert session.approved_plan is None

    sent_back = results(model.requests[2])["toolu_plan"]
    assert sent_back["is_error"] is True
    assert "use f-strings and add a test" in sent_back["content"] and "ExitPlanMode again" in sent_back["content"]
    write = results(model.requests[3])["toolu_write"]
    assert write["is_error"] is True and "plan mode" in write["content"]
    assert not (project / "greet.py").exists()


@pytest.mark.usefixtures("in_process_env")
def test_keep_planning_without_a_word_tells_the_model_to_stop_and_wait(project: Path) -> None:
    model = ScriptedModel(
        reply(tool_use("ExitPlanMode", {"plan": PLAN}, id="toolu_plan")),
        reply(text("Waiting.")),
        check=validation_error,
    )
    user = ScriptedUser(verdicts=[PlanVerdict(None)])

    with plan_session(project, model, user) as session:
        session.send("add a greeting")

    content = results(model.requests[1])["toolu_plan"]["content"]
    assert "did not approve" in content and "wait for the user" in content


@pytest.mark.usefixtures("in_process_env")
def test_after_approval_the_next_prompt_does_not_repeat_that_plan_mode_ended(project: Path) -> None:
    model = plan_then_write()
    model.script(reply(text("Anything else?")))
    user = ScriptedUser(verdicts=[PlanVerdict("acceptEdits")])

    with plan_session(project, model, user) as session:
        session.send("add a greeting")
        session.send("thanks")

    assert "Plan mode is on" in sent(model.requests[0]) and "ExitPlanMode" in sent(model.requests[0])
    assert "Plan mode is" not in sent(model.requests[4])  # the approval said it already


def test_run_in_plan_mode_prints_the_plan_and_exits_0_with_nothing_changed(
    model: ScriptedModel, run_agent: RunAgent, project: Path, home: Path
) -> None:
    model.script(
        reply(tool_use("Glob", {"pattern": "*.py"})),
        reply(text("My plan:"), tool_use("ExitPlanMode", {"plan": PLAN}, id="toolu_plan")),
    )

    done = run_agent("add a greeting", permission_mode="plan")

    assert done.returncode == 0, done.stderr
    assert done.stdout == PLAN + "\n"
    assert len(model.requests) == 2  # the model is not asked again after the hand-over
    assert list(project.iterdir()) == [project / ".git"]
    [path] = transcript_files(home, project)
    conversation = [line["message"] for line in records(path) if line["type"] == "message"]
    [result] = conversation[-1]["content"]
    assert result["tool_use_id"] == "toolu_plan" and "nothing was changed" in result["content"]
    assert not any(line["type"] == "plan" for line in records(path))  # nobody approved it

    model.script(reply(text("Carrying it out.")))
    assert run_agent("go ahead", continue_session=True).returncode == 0
    assert model.rejected == []  # the conversation after the hand-over is a valid one to go on with


def test_run_in_plan_mode_as_json_has_the_plan_as_its_result(model: ScriptedModel, run_agent: RunAgent) -> None:
    model.script(reply(tool_use("ExitPlanMode", {"plan": PLAN})))

    done = run_agent("add a greeting", permission_mode="plan", output_format="json")

    assert done.returncode == 0
    report = json.loads(done.stdout)
    assert report["subtype"] == "success" and report["result"] == PLAN and report["is_error"] is False


def test_outside_plan_mode_there_is_nothing_to_exit(model: ScriptedModel, run_agent: RunAgent) -> None:
    model.script(reply(tool_use("ExitPlanMode", {"plan": PLAN}, id="toolu_plan")), reply(text("Carrying on.")))

    done = run_agent("add a greeting")

    assert done.returncode == 0 and done.stdout == "Carrying on.\n"
    result = results(model.requests[1])["toolu_plan"]
    assert result["is_error"] is True and "Not in plan mode" in result["content"]


@pytest.mark.usefixtures("in_process_env")
def test_the_approved_plan_is_back_after_a_resume(project: Path) -> None:
    model = plan_then_write()
    user = ScriptedUser(verdicts=[PlanVerdict("default")])
    with plan_session(project, model, user) as session:
        session.send("add a greeting")
        session_id = session.id

    with Session(SessionOptions(resume=session_id), project, lambda event: None, model=model) as resumed:
        assert resumed.approved_plan == ApprovedPlan(PLAN, "default")


PLAN_REMINDER = "The plan the user approved in this conversation"


@pytest.mark.usefixtures("in_process_env")
def test_after_a_compaction_the_first_request_carries_the_approved_plan(project: Path) -> None:
    model = plan_then_write()
    model.script(reply(text("SUMMARY: greet.py written.")), reply(text("Checked.")))
    user = ScriptedUser(verdicts=[PlanVerdict("acceptEdits")])

    with plan_session(project, model, user) as session:
        session.send("add a greeting")
        assert session.compact().summarised
        session.send("check it")

    assert all(PLAN_REMINDER not in sent(request) for request in model.requests[:4])  # the model wrote it itself
    [after] = model.requests[-1].messages[:1]
    reminder = next(b["text"] for b in after["content"] if PLAN_REMINDER in b.get("text", ""))
    assert reminder.startswith("<system-reminder>") and PLAN in reminder and "acceptEdits" in reminder
    assert "Plan mode is" not in json.dumps(model.requests[-1].messages)  # plan mode stays over


@pytest.mark.usefixtures("in_process_env")
def test_a_resumed_conversation_is_not_told_its_plan_again_until_a_compaction(project: Path) -> None:
    model = plan_then_write()
    user = ScriptedUser(verdicts=[PlanVerdict("default")])
    with plan_session(project, model, user) as session:
        session.send("add a greeting")
        session_id = session.id
    model.script(reply(text("Going on.")), reply(text("SUMMARY: greet.py written.")), reply(text("Checked.")))

    with Session(SessionOptions(resume=session_id), project, lambda event: None, model=model) as resumed:
        resumed.send("go on")
        assert PLAN_REMINDER not in sent(model.requests[-1])
        resumed.compact()
        resumed.send("check it")

    summary = json.dumps(model.requests[-1].messages[0])
    assert PLAN_REMINDER in summary and "in default mode" in summary and "Add `greet()`" in summary


class Modes:
    mode = "plan"


def test_the_schema_is_claude_codes() -> None:
    tool = ExitPlanModeTool(Modes(), None, ApprovedPlans())
    assert tool.name == "ExitPlanMode"
    assert tool.input_schema["required"] == ["plan"]
    assert list(tool.input_schema["properties"]) == ["plan"]
    assert tool.input_schema["properties"]["plan"]["type"] == "string"


def test_an_empty_plan_is_an_error_the_model_can_act_on(model: ScriptedModel, run_agent: RunAgent) -> None:
    model.script(reply(tool_use("ExitPlanMode", {"plan": "  "}, id="toolu_plan")), reply(text("Still planning.")))

    done = run_agent("add a greeting", permission_mode="plan")

    assert done.returncode == 0 and done.stdout == "Still planning.\n"
    result = results(model.requests[1])["toolu_plan"]
    assert result["is_error"] is True and "needs the plan itself" in result["content"]
