"""`agentcli run` end to end against the fake Anthropic server: the wire format, credentials,
the prompt sources and flags. One round trip runs the installed CLI as a subprocess; the rest run
the command line's code in-process (`run_main`). What the loop does with a turn is tested with the
scripted model in test_run_loop.py, faults on the wire in test_wire_faults.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import RunCli, RunMain
from tests.fake_anthropic import FakeAnthropic, http_error, reply, text, tool_use


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


def test_429_honours_retry_after(run_main: RunMain, fake_api: FakeAnthropic) -> None:
    limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
    fake_api.script(http_error(429, limited, headers={"retry-after": "1"}), reply(text("fine")))

    done = run_main("run", "hi")

    assert done.returncode == 0, done.stderr
    first, second = fake_api.requests
    assert second.received_at - first.received_at >= 0.9


def test_401_is_shown_with_a_hint(run_main: RunMain) -> None:
    done = run_main("run", "hi", env={"ANTHROPIC_API_KEY": "wrong-key"})

    assert done.returncode == 1
    assert "API error 401" in done.stderr
    assert "ANTHROPIC_API_KEY" in done.stderr
    assert "wrong-key" not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_verbose_shows_the_traceback(run_main: RunMain) -> None:
    done = run_main("run", "hi", "--verbose", env={"ANTHROPIC_API_KEY": "wrong-key"})

    assert done.returncode == 1
    assert "Traceback" in done.stderr


def test_missing_key_says_what_to_set(run_main: RunMain) -> None:
    done = run_main("run", "hi", env={"ANTHROPIC_API_KEY": ""})

    assert done.returncode == 1
    assert "ANTHROPIC_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr


def test_prompt_from_stdin_and_p_alias(run_main: RunMain, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("one")), reply(text("two")), reply(text("three")), reply(text("four")))

    assert run_main("run", "-", input="from a dash").stdout == "one\n"
    assert run_main("run", input="from a pipe").stdout == "two\n"
    assert run_main("-p", "the alias").stdout == "three\n"
    assert run_main(input="piped into plain agentcli").stdout == "four\n"
    sent = [json.dumps(r.body["messages"][0]) for r in fake_api.requests]
    assert "from a dash" in sent[0] and "from a pipe" in sent[1] and "the alias" in sent[2]
    assert "piped into plain agentcli" in sent[3]


def test_usage_errors_exit_2(run_main: RunMain, fake_api: FakeAnthropic) -> None:
    assert run_main("run", "hi", "--output-format", "yaml").returncode == 2
    assert run_main("run", "hi", "--permission-mode", "yolo").returncode == 2
    assert run_main("run", "hi", "--no-such-flag").returncode == 2
    assert run_main("run", input="").returncode == 2
    assert fake_api.requests == []


def test_auth_token_is_sent_as_bearer(run_main: RunMain, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("ok")))

    done = run_main("run", "hi", env={"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "test-key"})

    assert done.returncode == 0, done.stderr
    assert fake_api.requests[0].headers["authorization"] == "Bearer test-key"


def test_piped_input_follows_a_prompt_argument(run_main: RunMain, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("Looks fine.")))

    done = run_main("run", "review this diff", input="-old line\n+new line\n")

    assert done.returncode == 0, done.stderr
    sent = fake_api.requests[0].body["messages"][0]["content"][-1]["text"]
    assert sent == "review this diff\n\n-old line\n+new line\n"
