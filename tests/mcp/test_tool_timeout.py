"""An MCP call the server never answers: given up after `MCP_TOOL_TIMEOUT` / `mcpToolTimeout`, and
the server told to cancel it. (Ctrl-C gives it up at once: `test_manager.test_no_server_outlives_agentcli`.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import RunCli
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.mcp.helpers import raw_server, write_config


def received(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def cancelled(log: Path) -> list[object]:
    """The ids of the requests the server was told to cancel."""
    return [
        message["params"]["requestId"]  # type: ignore[index]
        for message in received(log)
        if message.get("method") == "notifications/cancelled"
    ]


def call_ids(log: Path) -> list[object]:
    return [message["id"] for message in received(log) if message.get("method") == "tools/call"]


@pytest.fixture
def stuck_server(home: Path, tmp_path: Path) -> Path:
    """A server whose `stuck` tool never answers; the log of what it was sent."""
    log = tmp_path / "server.log"
    tools = [{"name": "stuck", "reply": {"never": True}}]
    write_config(home / ".agentcli" / "mcp.json", slow=raw_server(tmp_path / "spec.json", tools=tools, log=str(log)))
    return log


@pytest.mark.parametrize("where", ["environment", "settings"])
def test_a_call_not_answered_in_time_is_an_error_naming_the_server_and_is_cancelled(
    run_cli: RunCli, fake_api: FakeAnthropic, home: Path, stuck_server: Path, where: str
) -> None:
    env = {"MCP_TOOL_TIMEOUT": "300"} if where == "environment" else {}
    if where == "settings":
        (home / ".agentcli" / "settings.json").write_text(json.dumps({"mcpToolTimeout": 300}))
    fake_api.script(reply(tool_use("mcp__slow__stuck", {}, id="toolu_1")), reply(text("Gave up on it.")))

    done = run_cli("run", "--allowed-tools", "mcp__slow", "go", env=env)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Gave up on it.\n"
    [result] = fake_api.requests[1].body["messages"][-1]["content"]
    assert result["is_error"] is True
    assert result["content"].startswith(
        'The MCP server "slow" did not answer this call of its tool "stuck" within 0.3 s, so agentcli stopped '
        "waiting and told the server to cancel it."
    )
    assert "MCP_TOOL_TIMEOUT, in milliseconds, or mcpToolTimeout in settings" in result["content"]
    assert cancelled(stuck_server) == call_ids(stuck_server) != []
