"""The task list (TodoWrite) end to end: what the user sees, what the model is sent, and
that the list survives a compaction and a resumed session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.contracts import ModelRequest
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests import fake_anthropic as fake
from tests.conftest import RunAgent, StartRepl
from tests.fake_anthropic import FakeAnthropic
from tests.session_helpers import records, transcript_files, two_files_compacting_at_the_second_read

PLAN = [
    {"content": "Find the bug", "status": "completed", "activeForm": "Finding the bug"},
    {"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"},
    {"content": "Update the README", "status": "pending", "activeForm": "Updating the README"},
]
TASKS_REMINDER = "Your task list (kept with TodoWrite)"


def tool_results(request: ModelRequest) -> list[dict[str, Any]]:
    return [b for b in request.messages[-1]["content"] if b.get("type") == "tool_result"]


def test_the_task_list_is_shown_and_needs_no_permission(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(
        reply(text("Planning."), tool_use("TodoWrite", {"todos": PLAN}, id="toolu_plan")),
        reply(text("Fixed; README next.")),
    )

    done = run_agent("fix the bug, test it and document it")  # no terminal: an ask would be a denial

    assert done.returncode == 0, done.stderr
    assert "● TodoWrite(3 tasks) — 1 of 3 done · now: Running the tests" in done.stderr
    [result] = tool_results(model.requests[1])
    assert result["tool_use_id"] == "toolu_plan" and not result.get("is_error")
    assert result["content"].startswith("Task list updated: 1 of 3 done")
    manifest = {tool["name"]: tool for tool in model.requests[0].tools}
    assert "TodoWrite" in manifest and "TodoWrite" in model.requests[0].system[0]["text"]


def test_plan_mode_allows_the_task_list(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(tool_use("TodoWrite", {"todos": PLAN})), reply(text("Here is the plan.")))

    done = run_agent("plan the work", permission_mode="plan")

    assert done.returncode == 0, done.stderr
    assert not tool_results(model.requests[1])[0].get("is_error")


def test_an_invalid_list_comes_back_as_an_error_the_model_can_fix(run_agent: RunAgent, model: ScriptedModel) -> None:
    two_at_once = [{**task, "status": "in_progress"} for task in PLAN[:2]]
    model.script(
        reply(tool_use("TodoWrite", {"todos": two_at_once})),
        reply(tool_use("TodoWrite", {"todos": PLAN})),
        reply(text("Planned.")),
    )

    done = run_agent("plan it")

    assert done.returncode == 0, done.stderr
    [refused] = tool_results(model.requests[1])
    assert refused["is_error"] is True
    assert "only one task may be in_progress at a time" in refused["content"]
    assert "✗ TodoWrite(2 tasks)" in done.stderr and "● TodoWrite(3 tasks)" in done.stderr


def test_after_auto_compaction_the_new_conversation_carries_the_task_list(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    two_files_compacting_at_the_second_read(run_agent, model, project)
    model.script(
        reply(tool_use("TodoWrite", {"todos": PLAN})),
        reply(tool_use("Read", {"file_path": "one.txt"})),
        reply(tool_use("Read", {"file_path": "two.txt"})),
        reply(text("SUMMARY: read both files.")),
        reply(text("Both files hold digits.")),
    )

    done = run_agent("read one.txt and two.txt, with a plan")

    assert done.returncode == 0, done.stderr
    assert "Auto-compacted" in done.stderr
    before = model.requests[1:4]
    assert all(TASKS_REMINDER not in json.dumps(r.messages) for r in before)  # the model wrote it itself
    after = model.requests[-1].messages
    assert len(after) == 1
    reminder = next(b["text"] for b in after[0]["content"] if TASKS_REMINDER in b.get("text", ""))
    assert reminder.startswith("<system-reminder>")
    assert "1. [completed] Find the bug\n2. [in_progress] Run the tests\n3. [pending] Update the README" in reminder


def test_continue_restores_the_task_list_without_repeating_it(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path
) -> None:
    model.script(reply(tool_use("TodoWrite", {"todos": PLAN})), reply(text("Started.")), reply(text("Going on.")))
    assert run_agent("plan it").returncode == 0
    [path] = transcript_files(home, project)
    assert [r["todos"] for r in records(path) if "todos" in r] == [PLAN]

    done = run_agent("go on", continue_session=True)

    assert done.returncode == 0, done.stderr
    assert TASKS_REMINDER not in json.dumps(model.requests[-1].messages[-1])


def test_the_repl_draws_the_checklist_says_the_task_in_progress_and_lists_it_again(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    fake_api.script(
        fake.reply(fake.text("Planning."), fake.tool_use("TodoWrite", {"todos": PLAN})),
        fake.reply(fake.text("Tests pass."), delay=0.4),
    )
    repl = start_repl()

    repl.submit("fix the bug, test it and document it")

    screen = repl.wait_for("Running the tests…")  # the spinner says the task in progress
    screen = repl.wait_for_prompt("Tests pass.")  # the turn is over: what is typed now is the next message
    assert "● TodoWrite(3 tasks)" in screen
    assert "⎿ ☒ Find the bug" in screen and "◼ Run the tests" in screen and "☐ Update the README" in screen

    repl.submit("/todos")
    screen = repl.wait_for_prompt("Tasks (1 of 3 done · now: Running the tests):")
    assert screen.count("☐ Update the README") == 2
    assert len(fake_api.requests) == 2  # /todos is local


def test_a_continued_repl_session_has_its_task_list_back(
    run_agent: RunAgent, model: ScriptedModel, start_repl: StartRepl
) -> None:
    model.script(reply(tool_use("TodoWrite", {"todos": PLAN})), reply(text("Started.")))
    assert run_agent("plan it").returncode == 0
    repl = start_repl("-c")

    repl.submit("/todos")

    screen = repl.wait_for_prompt("Tasks (1 of 3 done · now: Running the tests):")
    assert "◼ Run the tests" in screen and "☐ Update the README" in screen
    repl.submit("/clear")
    repl.submit("/todos")
    repl.wait_for("No tasks: the model keeps a task list")
