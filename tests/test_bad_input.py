"""Bad input never crashes a session: odd file names, malformed model output, damaged transcripts.

Each case ends with a request the fake server accepts (it rejects what the real API would),
and the session can be continued afterwards.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import RunCli
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use

BAD_NAME = b"caf\xe9.txt"
"""A file name that is not UTF-8 (Latin-1 é), as a Linux file system happily stores."""
SHOWN = "caf\\xe9.txt"
"""How agentcli shows it: the undecodable byte escaped."""


def make_bad_file(project: Path) -> None:
    with open(os.path.join(os.fsencode(project), BAD_NAME), "wb") as file:
        file.write(b"needle\n")


def tool_results(api: FakeAnthropic, request: int) -> list[dict[str, object]]:
    content = api.requests[request].body["messages"][-1]["content"]
    return [block for block in content if block["type"] == "tool_result"]


@pytest.mark.parametrize(
    ("tool", "tool_input", "env"),
    [
        pytest.param("Glob", {"pattern": "*.txt"}, {}, id="glob"),
        pytest.param("Grep", {"pattern": "needle"}, {}, id="grep-ripgrep"),
        pytest.param("Grep", {"pattern": "needle"}, {"AGENTCLI_NO_RIPGREP": "1"}, id="grep-python"),
        pytest.param("Grep", {"pattern": "needle", "output_mode": "content"}, {}, id="grep-content-ripgrep"),
        pytest.param(
            "Grep",
            {"pattern": "needle", "output_mode": "content"},
            {"AGENTCLI_NO_RIPGREP": "1"},
            id="grep-content-python",
        ),
        pytest.param("Bash", {"command": "ls"}, {}, id="bash"),
    ],
)
def test_a_file_name_that_is_not_utf8_is_shown_escaped_and_the_session_goes_on(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path, tool: str, tool_input: dict[str, str], env: dict[str, str]
) -> None:
    make_bad_file(project)
    fake_api.script(reply(tool_use(tool, tool_input, id="toolu_1")), reply(text("Found it.")), reply(text("Again.")))

    done = run_cli("run", "find the file", "--permission-mode", "bypassPermissions", env=env)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Found it.\n"
    assert fake_api.requests[1].status == 200
    [result] = tool_results(fake_api, 1)
    assert SHOWN in str(result["content"])

    again = run_cli("run", "-c", "once more", env=env)

    assert again.returncode == 0, again.stderr
    assert again.stdout == "Again.\n"
    assert fake_api.requests[2].status == 200


def test_a_prompt_with_a_byte_that_is_not_utf8_is_sent_escaped(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("Noted.")))

    done = run_cli("run", "open " + os.fsdecode(BAD_NAME))

    assert done.returncode == 0, done.stderr
    assert fake_api.requests[0].status == 200
    assert fake_api.requests[0].body["messages"][-1]["content"][-1]["text"].endswith(f"open {SHOWN}")


# ------------------------------------------------------------------ malformed model output


def deeply_nested(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


@pytest.mark.parametrize(
    ("raw_json", "problem"),
    [
        pytest.param("[1, 2]", "the input must be a JSON object, not a list", id="list"),
        pytest.param('"ls"', "the input must be a JSON object, not a string", id="string"),
        pytest.param(deeply_nested(100_000), "the input is nested more than 64 levels deep", id="nested-100000"),
        pytest.param(deeply_nested(500), "the input is nested more than 64 levels deep", id="nested-500"),
        pytest.param(
            '{"command": "echo \\udce9"}', "the input holds text that is not valid Unicode", id="lone-surrogate"
        ),
    ],
)
def test_a_tool_input_that_cannot_be_used_gets_an_error_result_and_the_session_goes_on(
    run_cli: RunCli, fake_api: FakeAnthropic, raw_json: str, problem: str
) -> None:
    fake_api.script(
        reply(text("Running it."), tool_use("Bash", {}, id="toolu_1", raw_json=raw_json)),
        reply(text("I'll stop.")),
        reply(text("Still here.")),
    )

    done = run_cli("run", "go", "--permission-mode", "bypassPermissions")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "I'll stop.\n"
    assert fake_api.requests[1].status == 200
    [result] = tool_results(fake_api, 1)
    assert result["tool_use_id"] == "toolu_1" and result["is_error"] is True
    assert f"Invalid input for Bash: {problem}" in str(result["content"])
    [call] = [b for b in fake_api.requests[1].body["messages"][1]["content"] if b["type"] == "tool_use"]
    assert call["id"] == "toolu_1" and call["input"] == {}
    assert "✗ Bash" in done.stderr and "Traceback" not in done.stderr

    again = run_cli("run", "-c", "still there?")

    assert again.returncode == 0, again.stderr
    assert fake_api.requests[2].status == 200


@pytest.mark.parametrize("fault", ["garble_after", "stray_delta_after"])
def test_a_malformed_stream_event_is_retried_like_a_dropped_stream(
    run_cli: RunCli, fake_api: FakeAnthropic, fault: str
) -> None:
    broken = reply(text("partial answer that breaks"), **{fault: 2})  # type: ignore[arg-type]
    fake_api.script(broken, reply(text("whole answer")))

    done = run_cli("run", "hi", env={"AGENTCLI_RETRY_BASE_DELAY": "0.01"})

    assert done.returncode == 0, done.stderr
    assert done.stdout == "whole answer\n"
    assert "retrying" in done.stderr and "Traceback" not in done.stderr
    assert len(fake_api.requests) == 2
