"""The model's questions and plans in a real terminal: the AskUserQuestion picker (arrows, Space,
Other with free text) and ExitPlanMode's plan, rendered as Markdown, approved with edits accepted.
The rest (Esc, invalid input, keep planning, sub-agents) is tested in-process."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import StartRepl
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use


def test_the_picker_answers_two_questions_and_leaves_only_the_answers(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    options = [{"label": "httpx", "description": "Async and sync."}, {"label": "requests", "description": "Familiar."}]
    tests = [{"label": "Unit", "description": "Fast."}, {"label": "Integration", "description": "Real server."}]
    questions = [
        {"question": "Which HTTP library?", "header": "Library", "options": options, "multiSelect": False},
        {"question": "Which tests?", "header": "Tests", "options": tests, "multiSelect": True},
    ]
    fake_api.script(reply(tool_use("AskUserQuestion", {"questions": questions})), reply(text("Noted both.")))
    repl = start_repl()

    repl.submit("set up the client")
    screen = repl.wait_for("3. Other")  # the picker's last line: on a busy machine it may come in a later read
    assert "Library · 1 of 2" in screen and "Which HTTP library?" in screen and "❯ 1. httpx" in screen
    repl.press("down", "enter")  # requests
    screen = repl.wait_for("Tests · 2 of 2")
    assert "✓ Library · requests" in screen and "[ ] Integration" in screen
    repl.press(" ", "3")  # check Unit, then Other
    repl.wait_for("[✓] Other")
    repl.press("enter")
    repl.wait_for("Your answer")
    repl.submit("fuzzing")

    screen = repl.wait_for_prompt("Noted both.")
    assert "● AskUserQuestion(Library, Tests)" in screen
    assert "⎿ Library: requests" in screen and "Tests: Unit, fuzzing" in screen
    assert "2 of 2" not in screen and "Your answer" not in screen  # the picker is gone
    [result] = fake_api.requests[1].body["messages"][-1]["content"]
    assert result["content"] == (
        'User has answered your questions: "Which HTTP library?"="requests", "Which tests?"="Unit, fuzzing". '
        "You can now continue with the user's answers in mind."
    )


def test_an_approved_plan_switches_to_accept_edits_and_the_work_starts(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    plan = "## Add a greeting\n\n1. Write **greet.py**\n2. Run it"
    fake_api.script(
        reply(text("I have a plan."), tool_use("ExitPlanMode", {"plan": plan})),
        reply(tool_use("Write", {"file_path": "greet.py", "content": "print('hi')\n"})),
        reply(text("Written.")),
    )
    repl = start_repl("--permission-mode", "plan")
    repl.wait_for("plan (shift-tab)")

    repl.submit("add a greeting")
    screen = repl.wait_for("Would you like to proceed with this plan?")
    assert "Add a greeting" in screen and "## Add" not in screen and "**" not in screen  # Markdown, rendered
    assert "❯ 1. Yes, and accept edits" in screen and "3. No, keep planning" in screen
    repl.press("1")

    screen = repl.wait_for_prompt("Written.")
    assert "● ExitPlanMode(Add a greeting)" in screen and "Plan approved · edits accepted from now on" in screen
    assert "Do you want to proceed?" not in screen  # the Write was not asked about
    assert "Would you like to proceed" not in screen and "Add a greeting" in screen  # the plan stays above
    repl.wait_for("acceptEdits (shift-tab)")
    assert (project / "greet.py").read_text() == "print('hi')\n"
    assert "approved your plan" in json.dumps(fake_api.requests[1].body["messages"][-1])


def test_esc_on_the_picker_declines_the_question_and_the_turn_goes_on(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    options = [{"label": "httpx", "description": "Async and sync."}, {"label": "requests", "description": "Familiar."}]
    question = {"question": "Which HTTP library?", "header": "Library", "options": options, "multiSelect": False}
    fake_api.script(reply(tool_use("AskUserQuestion", {"questions": [question]})), reply(text("I will wait.")))
    repl = start_repl()

    repl.submit("set up the client")
    repl.wait_for("❯ 1. httpx")
    repl.press("esc")

    screen = repl.wait_for_prompt("I will wait.")  # Esc answered the question; it did not interrupt the turn
    assert "Interrupted" not in screen and "Which HTTP library?" not in screen
    [result] = fake_api.requests[1].body["messages"][-1]["content"]
    assert result["is_error"] is True and "declined to answer" in result["content"]
