"""`agentcli run --input-format stream-json`: a program sends user messages as JSON lines, all in
one session, and reads the answers as stream-json; `--permission-prompt-tool` lets its MCP tool
answer the permission questions."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.conftest import RunMain
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.mcp.helpers import write_config

STREAM = ("run", "--input-format", "stream-json", "--output-format", "stream-json")
GATEKEEPER = Path(__file__).parent / "mcp" / "prompt_tool_server.py"


def said(content: Any) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}}) + "\n"


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_each_line_is_a_turn_of_one_session_and_a_bad_line_is_reported_and_skipped(
    run_main: RunMain, fake_api: FakeAnthropic
) -> None:
    fake_api.script(reply(text("First.")), reply(text("Second.")), reply(text("Third.")))
    stdin = "".join(
        [
            said("one"),
            '{"type": "user", "message": \n',  # cut off
            said([{"type": "text", "text": "two"}]),
            json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "no"}}) + "\n",
            said([{"type": "image", "source": {}}]),
            "\n",
            said("three"),
        ]
    )

    done = run_main(*STREAM, input=stdin)

    assert done.returncode == 0, done.stderr
    out = lines(done.stdout)
    assert [line["type"] for line in out].count("system") == 4  # init, then three refused lines
    assert out[0]["subtype"] == "init"
    errors = [line for line in out if line.get("subtype") == "input_error"]
    assert [error["line"] for error in errors] == [2, 4, 5]
    assert "not JSON" in errors[0]["error"] and "Only text content blocks" in errors[2]["error"]
    results = [line for line in out if line["type"] == "result"]
    assert [result["result"] for result in results] == ["First.", "Second.", "Third."]
    assert {result["session_id"] for result in results} == {out[0]["session_id"]}
    third = fake_api.requests[2].body["messages"]
    assert json.dumps(third).count('"First."') == 1 and "Second." in json.dumps(third)  # one conversation


def test_a_prompt_argument_or_another_output_format_is_a_usage_error(run_main: RunMain) -> None:
    with_prompt = run_main(*STREAM, "hello", input=said("hi"))
    text_out = run_main("run", "--input-format", "stream-json", input=said("hi"))

    assert with_prompt.returncode == 2 and "not PROMPT" in with_prompt.stderr
    assert text_out.returncode == 2 and "--output-format stream-json" in text_out.stderr


def test_the_prompt_tool_allows_and_denies_and_cannot_change_the_call(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path
) -> None:
    write_config(project / "gate.json", gatekeeper={"command": sys.executable, "args": [str(GATEKEEPER)]})
    fake_api.script(
        reply(tool_use("Bash", {"command": "echo allowed > allowed.txt"}, id="toolu_1")),
        reply(text("Echoed.")),
        reply(tool_use("Bash", {"command": "touch denied.txt"}, id="toolu_2")),
        reply(text("Denied.")),
        reply(tool_use("Bash", {"command": "rewrite > rewritten.txt"}, id="toolu_3")),
        reply(text("Not rewritten.")),
    )
    options = ("--mcp-config", str(project / "gate.json"), "--permission-prompt-tool", "mcp__gatekeeper__approve")

    done = run_main(*STREAM, *options, input=said("echo") + said("touch") + said("rewrite"))

    assert done.returncode == 0, done.stderr
    assert (project / "allowed.txt").read_text() == "allowed\n"
    assert not (project / "denied.txt").exists() and not (project / "rewritten.txt").exists()
    results = [json.dumps(request.body["messages"][-1]) for request in fake_api.requests[1::2]]
    assert "is not an echo" in results[1]
    assert "changed the call's input" in results[2]


def test_the_prompt_tool_answers_the_models_questions_and_reviews_its_plan(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path
) -> None:
    write_config(project / "gate.json", gatekeeper={"command": sys.executable, "args": [str(GATEKEEPER)]})
    question = {
        "question": "Which database?",
        "header": "Database",
        "options": [
            {"label": "Postgres", "description": "the usual"},
            {"label": "SQLite", "description": "a file"},
        ],
        "multiSelect": False,
    }
    fake_api.script(
        reply(tool_use("AskUserQuestion", {"questions": [question]}, id="toolu_ask")),
        reply(text("Postgres it is.")),
        reply(tool_use("ExitPlanMode", {"plan": "1. Add the table."}, id="toolu_plan")),
        reply(text("I will add the tests step.")),
    )
    options = ("--mcp-config", str(project / "gate.json"), "--permission-prompt-tool", "mcp__gatekeeper__approve")

    asked = run_main(*STREAM, *options, input=said("pick a database"))
    planned = run_main(*STREAM, *options, "--permission-mode", "plan", input=said("plan the table"))

    assert asked.returncode == 0 and planned.returncode == 0, asked.stderr + planned.stderr
    answered = json.dumps(fake_api.requests[1].body["messages"][-1])
    assert "Which database?" in answered and "Postgres" in answered and '"is_error": true' not in answered
    reviewed = json.dumps(fake_api.requests[3].body["messages"][-1])
    assert "Add a step that runs the tests." in reviewed
