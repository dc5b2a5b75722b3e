"""Deferred MCP tools (`agentcli.mcp.search`): above the threshold the model is sent `ToolSearch`
and `McpCall` instead of the MCP tools, finds and loads a tool, and calls it through the gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.mcp.search import DEFAULT_THRESHOLD_PERCENT, threshold_percent
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent, RunMain
from tests.fake_anthropic import FakeAnthropic
from tests.fake_anthropic import reply as fake_reply
from tests.fake_anthropic import text as fake_text
from tests.fake_anthropic import tool_use as fake_tool_use
from tests.mcp.helpers import stdio_server, write_config

MANY = {"DEMO_EXTRA_TOOLS": "30"}


def _three_large_servers(home: Path) -> None:
    write_config(home / ".agentcli" / "mcp.json", **{f"t{n}": stdio_server(**MANY) for n in (1, 2, 3)})


def _settings(home: Path, **values: Any) -> None:
    (home / ".agentcli" / "settings.json").write_text(json.dumps(values))


def _names(tools: list[dict[str, Any]]) -> list[str]:
    return [str(tool["name"]) for tool in tools]


def _results(api: FakeAnthropic, request: int) -> list[dict[str, Any]]:
    return [b for b in api.requests[request].body["messages"][-1]["content"] if b["type"] == "tool_result"]


def test_a_large_toolset_is_searched_loaded_and_called_end_to_end(
    run_main: RunMain, fake_api: FakeAnthropic, home: Path
) -> None:
    _three_large_servers(home)
    _settings(home, mcpToolSearchThreshold=1)  # 1% of the 1M window: 10k tokens; 126 tools take more
    fake_api.script(
        fake_reply(fake_tool_use("ToolSearch", {"query": "select:mcp__t2__op_7"}, id="toolu_1")),
        fake_reply(fake_tool_use("McpCall", {"name": "mcp__t2__op_7", "input": {"item_id": "A-1"}}, id="toolu_2")),
        fake_reply(fake_text("Done.")),
    )

    done = run_main("run", "--allowed-tools", "mcp__t2__op_7", "update A-1")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Done.\n"
    first = fake_api.requests[0].body["tools"]
    names = _names(first)
    assert "ToolSearch" in names and "McpCall" in names and "Read" in names
    assert not [name for name in names if name.startswith("mcp__")]
    search = next(tool for tool in first if tool["name"] == "ToolSearch")
    assert "- mcp__t3__op_30: Operation 30 on a record of the demo tracker." in search["description"]
    assert search["description"].count("\n- mcp__") == 3 * 42  # every tool of the three servers
    [found] = _results(fake_api, 1)
    loaded = json.loads(found["content"][found["content"].index("[") :])
    assert [tool["name"] for tool in loaded] == ["mcp__t2__op_7"]
    assert loaded[0]["input_schema"]["required"] == ["item_id"]
    [called] = _results(fake_api, 2)
    assert (called["tool_use_id"], called["content"], "is_error" in called) == ("toolu_2", "op_7 did A-1", False)
    assert all(request.body["tools"] == first for request in fake_api.requests)  # byte-stable: the cache


def test_a_deferred_call_is_gated_as_the_tool_it_means(
    run_agent: RunAgent, model: ScriptedModel, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    monkeypatch.setenv("ENABLE_TOOL_SEARCH", "true")
    model.script(
        reply(tool_use("McpCall", {"name": "mcp__demo__shout", "input": {"text": "hi"}}, id="toolu_0")),
        reply(tool_use("ToolSearch", {"query": "shout loudly"}, id="toolu_1")),
        reply(tool_use("McpCall", {"name": "mcp__demo__shout", "input": {"txt": "hi"}}, id="toolu_2")),
        reply(tool_use("McpCall", {"name": "mcp__demo__shout", "input": {"text": "hi"}}, id="toolu_3")),
        reply(tool_use("McpCall", {"name": "mcp__demo__echo", "input": {"text": "hi"}}, id="toolu_4")),
        reply(text("ok")),
    )

    ran = run_agent("go", allowed_tools=["mcp__demo__echo"], permission_mode="acceptEdits")

    assert ran.returncode == 0, ran.stderr
    not_loaded, found, invalid, denied, echo_not_loaded = (
        model.requests[n].messages[-1]["content"][0] for n in range(1, 6)
    )
    assert not_loaded["is_error"] and "mcp__demo__shout is not loaded yet" in not_loaded["content"]
    assert '"name": "mcp__demo__shout"' in found["content"]
    assert invalid["is_error"] and invalid["content"].startswith("Invalid input for mcp__demo__shout:")
    assert denied["is_error"] and denied["content"].startswith("Permission denied: mcp__demo__shout needs approval")
    assert echo_not_loaded["is_error"] and "mcp__demo__echo is not loaded yet" in echo_not_loaded["content"]


@pytest.mark.parametrize(
    ("percent", "deferred"),
    [(None, False), (1, False), (0.01, True)],  # the demo's 9 tools take ~700 tokens; 0.01% of 1M is 100
)
def test_the_threshold_chooses_the_mode(
    run_agent: RunAgent, model: ScriptedModel, home: Path, percent: float | None, deferred: bool
) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    if percent is not None:
        _settings(home, mcpToolSearchThreshold=percent)
    model.script(reply(text("hi")))

    ran = run_agent("hi")

    assert ran.returncode == 0, ran.stderr
    names = _names(model.requests[0].tools)
    assert ("ToolSearch" in names) is deferred
    assert ("mcp__demo__echo" in names) is not deferred


def test_enable_tool_search_overrides_the_setting(
    run_agent: RunAgent, model: ScriptedModel, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    _settings(home, mcpToolSearchThreshold=0.01)
    monkeypatch.setenv("ENABLE_TOOL_SEARCH", "false")
    model.script(reply(text("hi")))

    ran = run_agent("hi")

    assert ran.returncode == 0, ran.stderr
    assert "mcp__demo__echo" in _names(model.requests[0].tools)
    assert "ToolSearch" not in _names(model.requests[0].tools)


def test_enable_tool_search_values() -> None:
    assert threshold_percent(None, None) == DEFAULT_THRESHOLD_PERCENT
    assert threshold_percent("auto", 5) == 5
    assert threshold_percent("auto:3", 5) == 3
    assert threshold_percent("true", 5) == 0
    assert threshold_percent("false", 5) is None
    assert threshold_percent("auto:lots", "x") == DEFAULT_THRESHOLD_PERCENT
