"""A silent stream is retried instead of hanging; an unreachable server fails in seconds with one line."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.providers.scripted import ScriptedModel
from tests.conftest import RunAgent, RunCli
from tests.fake_anthropic import FakeAnthropic, reply, text
from tests.session_helpers import model_settings


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 that is bound but not listening: connecting is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_a_stream_that_goes_silent_is_retried_after_the_idle_timeout(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    model_settings(project, streamIdleTimeoutSeconds=0.5)
    fake_api.script(reply(text("an answer that stops half-way"), stall_after=2), reply(text("whole answer")))

    done = run_cli("run", "hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "whole answer\n"
    assert "the stream sent nothing for 0.5 s" in done.stderr and "retrying" in done.stderr
    assert len(fake_api.requests) == 2
    assert fake_api.requests[0].disconnected  # agentcli hung up on the silent stream


def test_an_unreachable_server_fails_with_one_clear_line(run_cli: RunCli, closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}"

    done = run_cli("run", "hi", env={"ANTHROPIC_BASE_URL": url})

    assert done.returncode == 1
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"Error: Could not reach the API at {url}")
    assert "connection refused" in line and "ANTHROPIC_BASE_URL" in line


@pytest.mark.parametrize("value", [0, -5, "90", True, 86_401, 1e308, float("inf"), float("nan")])
def test_a_bad_idle_timeout_setting_is_a_usage_error(
    run_agent: RunAgent, model: ScriptedModel, project: Path, value: object
) -> None:
    model_settings(project, streamIdleTimeoutSeconds=value)

    done = run_agent("hi")

    assert done.returncode == 2
    assert "streamIdleTimeoutSeconds" in done.stderr
    assert "must be a positive number of seconds, at most 86,400, not" in done.stderr
    assert model.requests == []
