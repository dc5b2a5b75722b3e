"""How `agentcli run` drives the loop: tool calls and their results, limits, stop reasons, output formats.

In-process (`run_once` with the scripted model); the wire format and the command line itself
are tested end to end in test_run.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.contracts import JSON
from agentcli.errors import TransientModelError
from agentcli.providers.scripted import ScriptedModel, reply, text, thinking, tool_use
from tests.conftest import RunAgent


def tool_results(model: ScriptedModel, request: int) -> list[JSON]:
    """The tool_result blocks of the last message of request number `request`."""
    content = model.requests[request].messages[-1]["content"]
    return [block for block in content if block["type"] == "tool_result"]


def test_three_calls_in_one_turn_are_answered_in_one_message_in_order(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    for name in ("a", "b", "c"):
        (project / f"{name}.txt").write_text(f"file {name}\n")
    model.script(
        reply(
            tool_use("Read", {"file_path": "c.txt"}, id="toolu_c"),
            tool_use("Read", {"file_path": "a.txt"}, id="toolu_a"),
            tool_use("Grep", {"pattern": "file b", "output_mode": "content"}, id="toolu_b"),
        ),
        reply(text("ok")),
    )

    done = run_agent("read them")

    assert done.returncode == 0, done.stderr
    message = model.requests[1].messages[-1]
    assert message["role"] == "user"
    assert [b["tool_use_id"] for b in message["content"]] == ["toolu_c", "toolu_a", "toolu_b"]
    assert "file c" in message["content"][0]["content"]
    assert "b.txt:1:file b" in message["content"][2]["content"]
    assert done.stderr.count("● ") == 3


def test_unknown_tool_and_invalid_input_are_error_results(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(
        reply(
            tool_use("Teleport", {"to": "mars"}, id="toolu_1"),
            tool_use("Read", {"path": "x.txt"}, id="toolu_2"),
            tool_use("Read", {"file_path": 42}, id="toolu_3"),
        ),
        reply(text("sorry")),
    )

    done = run_agent("go")

    assert done.returncode == 0, done.stderr
    unknown, missing, wrong_type = tool_results(model, 1)
    assert unknown["is_error"] is True
    assert "Unknown tool 'Teleport'" in str(unknown["content"]) and "Read" in str(unknown["content"])
    assert missing["is_error"] is True and "`file_path`" in str(missing["content"])
    assert wrong_type["is_error"] is True and "`file_path` must be of type string" in str(wrong_type["content"])
    assert "Traceback" not in done.stderr


def test_max_turns_stops_with_exit_1_naming_the_limit(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(
        reply(tool_use("Grep", {"pattern": "one"})),
        reply(tool_use("Grep", {"pattern": "two"})),
        reply(text("never reached")),
    )

    done = run_agent("search", max_turns=2, output_format="json")

    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["subtype"] == "error_max_turns"
    assert result["is_error"] is True
    assert "--max-turns 2" in result["result"]
    assert len(model.requests) == 2


def test_no_progress_stops_repeated_identical_calls(run_agent: RunAgent, model: ScriptedModel) -> None:
    same = {"pattern": "needle"}
    model.script(*[reply(tool_use("Grep", same)) for _ in range(6)])

    done = run_agent("find the needle")

    assert done.returncode == 1
    assert "No progress" in done.stderr and "4 times in a row" in done.stderr
    assert len(model.requests) == 4


def test_no_progress_stops_a_streak_of_errors(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(*[reply(tool_use("Read", {"file_path": f"missing{i}.txt"})) for i in range(8)])

    done = run_agent("read")

    assert done.returncode == 1
    assert "6 tool calls in a row failed" in done.stderr


def test_tool_call_cut_off_by_max_tokens_is_retried_larger_and_never_run(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    model.script(
        reply(text("Writing."), tool_use("Bash", {"command": "touch cut.txt"}, partial=True)),
        reply(text("All done.")),
    )

    done = run_agent("make a file", permission_mode="bypassPermissions")

    assert done.returncode == 0, done.stderr
    assert not (project / "cut.txt").exists()
    first, second = model.requests
    assert second.max_tokens > first.max_tokens
    assert second.messages == first.messages  # the partial turn was discarded
    assert "cut off" in done.stderr
    assert done.stdout == "All done.\n"


def test_tool_call_cut_off_twice_is_dropped_and_the_model_told(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    cut = reply(tool_use("Bash", {"command": "touch cut.txt"}, partial=True))
    model.script(cut, cut, reply(text("Smaller steps then.")))

    done = run_agent("make a file", permission_mode="bypassPermissions")

    assert done.returncode == 0, done.stderr
    assert not (project / "cut.txt").exists()
    last = json.dumps(model.requests[2].messages[-1])
    assert "cut off at the output token limit" in last
    assert "not run" in done.stderr


def test_text_cut_off_by_max_tokens_is_shown_and_the_user_told(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(text("The answer begins and then"), stop_reason="max_tokens"))

    done = run_agent("explain")

    assert done.returncode == 0
    assert done.stdout == "The answer begins and then\n"
    assert "cut off at the output token limit" in done.stderr


def test_pause_turn_is_resent_as_is(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(text("Working on it"), stop_reason="pause_turn"), reply(text("Finished.")))

    done = run_agent("long task")

    assert done.returncode == 0, done.stderr
    second = model.requests[1].messages
    assert second[-1]["role"] == "assistant"
    assert second[-1]["content"][0]["text"] == "Working on it"
    assert done.stdout == "Finished.\n"


def test_refusal_is_reported(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(text("I can't help with that."), stop_reason="refusal"))

    done = run_agent("something bad")

    assert done.returncode == 1
    assert "declined" in done.stderr


def test_stop_sequence_ends_normally(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(text("Up to the stop"), stop_reason="stop_sequence"))

    done = run_agent("go")

    assert done.returncode == 0
    assert done.stdout == "Up to the stop\n"


def test_context_window_exceeded_is_reported(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(text("partial"), stop_reason="model_context_window_exceeded"))

    done = run_agent("go")

    assert done.returncode == 1
    assert "context window" in done.stderr


def test_token_budget_stops_the_run(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(
        reply(tool_use("Grep", {"pattern": "a"}), usage={"input_tokens": 900, "output_tokens": 200}),
        reply(text("never")),
    )

    done = run_agent("go", max_budget_tokens=1000, output_format="json")

    assert done.returncode == 1
    assert "budget" in json.loads(done.stdout)["result"]
    assert len(model.requests) == 1


def test_stream_failures_give_up_after_a_few_retries(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(*[TransientModelError("the stream reported an error: Overloaded") for _ in range(5)])

    done = run_agent("hi")

    assert done.returncode == 1
    assert len(model.requests) == 4
    assert done.stderr.count("retrying in 0s") == 3  # the delay run_agent injects, not the default
    assert "Overloaded (still failing after 3 retries)" in done.stderr and "Traceback" not in done.stderr


def test_json_output_shape(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(tool_use("Grep", {"pattern": "x"})), reply(text("Answer.")))

    done = run_agent("hi", output_format="json")

    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert set(result) == {
        "type",
        "subtype",
        "result",
        "is_error",
        "session_id",
        "num_turns",
        "duration_ms",
        "usage",
        "total_cost_usd",
    }
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["result"] == "Answer." and result["is_error"] is False
    assert result["num_turns"] == 2
    assert result["usage"]["output_tokens"] > 0
    assert result["total_cost_usd"] > 0


def test_stream_json_output_shape(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    model.script(reply(tool_use("Grep", {"pattern": "x"}, id="toolu_g")), reply(text("Answer.")))

    done = run_agent("hi", output_format="stream-json")

    assert done.returncode == 0
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["type"] for line in lines] == ["system", "assistant", "user", "assistant", "result"]
    init = lines[0]
    assert init["subtype"] == "init" and init["cwd"] == str(project) and "Read" in init["tools"]
    assert lines[1]["message"]["content"][0]["id"] == "toolu_g"
    assert lines[2]["message"]["content"][0]["tool_use_id"] == "toolu_g"
    assert lines[-1]["result"] == "Answer."
    assert len({line["session_id"] for line in lines}) == 1


def test_thinking_blocks_go_back_verbatim_with_their_signature(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(
        reply(thinking("I should grep.", signature="sig-123"), tool_use("Grep", {"pattern": "x"})),
        reply(text("ok")),
    )

    done = run_agent("hi")

    assert done.returncode == 0, done.stderr
    sent = model.requests[1].messages[1]["content"][0]
    assert sent == {"type": "thinking", "thinking": "I should grep.", "signature": "sig-123"}


def test_model_comes_from_flag_then_env_then_settings(
    run_agent: RunAgent, model: ScriptedModel, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model.script(*[reply(text("ok")) for _ in range(4)])
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_text('{"model": "from-settings"}')

    with monkeypatch.context() as env:
        env.setenv("AGENTCLI_MODEL", "from-env")
        run_agent("hi", model="from-flag")
        run_agent("hi")
    run_agent("hi")
    (project / ".agentcli" / "settings.json").unlink()
    run_agent("hi")

    assert [r.model for r in model.requests] == ["from-flag", "from-env", "from-settings", "claude-sonnet-5-5"]


def test_malformed_settings_is_a_usage_error_naming_the_file(run_agent: RunAgent, project: Path) -> None:
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_text("{not json")

    done = run_agent("hi")

    assert done.returncode == 2
    assert "settings.json" in done.stderr and "not valid JSON" in done.stderr


def test_settings_that_are_not_utf8_are_a_usage_error_naming_the_file(run_agent: RunAgent, project: Path) -> None:
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_bytes(b'{"model": "caf\xe9"}')

    done = run_agent("hi")

    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert (
        f"Settings file {project / '.agentcli' / 'settings.json'} is not UTF-8 text (at byte offset 14)" in done.stderr
    )


def test_progress_lines_show_a_commands_escape_sequences_instead_of_sending_them(
    run_agent: RunAgent, model: ScriptedModel
) -> None:
    model.script(
        reply(tool_use("Bash", {"command": "echo hi\x1b[2J\u202e"}), tool_use("Bash", {"command": "touch x\x1b[8m"})),
        reply(text("done")),
    )

    done = run_agent("go", allowed_tools=["Bash(echo:*)"])

    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr and "\u202e" not in done.stderr
    assert "● Bash(echo hi\\x1b[2J\\u202e)" in done.stderr
    assert "✗ Bash(touch x\\x1b[8m)" in done.stderr
