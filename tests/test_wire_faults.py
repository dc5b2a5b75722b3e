"""Faults on the wire: the real SDK and provider in-process against the fake server, retried or reported.

The loop's retries wait no time here (`run_wire`); the SDK's own retries honour the server's
`retry-after` (end to end in test_run.py).
"""

from __future__ import annotations

import pytest

from tests.conftest import RunAgent
from tests.fake_anthropic import OVERLOADED_ERROR, FakeAnthropic, Reply, http_error, reply, text


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
