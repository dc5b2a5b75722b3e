"""What `agentcli run` shows of sub-agents: named progress lines on stderr, stream-json messages
tied to their Task call, and a final report that is the main agent's alone.

The sub-agent is `tests.subagent_double.FakeTask`, which emits what the sub-agent runner emits."""

from __future__ import annotations

import json

import pytest

from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent
from tests.subagent_double import Step, install, script

MAIN_USAGE = {"input_tokens": 300, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


@pytest.fixture(autouse=True)
def fake_task(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch.setattr)


def explore(*steps: Step, description: str = "find the config loader") -> dict[str, str]:
    return {"description": description, "prompt": script(*steps), "subagent_type": "Explore"}


def task_then_answer(model: ScriptedModel, task: dict[str, str], answer: str = "It is in config.py.") -> None:
    model.script(
        reply(tool_use("Task", task, id="toolu_task1"), usage=MAIN_USAGE),
        reply(text(answer), usage=MAIN_USAGE),
    )


FOUND: tuple[Step, ...] = (
    {"call": "Grep", "input": {"pattern": "load_config"}, "summary": "Found 2 files"},
    {"say": "load_config is defined in config.py:12."},
)


def test_a_sub_agents_progress_lines_carry_its_name_and_stdout_is_the_main_answer(
    run_agent: RunAgent, model: ScriptedModel
) -> None:
    task_then_answer(model, explore(*FOUND))

    done = run_agent("where is the config loaded?")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is in config.py.\n"
    lines = done.stderr.splitlines()
    assert "[Explore] ● Grep(load_config) — Found 2 files" in lines
    assert "[Explore] done · 2 turns · 1 tool call · 10k tokens" in lines
    assert "● Task(find the config loader) — Done" in lines  # the main agent's own line, unprefixed
    assert (
        "load_config is defined" not in done.stderr + done.stdout
    )  # the sub-agent's answer went to the main agent only


def test_a_sub_agent_that_fails_says_why_on_its_line(run_agent: RunAgent, model: ScriptedModel) -> None:
    task_then_answer(model, explore(FOUND[0], {"fail": "it reached its turn limit (50)"}), "It failed.")

    done = run_agent("where is the config loaded?")

    assert done.returncode == 0, done.stderr
    assert "[Explore] ✗ it reached its turn limit (50) · 1 turn · 1 tool call · 5.1k tokens" in done.stderr.splitlines()


def test_stream_json_ties_a_sub_agents_messages_to_its_task_call(run_agent: RunAgent, model: ScriptedModel) -> None:
    task_then_answer(model, explore(*FOUND))

    done = run_agent("where is the config loaded?", output_format="stream-json")

    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    messages = [(m["type"], m["parent_tool_use_id"], m["message"]["content"][0]) for m in lines[1:-1]]
    assert [(kind, parent, block["type"]) for kind, parent, block in messages] == [
        ("assistant", None, "tool_use"),  # the main agent's Task call
        ("assistant", "toolu_task1", "tool_use"),  # the sub-agent's Grep
        ("user", "toolu_task1", "tool_result"),
        ("assistant", "toolu_task1", "text"),  # its final answer
        ("user", None, "tool_result"),  # the Task call's result, back in the main conversation
        ("assistant", None, "text"),
    ]
    assert messages[1][2]["name"] == "Grep"
    assert messages[4][2]["tool_use_id"] == "toolu_task1"
    assert all(m["session_id"] == lines[0]["session_id"] for m in lines[1:-1])
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "It is in config.py."


def test_json_reports_the_main_answer_and_counts_the_sub_agents_usage_once(
    run_agent: RunAgent, model: ScriptedModel
) -> None:
    task_then_answer(model, explore(*FOUND))

    done = run_agent("where is the config loaded?", output_format="json")

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "It is in config.py." and result["num_turns"] == 2
    # The stand-in does not add its usage to the session's (the real runner does): what the
    # report shows is the session's usage, not the session's plus SubagentFinished's again.
    assert result["usage"] == {name: 2 * tokens for name, tokens in MAIN_USAGE.items()}
