"""A real third-party MCP server from npm, `@modelcontextprotocol/server-everything`, over stdio.

The demo server in these tests is written with the same Python SDK agentcli uses; this one is
the protocol's reference server in TypeScript, so it checks agentcli against another
implementation. The version is pinned in `tests/mcp/everything.py` (the package is versioned by
date and renames its tools and changes their replies between releases). It is installed once
into a cache outside the checkout (`scripts/setup` does it too); without node, npm or network
these tests skip and say why, except on CI (`CI` set), where they fail: CI must install it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import RunCli
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.mcp import everything
from tests.mcp.helpers import write_config


@pytest.fixture(scope="session")
def everything_command() -> list[str]:
    try:
        return everything.install()
    except everything.Unavailable as error:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the third-party MCP server (see scripts/setup): {error}")
        pytest.skip(str(error))


@pytest.fixture
def configured(everything_command: list[str], home: Path) -> None:
    command, *args = everything_command
    write_config(home / ".agentcli" / "mcp.json", everything={"command": command, "args": args})


def test_mcp_list_shows_it_connected_with_its_tools(run_cli: RunCli, configured: None) -> None:
    done = run_cli("mcp", "list")

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "everything · user · stdio · connected"
    [tools] = [line for line in done.stdout.splitlines() if line.startswith("  tools: ")]
    assert {"echo", "get-sum"} <= set(tools.removeprefix("  tools: ").split(", "))


def test_the_model_calls_its_tools_and_gets_the_real_results(
    run_cli: RunCli, fake_api: FakeAnthropic, configured: None
) -> None:
    fake_api.script(
        reply(
            tool_use("mcp__everything__echo", {"message": "hello from agentcli"}, id="toolu_1"),
            tool_use("mcp__everything__get-sum", {"a": 2, "b": 40}, id="toolu_2"),
        ),
        reply(text("Done.")),
    )

    done = run_cli("run", "--allowed-tools", "mcp__everything", "echo and add")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Done.\n"
    manifest = {tool["name"]: tool for tool in fake_api.requests[0].body["tools"]}
    assert manifest["mcp__everything__echo"]["description"] == "Echoes back the input string"
    assert manifest["mcp__everything__echo"]["input_schema"]["required"] == ["message"]
    content = fake_api.requests[1].body["messages"][-1]["content"]
    results = [block for block in content if block["type"] == "tool_result"]
    assert [(r["tool_use_id"], r["content"], "is_error" in r) for r in results] == [
        ("toolu_1", "Echo: hello from agentcli", False),
        ("toolu_2", "The sum of 2 and 40 is 42.", False),
    ]
