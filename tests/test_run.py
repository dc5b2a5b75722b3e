"""`agentcli run` end to end: the real CLI as a subprocess against the fake Anthropic server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import RunCli
from tests.fake_anthropic import OVERLOADED_ERROR, FakeAnthropic, http_error, reply, text, thinking, tool_use


def tool_results(api: FakeAnthropic, request: int) -> list[dict[str, object]]:
    """The tool_result blocks of the last message of request number `request`."""
    content = api.requests[request].body["messages"][-1]["content"]
    return [block for block in content if block["type"] == "tool_result"]


def test_read_then_answer_round_trip(run_cli: RunCli, fake_api: FakeAnthropic, project: Path) -> None:
    (project / "notes.txt").write_text("alpha\nbeta\n")
    fake_api.script(
        reply(text("Reading it."), tool_use("Read", {"file_path": "notes.txt"}, id="toolu_1")),
        reply(text("The file lists alpha and beta.")),
    )

    done = run_cli("run", "what is in notes.txt?")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "The file lists alpha and beta.\n"
    assert "● Read(notes.txt) — Read 2 lines" in done.stderr
    first = fake_api.requests[0].body
    assert first["messages"][0]["role"] == "user"
    assert "what is in notes.txt?" in json.dumps(first["messages"][0])
    assert "temperature" not in first and "top_p" not in first and "top_k" not in first
    [result] = tool_results(fake_api, 1)
    assert result["tool_use_id"] == "toolu_1"
    assert result["content"] == "     1\talpha\n     2\tbeta"
    assert "is_error" not in result
    # The assistant turn went back verbatim.
    assert fake_api.requests[1].body["messages"][1]["content"][1]["id"] == "toolu_1"


def test_three_calls_in_one_turn_are_answered_in_one_message_in_order(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    for name in ("a", "b", "c"):
        (project / f"{name}.txt").write_text(f"file {name}\n")
    fake_api.script(
        reply(
            tool_use("Read", {"file_path": "c.txt"}, id="toolu_c"),
            tool_use("Read", {"file_path": "a.txt"}, id="toolu_a"),
            tool_use("Grep", {"pattern": "file b", "output_mode": "content"}, id="toolu_b"),
        ),
        reply(text("ok")),
    )

    done = run_cli("run", "read them")

    assert done.returncode == 0, done.stderr
    message = fake_api.requests[1].body["messages"][-1]
    assert message["role"] == "user"
    assert [b["tool_use_id"] for b in message["content"]] == ["toolu_c", "toolu_a", "toolu_b"]
    assert "file c" in message["content"][0]["content"]
    assert "b.txt:1:file b" in message["content"][2]["content"]
    assert done.stderr.count("● ") == 3


def test_unknown_tool_and_invalid_input_are_error_results(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(
        reply(
            tool_use("Teleport", {"to": "mars"}, id="toolu_1"),
            tool_use("Read", {"path": "x.txt"}, id="toolu_2"),
            tool_use("Read", {"file_path": 42}, id="toolu_3"),
        ),
        reply(text("sorry")),
    )

    done = run_cli("run", "go")

    assert done.returncode == 0, done.stderr
    unknown, missing, wrong_type = tool_results(fake_api, 1)
    assert unknown["is_error"] is True
    assert "Unknown tool 'Teleport'" in str(unknown["content"]) and "Read" in str(unknown["content"])
    assert missing["is_error"] is True and "`file_path`" in str(missing["content"])
    assert wrong_type["is_error"] is True and "`file_path` must be of type string" in str(wrong_type["content"])
    assert "Traceback" not in done.stderr


def test_max_turns_stops_with_exit_1_naming_the_limit(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(
        reply(tool_use("Grep", {"pattern": "one"})),
        reply(tool_use("Grep", {"pattern": "two"})),
        reply(text("never reached")),
    )

    done = run_cli("run", "search", "--max-turns", "2", "--output-format", "json")

    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["subtype"] == "error_max_turns"
    assert result["is_error"] is True
    assert "--max-turns 2" in result["result"]
    assert len(fake_api.requests) == 2


def test_no_progress_stops_repeated_identical_calls(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    same = {"pattern": "needle"}
    fake_api.script(*[reply(tool_use("Grep", same)) for _ in range(6)])

    done = run_cli("run", "find the needle")

    assert done.returncode == 1
    assert "No progress" in done.stderr and "4 times in a row" in done.stderr
    assert len(fake_api.requests) == 4


def test_no_progress_stops_a_streak_of_errors(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(*[reply(tool_use("Read", {"file_path": f"missing{i}.txt"})) for i in range(8)])

    done = run_cli("run", "read")

    assert done.returncode == 1
    assert "6 tool calls in a row failed" in done.stderr


def test_tool_call_cut_off_by_max_tokens_is_retried_larger_and_never_run(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    fake_api.script(
        reply(text("Writing."), tool_use("Bash", {"command": "touch cut.txt"}, partial=True)),
        reply(text("All done.")),
    )

    done = run_cli("run", "make a file", "--permission-mode", "bypassPermissions")

    assert done.returncode == 0, done.stderr
    assert not (project / "cut.txt").exists()
    first, second = (r.body for r in fake_api.requests)
    assert second["max_tokens"] > first["max_tokens"]
    assert second["messages"] == first["messages"]  # the partial turn was discarded
    assert "cut off" in done.stderr
    assert done.stdout == "All done.\n"


def test_tool_call_cut_off_twice_is_dropped_and_the_model_told(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    cut = reply(tool_use("Bash", {"command": "touch cut.txt"}, partial=True))
    fake_api.script(cut, cut, reply(text("Smaller steps then.")))

    done = run_cli("run", "make a file", "--permission-mode", "bypassPermissions")

    assert done.returncode == 0, done.stderr
    assert not (project / "cut.txt").exists()
    last = json.dumps(fake_api.requests[2].body["messages"][-1])
    assert "cut off at the output token limit" in last
    assert "not run" in done.stderr


def test_text_cut_off_by_max_tokens_is_shown_and_the_user_told(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("The answer begins and then"), stop_reason="max_tokens"))

    done = run_cli("run", "explain")

    assert done.returncode == 0
    assert done.stdout == "The answer begins and then\n"
    assert "cut off at the output token limit" in done.stderr


def test_pause_turn_is_resent_as_is(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("Working on it"), stop_reason="pause_turn"), reply(text("Finished.")))

    done = run_cli("run", "long task")

    assert done.returncode == 0, done.stderr
    second = fake_api.requests[1].body["messages"]
    assert second[-1]["role"] == "assistant"
    assert second[-1]["content"][0]["text"] == "Working on it"
    assert done.stdout == "Finished.\n"


def test_refusal_is_reported(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("I can't help with that."), stop_reason="refusal"))

    done = run_cli("run", "something bad")

    assert done.returncode == 1
    assert "declined" in done.stderr


def test_stop_sequence_ends_normally(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("Up to the stop"), stop_reason="stop_sequence"))

    done = run_cli("run", "go")

    assert done.returncode == 0
    assert done.stdout == "Up to the stop\n"


def test_context_window_exceeded_is_reported(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("partial"), stop_reason="model_context_window_exceeded"))

    done = run_cli("run", "go")

    assert done.returncode == 1
    assert "context window" in done.stderr


def test_token_budget_stops_the_run(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(
        reply(tool_use("Grep", {"pattern": "a"}), usage={"input_tokens": 900, "output_tokens": 200}),
        reply(text("never")),
    )

    done = run_cli("run", "go", "--max-budget-tokens", "1000", "--output-format", "json")

    assert done.returncode == 1
    assert "budget" in json.loads(done.stdout)["result"]
    assert len(fake_api.requests) == 1


def test_529_then_success(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(http_error(529, OVERLOADED_ERROR, headers={"retry-after-ms": "10"}), reply(text("fine")))

    done = run_cli("run", "hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
    assert len(fake_api.requests) == 2


def test_429_honours_retry_after(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
    fake_api.script(http_error(429, limited, headers={"retry-after": "1"}), reply(text("fine")))

    done = run_cli("run", "hi")

    assert done.returncode == 0, done.stderr
    first, second = fake_api.requests
    assert second.received_at - first.received_at >= 0.9


def test_error_event_mid_stream_then_success(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("partial answer that breaks"), error_after=2), reply(text("whole answer")))

    done = run_cli("run", "hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "whole answer\n"
    assert "retrying" in done.stderr
    assert len(fake_api.requests) == 2


def test_dropped_stream_then_success(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("partial answer that drops"), drop_after=2), reply(text("whole answer")))

    done = run_cli("run", "hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "whole answer\n"
    assert "dropped" in done.stderr


def test_stream_failures_give_up_after_a_few_retries(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(*[reply(text("breaks every time"), error_after=1) for _ in range(5)])

    done = run_cli("run", "hi", env={"AGENTCLI_RETRY_BASE_DELAY": "0.01"})

    assert done.returncode == 1
    assert len(fake_api.requests) == 4
    assert "Traceback" not in done.stderr


def test_400_is_shown_cleanly(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    bad = {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}
    fake_api.script(http_error(400, bad))

    done = run_cli("run", "hi")

    assert done.returncode == 1
    assert "API error 400: prompt is too long" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_401_is_shown_with_a_hint(run_cli: RunCli) -> None:
    done = run_cli("run", "hi", env={"ANTHROPIC_API_KEY": "wrong-key"})

    assert done.returncode == 1
    assert "API error 401" in done.stderr
    assert "ANTHROPIC_API_KEY" in done.stderr
    assert "wrong-key" not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_verbose_shows_the_traceback(run_cli: RunCli) -> None:
    done = run_cli("run", "hi", "--verbose", env={"ANTHROPIC_API_KEY": "wrong-key"})

    assert done.returncode == 1
    assert "Traceback" in done.stderr


def test_missing_key_says_what_to_set(run_cli: RunCli) -> None:
    done = run_cli("run", "hi", env={"ANTHROPIC_API_KEY": ""})

    assert done.returncode == 1
    assert "ANTHROPIC_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr


def test_json_output_shape(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(tool_use("Grep", {"pattern": "x"})), reply(text("Answer.")))

    done = run_cli("run", "hi", "--output-format", "json")

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


def test_stream_json_output_shape(run_cli: RunCli, fake_api: FakeAnthropic, project: Path) -> None:
    fake_api.script(reply(tool_use("Grep", {"pattern": "x"}, id="toolu_g")), reply(text("Answer.")))

    done = run_cli("run", "hi", "--output-format", "stream-json")

    assert done.returncode == 0
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["type"] for line in lines] == ["system", "assistant", "user", "assistant", "result"]
    init = lines[0]
    assert init["subtype"] == "init" and init["cwd"] == str(project) and "Read" in init["tools"]
    assert lines[1]["message"]["content"][0]["id"] == "toolu_g"
    assert lines[2]["message"]["content"][0]["tool_use_id"] == "toolu_g"
    assert lines[-1]["result"] == "Answer."
    assert len({line["session_id"] for line in lines}) == 1


def test_prompt_from_stdin_and_p_alias(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("one")), reply(text("two")), reply(text("three")), reply(text("four")))

    assert run_cli("run", "-", input="from a dash").stdout == "one\n"
    assert run_cli("run", input="from a pipe").stdout == "two\n"
    assert run_cli("-p", "the alias").stdout == "three\n"
    assert run_cli(input="piped into plain agentcli").stdout == "four\n"
    sent = [json.dumps(r.body["messages"][0]) for r in fake_api.requests]
    assert "from a dash" in sent[0] and "from a pipe" in sent[1] and "the alias" in sent[2]
    assert "piped into plain agentcli" in sent[3]


def test_usage_errors_exit_2(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    assert run_cli("run", "hi", "--output-format", "yaml").returncode == 2
    assert run_cli("run", "hi", "--permission-mode", "yolo").returncode == 2
    assert run_cli("run", "hi", "--no-such-flag").returncode == 2
    assert run_cli("run", input="").returncode == 2
    assert fake_api.requests == []


def test_thinking_blocks_go_back_verbatim_with_their_signature(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(
        reply(thinking("I should grep.", signature="sig-123"), tool_use("Grep", {"pattern": "x"})),
        reply(text("ok")),
    )

    done = run_cli("run", "hi")

    assert done.returncode == 0, done.stderr
    sent = fake_api.requests[1].body["messages"][1]["content"][0]
    assert sent == {"type": "thinking", "thinking": "I should grep.", "signature": "sig-123"}


def test_auth_token_is_sent_as_bearer(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("ok")))

    done = run_cli("run", "hi", env={"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "test-key"})

    assert done.returncode == 0, done.stderr
    assert fake_api.requests[0].headers["authorization"] == "Bearer test-key"


def test_model_comes_from_flag_then_env_then_settings(run_cli: RunCli, fake_api: FakeAnthropic, project: Path) -> None:
    fake_api.script(*[reply(text("ok")) for _ in range(4)])
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_text('{"model": "from-settings"}')

    run_cli("run", "hi", "--model", "from-flag", env={"AGENTCLI_MODEL": "from-env"})
    run_cli("run", "hi", env={"AGENTCLI_MODEL": "from-env"})
    run_cli("run", "hi")
    (project / ".agentcli" / "settings.json").unlink()
    run_cli("run", "hi")

    models = [r.body["model"] for r in fake_api.requests]
    assert models == ["from-flag", "from-env", "from-settings", "claude-sonnet-5-5"]


def test_malformed_settings_is_a_usage_error_naming_the_file(run_cli: RunCli, project: Path) -> None:
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_text("{not json")

    done = run_cli("run", "hi")

    assert done.returncode == 2
    assert "settings.json" in done.stderr and "not valid JSON" in done.stderr


def test_settings_that_are_not_utf8_are_a_usage_error_naming_the_file(run_cli: RunCli, project: Path) -> None:
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_bytes(b'{"model": "caf\xe9"}')

    done = run_cli("run", "hi")

    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert (
        f"Settings file {project / '.agentcli' / 'settings.json'} is not UTF-8 text (at byte offset 14)" in done.stderr
    )


def test_piped_input_follows_a_prompt_argument(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("Looks fine.")))

    done = run_cli("run", "review this diff", input="-old line\n+new line\n")

    assert done.returncode == 0, done.stderr
    sent = fake_api.requests[0].body["messages"][0]["content"][-1]["text"]
    assert sent == "review this diff\n\n-old line\n+new line\n"


def test_progress_lines_show_a_commands_escape_sequences_instead_of_sending_them(
    run_cli: RunCli, fake_api: FakeAnthropic
) -> None:
    fake_api.script(
        reply(tool_use("Bash", {"command": "echo hi\x1b[2J\u202e"}), tool_use("Bash", {"command": "touch x\x1b[8m"})),
        reply(text("done")),
    )

    done = run_cli("run", "go", "--allowed-tools", "Bash(echo:*)")

    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr and "\u202e" not in done.stderr
    assert "● Bash(echo hi\\x1b[2J\\u202e)" in done.stderr
    assert "✗ Bash(touch x\\x1b[8m)" in done.stderr
