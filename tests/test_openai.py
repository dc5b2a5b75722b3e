"""The OpenAI-compatible provider end to end: `agentcli run` with `--provider openai` (or a model
prefix) against tests/fake_openai.py, real HTTP and SSE, through the resolver as a user runs it; also
with `--tool-protocol xml` (no `tools` sent, calls and results as tags in the messages)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.contracts import JSON, ModelRequest, Unwatched
from agentcli.providers.openai import OpenAIModel
from agentcli.runner import RunOptions, run_once
from tests.conftest import AGENTCLI, Ran, RunCli, RunMain, StartRepl, cli_env
from tests.fake_anthropic import FakeAnthropic
from tests.fake_anthropic import reply as anthropic_reply
from tests.fake_anthropic import text as anthropic_text
from tests.fake_openai import RATE_LIMITED, FakeOpenAI, call, http_error, reply

OPENAI_KEY = "sk-test-openai-key-123456"
RunOpenAI = Callable[..., Ran]


@pytest.fixture
def openai_api() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=OPENAI_KEY) as api:
        yield api


@pytest.fixture
def run_openai(
    openai_api: FakeOpenAI,
    in_process_env: None,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> RunOpenAI:
    """`agentcli run PROMPT --model openai:gpt-test` in-process, the model made by the resolver."""
    monkeypatch.setenv("OPENAI_BASE_URL", openai_api.url)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.delenv("ANTHROPIC_API_KEY")

    def run(prompt: str, **options: Any) -> Ran:
        options.setdefault("model", "openai:gpt-test")
        capsys.readouterr()
        code = run_once(RunOptions(prompt=prompt, **options), None, project, retry_base_delay=0)
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def test_a_text_answer_is_printed_and_the_request_is_chat_completions(
    run_openai: RunOpenAI, openai_api: FakeOpenAI
) -> None:
    openai_api.script(reply("Hello from GPT."))

    done = run_openai("hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello from GPT."
    (request,) = openai_api.requests
    body = request.body
    assert body["model"] == "gpt-test"  # the prefix chose the provider and is not sent
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"][0]["role"] == "system" and "agentcli" in body["messages"][0]["content"].lower()
    assert body["messages"][-1]["role"] == "user" and "hi" in body["messages"][-1]["content"]
    assert {t["function"]["name"] for t in body["tools"]} >= {"Read", "Edit", "Bash", "Task", "Skill"}
    assert all(t["type"] == "function" and "parameters" in t["function"] for t in body["tools"])
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert "cache_control" not in json.dumps(body)  # Anthropic's breakpoints stay with the Anthropic provider


def test_one_tool_round_trip_answers_the_call_with_a_tool_message(
    run_openai: RunOpenAI, openai_api: FakeOpenAI, project: Path
) -> None:
    (project / "a.txt").write_text("apple\n")
    openai_api.script(
        reply("Let me look.", calls=[call("Read", {"file_path": "a.txt"}, id="call_1")]),
        reply("It says apple."),
    )

    done = run_openai("what is in a.txt?")

    assert done.returncode == 0, done.stderr
    assert "It says apple." in done.stdout
    second = openai_api.requests[1].body["messages"]
    assistant = next(m for m in second if m["role"] == "assistant")
    assert assistant["content"] == "Let me look."
    (sent_call,) = assistant["tool_calls"]
    assert sent_call["id"] == "call_1" and json.loads(sent_call["function"]["arguments"]) == {"file_path": "a.txt"}
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "call_1"
    assert "apple" in second[-1]["content"]


def test_parallel_calls_sent_at_index_zero_are_told_apart_by_id_and_answered_in_order(
    run_openai: RunOpenAI, openai_api: FakeOpenAI, project: Path
) -> None:
    (project / "a.txt").write_text("apple\n")
    (project / "b.txt").write_text("banana\n")
    openai_api.script(
        reply(
            calls=[
                call("Read", {"file_path": "a.txt"}, id="call_a"),
                call("Read", {"file_path": "b.txt"}, id="call_b"),
            ],
            index_zero=True,
        ),
        reply("Both read."),
    )

    done = run_openai("read both")

    assert done.returncode == 0, done.stderr
    results = tool_messages(openai_api.requests[1].body)
    assert [m["tool_call_id"] for m in results] == ["call_a", "call_b"]
    assert "apple" in results[0]["content"] and "banana" in results[1]["content"]


def test_arguments_that_are_not_json_get_an_error_result_and_the_run_goes_on(
    run_openai: RunOpenAI, openai_api: FakeOpenAI, project: Path
) -> None:
    openai_api.script(
        reply(calls=[call("Write", '{"file_path": "x.txt", "content": "hi"', id="call_bad")]),
        reply("Sorry, fixed."),
    )

    done = run_openai("write x")

    assert done.returncode == 0, done.stderr
    assert not (project / "x.txt").exists()
    (result,) = tool_messages(openai_api.requests[1].body)
    assert result["tool_call_id"] == "call_bad"
    assert "Invalid input for Write" in result["content"] and "not valid JSON" in result["content"]


def test_a_call_cut_off_by_length_is_never_run(run_openai: RunOpenAI, openai_api: FakeOpenAI, project: Path) -> None:
    cut = reply(
        calls=[call("Write", {"file_path": "big.txt", "content": "x" * 200}, id="call_zz9")],
        finish_reason="length",
        cut_arguments=True,
    )
    openai_api.script(cut, cut, reply("Gave up on that."))

    done = run_openai("write big", permission_mode="bypassPermissions")

    assert done.returncode == 0, done.stderr
    assert not (project / "big.txt").exists()
    for request in openai_api.requests:
        assert "call_zz9" not in json.dumps(request.body["messages"])


def test_a_dropped_stream_is_asked_for_again(run_openai: RunOpenAI, openai_api: FakeOpenAI) -> None:
    openai_api.script(reply("This answer is cut", drop_after=2), reply("Recovered."))

    done = run_openai("hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Recovered."
    assert len(openai_api.requests) == 2


def test_a_429_waits_as_retry_after_says_then_succeeds(run_openai: RunOpenAI, openai_api: FakeOpenAI) -> None:
    openai_api.script(http_error(429, RATE_LIMITED, headers={"retry-after": "0"}), reply("After the wait."))

    done = run_openai("hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "After the wait."
    assert "rate limited" in done.stderr.lower()
    assert len(openai_api.requests) == 2


def test_a_rejected_key_says_to_check_openai_api_key_and_never_shows_it(
    run_openai: RunOpenAI, openai_api: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-abcdefghijkl")

    done = run_openai("hi")

    assert done.returncode == 1
    assert "API error 401: Incorrect API key provided" in done.stderr
    assert "Check OPENAI_API_KEY" in done.stderr
    assert "sk-wrong-key-abcdefghijkl" not in done.stderr + done.stdout


def test_cached_prompt_tokens_are_counted_as_cache_reads_not_twice(
    run_openai: RunOpenAI, openai_api: FakeOpenAI
) -> None:
    openai_api.script(reply("ok", prompt_tokens=1000, cached_tokens=800, completion_tokens=7))

    done = run_openai("hi", output_format="json")

    assert done.returncode == 0, done.stderr
    usage = json.loads(done.stdout)["usage"]
    assert usage["input_tokens"] == 200
    assert usage["cache_read_input_tokens"] == 800
    assert usage["output_tokens"] == 7


def test_reasoning_is_kept_out_of_the_answer_and_not_sent_back(
    run_openai: RunOpenAI, openai_api: FakeOpenAI, project: Path
) -> None:
    (project / "a.txt").write_text("apple\n")
    openai_api.script(
        reply(calls=[call("Read", {"file_path": "a.txt"}, id="call_1")], reasoning="SECRET-CHAIN-OF-THOUGHT"),
        reply("Done."),
    )

    done = run_openai("read it")

    assert done.returncode == 0, done.stderr
    assert "SECRET-CHAIN-OF-THOUGHT" not in done.stdout
    assert "SECRET-CHAIN-OF-THOUGHT" not in json.dumps(openai_api.requests[1].body)


def test_a_denied_edit_is_an_error_tool_message_and_the_file_stays(
    run_openai: RunOpenAI, openai_api: FakeOpenAI, project: Path
) -> None:
    (project / "a.txt").write_text("old\n")
    openai_api.script(
        reply(calls=[call("Edit", {"file_path": "a.txt", "old_string": "old", "new_string": "new"}, id="call_e")]),
        reply("I was not allowed."),
    )

    done = run_openai("edit a.txt")

    assert done.returncode == 0, done.stderr
    assert (project / "a.txt").read_text() == "old\n"
    (result,) = tool_messages(openai_api.requests[1].body)
    assert result["tool_call_id"] == "call_e" and result["content"].startswith("Error: ")


def test_a_skill_runs_on_openai(run_openai: RunOpenAI, openai_api: FakeOpenAI, project: Path) -> None:
    (project / ".commands").mkdir()
    (project / ".commands" / "stamp.md").write_text("---\ndescription: Stamp files\n---\nSay STAMPED-SKILL-BODY.")
    openai_api.script(reply(calls=[call("Skill", {"skill": "stamp"}, id="call_s")]), reply("Stamped."))

    done = run_openai("stamp")

    assert done.returncode == 0, done.stderr
    assert "STAMPED-SKILL-BODY" in json.dumps(openai_api.requests[1].body["messages"])


def test_a_sub_agent_runs_on_openai(run_openai: RunOpenAI, openai_api: FakeOpenAI) -> None:
    task = {"description": "look around", "prompt": "Say what you find.", "subagent_type": "Explore"}
    openai_api.script(
        reply(calls=[call("Task", task, id="call_t")]),
        reply("SUBAGENT-FOUND-IT"),
        reply("The sub-agent found it."),
    )

    done = run_openai("explore")

    assert done.returncode == 0, done.stderr
    assert "The sub-agent found it." in done.stdout
    sub = openai_api.requests[1].body["messages"]
    assert sub[-1]["role"] == "user" and "Say what you find." in sub[-1]["content"]
    (result,) = tool_messages(openai_api.requests[2].body)
    assert result["tool_call_id"] == "call_t" and "SUBAGENT-FOUND-IT" in result["content"]


def test_continue_of_an_openai_session_goes_on_with_openai(
    run_openai: RunOpenAI, openai_api: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, project: Path, capsys: Any
) -> None:
    openai_api.script(reply("First answer."), reply("Second answer."))
    assert run_openai("first").returncode == 0

    capsys.readouterr()
    code = run_once(RunOptions(prompt="second", continue_session=True), None, project, retry_base_delay=0)

    assert code == 0, capsys.readouterr().err
    assert len(openai_api.requests) == 2
    second = openai_api.requests[1].body
    assert second["model"] == "gpt-test"
    assert any(m["role"] == "assistant" and m["content"] == "First answer." for m in second["messages"])


def test_the_ollama_prefix_goes_to_ollama_host_without_a_key(home: Path, project: Path) -> None:
    with FakeOpenAI() as ollama:
        ollama.script(reply("Hi from llama."))
        env = cli_env(home, None)
        env.pop("ANTHROPIC_API_KEY")
        env["OLLAMA_HOST"] = ollama.url.removesuffix("/v1")
        done = subprocess.run(
            [AGENTCLI, "run", "--model", "ollama:llama3.2:3b", "hi"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hi from llama."
    (request,) = ollama.requests
    assert request.body["model"] == "llama3.2:3b" and "authorization" not in request.headers
    assert "max_tokens" in request.body  # what local servers take (OpenAI's own gets max_completion_tokens)


def test_provider_openai_without_a_key_says_which_variable_to_set(run_main: RunMain) -> None:
    done = run_main("run", "--provider", "openai", "hi")

    assert done.returncode == 1
    assert "set OPENAI_API_KEY" in done.stderr


def test_an_unknown_provider_is_a_usage_error(run_main: RunMain) -> None:
    done = run_main("run", "--provider", "nosuch", "hi")

    assert done.returncode == 2
    assert "Unknown provider 'nosuch'" in done.stderr and "openai" in done.stderr


def test_a_plain_anthropic_run_imports_no_openai_code(run_cli: RunCli, fake_api: Any) -> None:
    fake_api.script(anthropic_reply(anthropic_text("hi")))

    done = run_cli("run", "hi", env={"PYTHONPROFILEIMPORTTIME": "1"})

    assert done.returncode == 0, done.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "agentcli.providers.http" in imported  # the measurement covers the request path
    assert not {"agentcli.providers.openai", "openai"} & imported


# ------------------------------------------------------------------ the text tool protocol on OpenAI


def tag(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def responses(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The `<tool_response>` bodies in a message's text, in order."""
    content = message["content"]
    assert isinstance(content, str), content
    return [json.loads(part.split("</tool_response>")[0]) for part in content.split("<tool_response>")[1:]]


def test_a_round_trip_sends_no_tools_lists_them_in_the_system_message_and_answers_in_a_user_message(
    run_openai: RunOpenAI, openai_api: FakeOpenAI, project: Path
) -> None:
    (project / "notes.txt").write_text("hello from the notes\n")
    openai_api.script(
        reply("Let me look.\n" + tag("Read", {"file_path": "notes.txt"})),
        reply("It says hello."),
    )

    done = run_openai("what is in notes.txt?", tool_protocol="xml")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "It says hello.\n"
    assert "● Read(notes.txt)" in done.stderr and "tool_call" not in done.stdout + done.stderr
    first, second = (request.body for request in openai_api.requests)
    assert "tools" not in first and "tools" not in second
    system = first["messages"][0]
    assert system["role"] == "system"
    assert "## Read\n" in system["content"] and "## Bash\n" in system["content"]
    assert '<tool_call>{"name": "Read", "arguments": {"file_path": "..."}}</tool_call>' in system["content"]
    assert all(m["role"] != "tool" and "tool_calls" not in m for m in second["messages"])
    assistant, results = second["messages"][-2:]
    assert assistant == {
        "role": "assistant",
        "content": 'Let me look.\n<tool_call>{"name": "Read", "arguments": {"file_path": "notes.txt"}}</tool_call>',
    }
    assert results["role"] == "user" and results["content"].startswith("<tool_response>")
    [response] = responses(results)
    assert response["name"] == "Read" and response["is_error"] is False
    assert "hello from the notes" in response["content"]


def test_two_calls_in_one_answer_run_in_order_and_are_answered_in_one_user_message(
    run_openai: RunOpenAI, openai_api: FakeOpenAI, project: Path
) -> None:
    (project / "a.txt").write_text("alpha\n")
    openai_api.script(
        reply(
            "Two steps.\n"
            + tag("Read", {"file_path": "a.txt"})
            + tag("Write", {"file_path": "b.txt", "content": "beta"})
        ),
        reply("Done."),
    )

    done = run_openai("copy", tool_protocol="xml", permission_mode="acceptEdits")

    assert done.returncode == 0, done.stderr
    assert (project / "b.txt").read_text() == "beta"
    assert done.stdout == "Done.\n"
    last = openai_api.requests[1].body["messages"][-1]
    assert last["role"] == "user"
    first, second = responses(last)
    assert (first["name"], first["is_error"]) == ("Read", False) and "alpha" in first["content"]
    assert (second["name"], second["is_error"]) == ("Write", False)


def test_a_malformed_tag_is_answered_with_the_expected_form_and_the_model_recovers(
    run_openai: RunOpenAI, openai_api: FakeOpenAI, project: Path
) -> None:
    (project / "a.txt").write_text("alpha\n")
    openai_api.script(
        reply('<tool_call>{"name": "Read", "arguments": {"file_path": "a.txt"}</tool_call>'),  # a brace short
        reply(tag("Read", {"file_path": "a.txt"})),
        reply("It says alpha."),
    )

    done = run_openai("read a.txt", tool_protocol="xml")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "It says alpha.\n"
    [error] = responses(openai_api.requests[1].body["messages"][-1])
    assert error["is_error"] is True and "not valid JSON" in error["content"]
    assert '<tool_call>{"name": "Read", "arguments": {"file_path": "..."}}</tool_call>' in error["content"]
    [read] = responses(openai_api.requests[2].body["messages"][-1])
    assert read["is_error"] is False and "alpha" in read["content"]
    assert all("tools" not in request.body for request in openai_api.requests)


# ------------------------------------------------------------------ streamed reasoning

REASONING = "The user wants a.txt.\nI should read it first, then answer."


def test_verbose_run_shows_streamed_reasoning_on_stderr_and_never_sends_it_back(
    run_openai: RunOpenAI, openai_api: FakeOpenAI, project: Path
) -> None:
    (project / "a.txt").write_text("apple\n")
    openai_api.script(
        reply(calls=[call("Read", {"file_path": "a.txt"}, id="call_1")], reasoning=REASONING),
        reply("It says apple.", reasoning="Now I can answer.", reasoning_field="reasoning"),
    )

    done = run_openai("what is in a.txt?", verbose=True)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "It says apple.\n"
    lines = done.stderr.splitlines()
    start = lines.index("✻ Thinking…")
    assert lines[start + 1 : start + 4] == [
        "  The user wants a.txt.",
        "  I should read it first, then answer.",
        "● Read(a.txt) — Read 1 line",
    ]
    assert lines[-2:] == ["✻ Thinking…", "  Now I can answer."]
    second = json.dumps(openai_api.requests[1].body)
    assert "The user wants a.txt." not in second and "reasoning" not in second


def test_without_verbose_run_keeps_reasoning_off_both_streams(run_openai: RunOpenAI, openai_api: FakeOpenAI) -> None:
    openai_api.script(reply("Hello.", reasoning=REASONING))

    done = run_openai("hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello.\n"
    assert "Thinking" not in done.stderr and "a.txt" not in done.stderr


def test_the_repl_shows_streamed_reasoning_dimmed_above_the_answer(
    start_repl: StartRepl, openai_api: FakeOpenAI
) -> None:
    openai_api.script(reply("The answer is 42.", reasoning=REASONING), reply("Still 42."))
    repl = start_repl(
        "--model", "openai:gpt-test", env={"OPENAI_BASE_URL": openai_api.url, "OPENAI_API_KEY": OPENAI_KEY}
    )

    repl.submit("what is the answer?")

    screen = repl.wait_for_prompt("The answer is 42.")  # the turn is over: the screen is settled
    lines = screen.splitlines()
    heading = next(n for n, line in enumerate(lines) if line.strip() == "✻ Thinking…")
    assert [line.strip() for line in lines[heading + 1 : heading + 3]] == [
        "The user wants a.txt.",
        "I should read it first, then answer.",
    ]
    assert lines.index(next(line for line in lines if "The answer is 42." in line)) > heading + 2
    dim = r"\x1b\[(?:[0-9;]*;)?2(?:;[0-9;]*)?m"  # SGR 2 (dim), alone or among other attributes
    assert re.search(dim + r"[^\x1b]*I should read it first, then answer\.", repl.output)
    assert not re.search(dim + r"[^\x1b]*The answer is 42\.", repl.output)

    repl.submit("and again?")
    repl.wait_for("Still 42.")
    assert "I should read it first" not in json.dumps(openai_api.requests[1].body)


# ------------------------------------------------------------------ /model switches provider


def test_slash_model_with_a_prefix_switches_provider_for_the_next_turn_and_continue_keeps_it(
    start_repl: StartRepl, fake_api: FakeAnthropic, openai_api: FakeOpenAI, run_main: RunMain
) -> None:
    fake_api.script(anthropic_reply(anthropic_text("Answer from Claude.")))
    openai_api.script(reply("Answer from GPT."), reply("GPT again."))
    openai_env = {"OPENAI_BASE_URL": openai_api.url, "OPENAI_API_KEY": OPENAI_KEY}
    repl = start_repl(env=openai_env)

    repl.submit("hi")
    repl.wait_for_prompt("Answer from Claude.")
    repl.submit("/model gemini:gemini-2.5-flash")
    repl.wait_for("No Gemini API key: set GEMINI_API_KEY")
    repl.wait_for("The model is still claude-sonnet-5-5 (anthropic).")
    repl.submit("/model openai:gpt-test")
    repl.wait_for("Model set to gpt-test (openai).")
    repl.submit("and now?")
    repl.wait_for_prompt("Answer from GPT.")
    repl.press("ctrl-d")
    assert repl.wait_exit() == 0

    assert len(fake_api.requests) == 1
    (switched,) = openai_api.requests
    assert switched.body["model"] == "gpt-test"
    assert {"role": "assistant", "content": "Answer from Claude."} in switched.body["messages"]

    done = run_main("run", "-c", "once more", env=openai_env)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "GPT again.\n"
    assert len(fake_api.requests) == 1
    assert openai_api.requests[1].body["model"] == "gpt-test"
    assert {"role": "assistant", "content": "Answer from GPT."} in openai_api.requests[1].body["messages"]


def test_a_body_built_from_earlier_translations_says_what_a_new_models_would(openai_api: FakeOpenAI) -> None:
    """A model keeps the translation of the conversation it sent last; whatever happened to the
    conversation in between (it grew, a compaction replaced its start, the system prompt changed),
    the server is sent what a new model would send for the same request."""
    kept = OpenAIModel(base_url=openai_api.url, api_key=OPENAI_KEY)
    system: list[JSON] = [{"type": "text", "text": "Be brief."}]
    messages: list[JSON] = [{"role": "user", "content": [{"type": "text", "text": "read them"}]}]

    def send_by_both() -> None:
        request = ModelRequest("gpt-test", list(system), [], list(messages), 100)
        for model in (kept, OpenAIModel(base_url=openai_api.url, api_key=OPENAI_KEY)):
            openai_api.script(reply("ok"))
            model.stream(request, Unwatched())

    for n in range(4):
        use = {"type": "tool_use", "id": f"call_{n}", "name": "Read", "input": {"file_path": f"{n}.txt"}}
        result = {"type": "tool_result", "tool_use_id": f"call_{n}", "content": f"line {n}"}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
        send_by_both()
    cleared = {"type": "tool_result", "tool_use_id": "call_0", "content": "[Old tool result cleared]"}
    messages = [*messages[:2], {"role": "user", "content": [cleared]}, *messages[3:]]  # the later ones as they were
    send_by_both()
    system = [{"type": "text", "text": "Be thorough."}]
    send_by_both()
    kept.close()

    bodies = [request.body for request in openai_api.requests]
    assert bodies[0::2] == bodies[1::2]
    assert tool_messages(bodies[-1])[0]["content"] == "[Old tool result cleared]"
    assert bodies[-1]["messages"][0] == {"role": "system", "content": "Be thorough."}
