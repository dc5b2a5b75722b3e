"""What `agentcli run` shows of sub-agents: named progress lines on stderr, stream-json messages
tied to their Task call, and a final report that is the main agent's alone.

The sub-agent is the real Task tool's, its conversation scripted in the model double after the
main agent's Task call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.providers.scripted import Reply, ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent

TURN = {"input_tokens": 3000, "output_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 2000}
"""Each turn's usage, the main agent's and the sub-agent's: 5.1k tokens."""
TASK = {"description": "find the config loader", "prompt": "Where is load_config?", "subagent_type": "Explore"}


@pytest.fixture(autouse=True)
def code(project: Path) -> None:
    (project / "config.py").write_text("def load_config():\n    pass\n")
    (project / "app.py").write_text("load_config()\n")


def task_then_answer(model: ScriptedModel, *sub_agent: Reply, answer: str = "It is in config.py.") -> None:
    """The main agent's Task call, the sub-agent's turns, the main agent's answer."""
    model.script(
        reply(tool_use("Task", TASK, id="toolu_task1"), usage=TURN),
        *sub_agent,
        reply(text(answer), usage=TURN),
    )


FOUND = (
    reply(tool_use("Grep", {"pattern": "load_config"}, id="toolu_grep"), usage=TURN),
    reply(text("load_config is defined in config.py:1."), usage=TURN),
)


def test_a_sub_agents_progress_lines_carry_its_name_and_stdout_is_the_main_answer(
    run_agent: RunAgent, model: ScriptedModel
) -> None:
    task_then_answer(model, *FOUND)

    done = run_agent("where is the config loaded?")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is in config.py.\n"
    lines = done.stderr.splitlines()
    assert "[Explore] ● Grep(load_config) — Found 2 files" in lines
    assert "[Explore] done · 2 turns · 1 tool call · 10k tokens" in lines
    assert any(line.startswith("● Task(find the config loader) — Explore: 2 turns") for line in lines)  # unprefixed
    assert "load_config is defined" not in done.stderr + done.stdout  # the sub-agent's answer went to the main agent


def test_a_sub_agent_that_hits_its_turn_limit_says_why_on_its_line(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    agents = project / ".agentcli" / "agents"
    agents.mkdir(parents=True)
    (agents / "finder.md").write_text("---\nname: finder\ndescription: Finds.\nmaxTurns: 1\n---\nFind it.\n")
    model.script(
        reply(tool_use("Task", {**TASK, "subagent_type": "finder"}, id="toolu_task1"), usage=TURN),
        FOUND[0],
        reply(text("It failed."), usage=TURN),
    )

    done = run_agent("where is the config loaded?")

    assert done.returncode == 0, done.stderr
    assert (
        "[finder] ✗ it reached its turn limit (1 turns; `maxTurns` in an agent definition) · 1 turn · 0 tool calls"
        " · 5.1k tokens" in done.stderr.splitlines()
    )


def test_stream_json_ties_a_sub_agents_messages_to_its_task_call(run_agent: RunAgent, model: ScriptedModel) -> None:
    task_then_answer(model, *FOUND)

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
    assert messages[2][2]["content"] == "app.py\nconfig.py"
    assert messages[4][2]["tool_use_id"] == "toolu_task1"
    assert messages[4][2]["content"].startswith("load_config is defined in config.py:1.\n\n[Explore sub-agent: 2 turns")
    assert all(m["session_id"] == lines[0]["session_id"] for m in lines[1:-1])
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "It is in config.py."


def test_json_reports_the_main_answer_and_counts_the_sub_agents_usage_once(
    run_agent: RunAgent, model: ScriptedModel
) -> None:
    task_then_answer(model, *FOUND)

    done = run_agent("where is the config loaded?", output_format="json")

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "It is in config.py." and result["num_turns"] == 2
    # Four turns in all, two of them the sub-agent's: each counted once.
    assert result["usage"] == {name: 4 * tokens for name, tokens in TURN.items()}
