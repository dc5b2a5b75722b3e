"""AskUserQuestion in-process: the model's questions reach the user through the front end's
`AsksTheUser` (here the REPL's picker state, driven by keys), and what the model reads back is
Claude Code's answer format; declined, invalid, unanswerable (agentcli run) and sub-agents'
questions are error results the model can act on."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.contracts import JSON
from agentcli.providers.scripted import Block, Reply, ScriptedModel, reply, text, tool_use
from agentcli.session import Session, SessionOptions
from agentcli.tools.ask_user import AskUserQuestionTool
from agentcli.ui.question_form import QuestionForm, QuestionFormView
from tests.ask_helpers import DOWN, ENTER, ESC, SPACE, UP, ScriptedUser, Typed, names, question, results
from tests.conftest import RunAgent
from tests.fake_anthropic import validation_error
from tests.session_helpers import records, transcript_files
from tests.ui.helpers import make_console, output

LIBRARY = question("Which HTTP library should the client use?", "Library", "httpx", "requests")
TESTS = question("Which tests should cover it?", "Tests", "Unit", "Integration", "End-to-end", multi=True)
FOLLOW_UP = "You can now continue with the user's answers in mind."


def ask(*questions: JSON, id: str = "toolu_ask") -> Block:
    return tool_use("AskUserQuestion", {"questions": list(questions)}, id=id)


def asked_in_session(project: Path, user: ScriptedUser, *questions: JSON) -> tuple[ScriptedModel, JSON]:
    """One turn in which the model asks `questions`, then answers; the model and the call's result."""
    model = ScriptedModel(reply(ask(*questions)), reply(text("Noted.")), check=validation_error)
    with Session(SessionOptions(), project, lambda event: None, model=model, ask_user=user) as session:
        assert session.send("set up the client").text == "Noted."
    return model, results(model.requests[1])["toolu_ask"]


@pytest.mark.usefixtures("in_process_env")
def test_single_select_answers_with_the_label_picked_in_claude_codes_format(project: Path) -> None:
    user = ScriptedUser(keys=[DOWN, DOWN, DOWN, UP, ENTER])  # down stops at Other (third); up: requests

    _, result = asked_in_session(project, user, LIBRARY)

    assert result.get("is_error") is not True
    assert result["content"] == (
        f'User has answered your questions: "Which HTTP library should the client use?"="requests". {FOLLOW_UP}'
    )
    [request] = user.asked
    assert [o.label for o in request.questions[0].options] == ["httpx", "requests"] and request.agent == ""


@pytest.mark.usefixtures("in_process_env")
def test_two_questions_one_multi_select_are_answered_in_order(project: Path) -> None:
    # Library: "1" picks httpx at once. Tests: Space checks Unit, "3" checks End-to-end, Enter confirms.
    user = ScriptedUser(keys=["1", SPACE, "3", ENTER])

    _, result = asked_in_session(project, user, LIBRARY, TESTS)

    assert result["content"] == (
        'User has answered your questions: "Which HTTP library should the client use?"="httpx", '
        f'"Which tests should cover it?"="Unit, End-to-end". {FOLLOW_UP}'
    )


@pytest.mark.usefixtures("in_process_env")
def test_other_takes_the_users_own_words_and_an_empty_line_goes_back_to_the_question(project: Path) -> None:
    # Other is option 3 (after the two): first an empty line (back to the question), then words.
    user = ScriptedUser(keys=["3", Typed(""), DOWN, DOWN, ENTER, Typed("the standard library's urllib")])

    _, result = asked_in_session(project, user, LIBRARY)

    assert '"Which HTTP library should the client use?"="the standard library\'s urllib"' in result["content"]


@pytest.mark.usefixtures("in_process_env")
def test_other_beside_checked_options_in_a_multi_select(project: Path) -> None:
    user = ScriptedUser(keys=["2", "4", ENTER, Typed("fuzzing")])  # Integration, and Other (4th)

    _, result = asked_in_session(project, user, TESTS)

    assert '"Which tests should cover it?"="Integration, fuzzing"' in result["content"]


@pytest.mark.usefixtures("in_process_env")
def test_enter_with_nothing_checked_takes_the_highlighted_option(project: Path) -> None:
    user = ScriptedUser(keys=[DOWN, ENTER])

    _, result = asked_in_session(project, user, TESTS)

    assert '"Which tests should cover it?"="Integration"' in result["content"]


@pytest.mark.usefixtures("in_process_env")
def test_esc_declines_and_the_model_is_told_to_stop_and_wait(project: Path) -> None:
    user = ScriptedUser(keys=["1", ESC])  # the first question answered, then Esc on the second

    _, result = asked_in_session(project, user, LIBRARY, TESTS)

    assert result["is_error"] is True
    assert "declined to answer" in result["content"] and "wait for the user" in result["content"]
    assert "httpx" not in result["content"]  # a declined call answers nothing


@pytest.mark.parametrize(
    ("questions", "says"),
    [
        ([], "between one and 4 questions"),
        (
            [
                LIBRARY,
                TESTS,
                question("a?", "A", "x", "y"),
                question("b?", "B", "x", "y"),
                question("c?", "C", "x", "y"),
            ],
            "not 5",
        ),
        ([question("Which one?", "One", "only")], "has 1 option, so it was not shown"),
        ([question("Which one?", "One", "a", "b", "c", "d", "e")], "has 5 options; give two to four"),
        ([question("Which one?", "One", "same", "same")], "two options with the same label"),
        ([LIBRARY, LIBRARY], "question 2 repeats an earlier question"),
        ([{**LIBRARY, "header": " "}], "needs a short `header`"),
        ([{**LIBRARY, "multiSelect": "yes"}], "must be of type boolean"),
        ([{**LIBRARY, "options": [{"label": "httpx"}, {"label": "requests"}]}], "missing required field"),
    ],
    ids=[
        "none",
        "five",
        "one-option",
        "five-options",
        "same-labels",
        "same-questions",
        "blank-header",
        "multi",
        "no-description",
    ],
)
@pytest.mark.usefixtures("in_process_env")
def test_invalid_questions_are_an_error_the_model_can_act_on_and_nothing_is_shown(
    project: Path, questions: list[JSON], says: str
) -> None:
    user = ScriptedUser()

    _, result = asked_in_session(project, user, *questions)

    assert result["is_error"] is True and says in result["content"]
    assert "AskUserQuestion" in result["content"] and ("call it again" in result["content"])
    assert user.asked == []


@pytest.mark.usefixtures("in_process_env")
def test_the_answers_are_in_the_transcript_and_sent_again_after_a_resume(project: Path, home: Path) -> None:
    user = ScriptedUser(keys=["2"])
    _, result = asked_in_session(project, user, LIBRARY)

    [path] = transcript_files(home, project)
    [recorded] = [
        block
        for line in records(path)
        if line["type"] == "message" and isinstance(line["message"]["content"], list)
        for block in line["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    assert recorded == result and '"Which HTTP library should the client use?"="requests"' in recorded["content"]
    model = ScriptedModel(reply(text("Going on with requests.")), check=validation_error)
    with Session(SessionOptions(continue_session=True), project, lambda event: None, model=model) as resumed:
        resumed.send("go on")
    sent_again = [b for m in model.requests[0].messages for b in m["content"] if b.get("type") == "tool_result"]
    assert sent_again == [recorded]


@pytest.mark.usefixtures("in_process_env")
def test_in_plan_mode_the_model_may_ask_without_a_permission_question(project: Path) -> None:
    model = ScriptedModel(reply(ask(LIBRARY)), reply(text("Noted.")), check=validation_error)
    user = ScriptedUser(keys=["1"])
    options = SessionOptions(permission_mode="plan")

    with Session(options, project, lambda event: None, model=model, prompter=user, ask_user=user) as session:
        session.send("plan the client")

    assert user.permissions == [] and len(user.asked) == 1
    assert '="httpx"' in results(model.requests[1])["toolu_ask"]["content"]


def test_in_agentcli_run_no_one_can_answer_and_the_model_goes_on(model: ScriptedModel, run_agent: RunAgent) -> None:
    model.script(reply(ask(LIBRARY)), reply(text("I chose httpx.")))

    done = run_agent("set up the client")

    assert done.returncode == 0 and done.stdout == "I chose httpx.\n"
    result = results(model.requests[1])["toolu_ask"]
    assert result["is_error"] is True
    assert "No one can answer" in result["content"] and "Make the choice yourself" in result["content"]


REVIEWER = "---\nname: reviewer\ndescription: Reviews changes.\ntools: Read, AskUserQuestion\n---\nReview.\n"


def reviewer_asks(project: Path) -> list[Reply]:
    """The script of a turn in which a `reviewer` sub-agent (whose definition names AskUserQuestion) asks."""
    (project / ".agentcli" / "agents").mkdir(parents=True)
    (project / ".agentcli" / "agents" / "reviewer.md").write_text(REVIEWER)
    task = {"description": "review", "prompt": "review the change", "subagent_type": "reviewer"}
    return [
        reply(tool_use("Task", task, id="toolu_task")),
        reply(ask(LIBRARY, id="toolu_sub_ask")),
        reply(text("Reviewed with the user's library.")),
        reply(text("Done.")),
    ]


@pytest.mark.usefixtures("in_process_env")
def test_a_sub_agent_that_names_the_tool_asks_the_user_and_says_who_asks(project: Path) -> None:
    model = ScriptedModel(*reviewer_asks(project), check=validation_error)
    user = ScriptedUser(keys=["1"])

    with Session(SessionOptions(), project, lambda event: None, model=model, ask_user=user) as session:
        session.send("review it")

    assert names(model.requests[1].tools) == ["Read", "AskUserQuestion"]
    [request] = user.asked
    assert request.agent == "reviewer"
    result = results(model.requests[2])["toolu_sub_ask"]
    assert result.get("is_error") is not True and '="httpx"' in result["content"]
    console = make_console(terminal=True, width=100)
    console.print(QuestionFormView(QuestionForm(request)))
    assert "reviewer asks · Library" in output(console)


def test_a_sub_agents_question_in_agentcli_run_is_the_same_error(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    model.script(*reviewer_asks(project))

    assert run_agent("review it").returncode == 0

    result = results(model.requests[2])["toolu_sub_ask"]
    assert result["is_error"] is True and "No one can answer" in result["content"]


def test_the_schema_is_claude_codes() -> None:
    schema = AskUserQuestionTool(None).input_schema
    assert schema["required"] == ["questions"]
    questions = schema["properties"]["questions"]
    assert (questions["minItems"], questions["maxItems"]) == (1, 4)
    item = questions["items"]
    assert sorted(item["properties"]) == ["header", "multiSelect", "options", "question"]
    assert item["required"] == ["question", "header", "options"]
    assert item["properties"]["multiSelect"]["default"] is False
    options = item["properties"]["options"]
    assert (options["minItems"], options["maxItems"]) == (2, 4)
    assert sorted(options["items"]["properties"]) == ["description", "label"]
    assert options["items"]["required"] == ["label", "description"]
