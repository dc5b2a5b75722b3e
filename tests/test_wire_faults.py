"""Faults on the wire: the real SDK and provider in-process against the fake server, retried or reported.

The loop's retries wait no time here (`run_wire`); the SDK's own retries honour the server's
`retry-after` (end to end in test_run.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import RunAgent
from tests.fake_anthropic import OVERLOADED_ERROR, FakeAnthropic, Reply, http_error, reply, text, tool_use


def test_529_then_success(run_wire: RunAgent, fake_api: FakeAnthropic) -> None:
    fake_api.script(http_error(529, OVERLOADED_ERROR, headers={"retry-after-ms": "10"}), reply(text("fine")))

    done = run_wire("hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
    assert len(fake_api.requests) == 2


def test_error_event_mid_stream_then_success(run_wire: RunAgent, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("partial answer that breaks"), error_after=2), reply(text("whole answer")))

    done = run_wire("hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "whole answer\n"
    assert "retrying" in done.stderr
    assert len(fake_api.requests) == 2


def test_dropped_stream_then_success(run_wire: RunAgent, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("partial answer that drops"), drop_after=2), reply(text("whole answer")))

    done = run_wire("hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "whole answer\n"
    assert "dropped" in done.stderr


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(reply(text("partial answer that breaks"), garble_after=2), id="garble_after"),
        pytest.param(reply(text("partial answer that breaks"), stray_delta_after=2), id="stray_delta_after"),
    ],
)
def test_a_malformed_stream_event_is_retried_like_a_dropped_stream(
    run_wire: RunAgent, fake_api: FakeAnthropic, broken: Reply
) -> None:
    fake_api.script(broken, reply(text("whole answer")))

    done = run_wire("hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "whole answer\n"
    assert "retrying" in done.stderr and "Traceback" not in done.stderr
    assert len(fake_api.requests) == 2


def test_400_is_shown_cleanly(run_wire: RunAgent, fake_api: FakeAnthropic) -> None:
    bad = {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}
    fake_api.script(http_error(400, bad))

    done = run_wire("hi")

    assert done.returncode == 1
    assert "API error 400: prompt is too long" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_a_call_whose_input_comes_whole_with_its_start_runs_with_that_input(
    run_wire: RunAgent, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "notes.txt").write_text("the answer is 42\n")
    fake_api.script(
        reply(tool_use("Read", {"file_path": "notes.txt"}, id="toolu_whole", input_at_start=True)),
        reply(text("It says 42.")),
    )

    done = run_wire("what do the notes say?")

    assert done.returncode == 0, done.stderr
    [call] = [block for block in fake_api.requests[1].body["messages"][1]["content"] if block["type"] == "tool_use"]
    assert call["input"] == {"file_path": "notes.txt"}
    [result] = [b for b in fake_api.requests[1].body["messages"][2]["content"] if b["type"] == "tool_result"]
    assert "the answer is 42" in json.dumps(result) and result.get("is_error") is not True


def test_an_unusable_input_sent_whole_gets_an_error_result(
    run_wire: RunAgent, fake_api: FakeAnthropic, project: Path
) -> None:
    fake_api.script(
        reply(tool_use("Read", {}, raw_json='{"file_path": "a.txt", "limit": NaN}', input_at_start=True)),
        reply(text("I will give a finite number.")),
    )

    done = run_wire("read it")

    assert done.returncode == 0, done.stderr
    sent = fake_api.requests[1].body["messages"]
    [call] = [block for block in sent[1]["content"] if block["type"] == "tool_use"]
    assert call["input"] == {}
    [result] = [b for b in sent[2]["content"] if b["type"] == "tool_result"]
    assert result["is_error"] is True and "NaN" in json.dumps(result)
