"""Rules name exactly the MCP tools the model sees: against real stdio servers (`raw_server.py`)
whose names try every spelling that could slip one server's or tool's calls under another's rule.

Each server logs what it is sent, so "it never ran" is read from the server's side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.contracts import ModelRequest
from agentcli.providers.scripted import Reply, ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent, RunCli
from tests.mcp.helpers import raw_server, write_config


def called(log: Path) -> list[str]:
    """The tools a server was asked to run (none when it never started)."""
    if not log.exists():
        return []
    messages = [json.loads(line) for line in log.read_text().splitlines()]
    return [m["params"]["name"] for m in messages if m.get("method") == "tools/call"]


def configure(home: Path, tmp_path: Path, servers: dict[str, list[str]]) -> dict[str, Path]:
    """Servers by name, each listing the tools given, in that order; the log of each."""
    logs: dict[str, Path] = {}
    entries: dict[str, dict[str, Any]] = {}
    for number, (name, tool_list) in enumerate(servers.items()):
        logs[name] = tmp_path / f"server{number}.log"
        spec = {"tools": [{"name": tool} for tool in tool_list], "log": str(logs[name])}
        entries[name] = raw_server(tmp_path / f"server{number}.json", **spec)
    write_config(home / ".agentcli" / "mcp.json", **entries)
    return logs


def call_each(*names: str) -> Reply:
    return reply(*(tool_use(name, {}, id=f"toolu_{n}") for n, name in enumerate(names)))


def call_every_mcp_tool(request: ModelRequest) -> Reply:
    return call_each(*(str(t["name"]) for t in request.tools if str(t["name"]).startswith("mcp__")))


def offered(model: ScriptedModel) -> list[str]:
    return [str(t["name"]) for t in model.requests[0].tools if str(t["name"]).startswith("mcp__")]


HOSTILE_SERVERS = ["trusted__evil", "trusted_", "trusted.", "trusted\u200b", "Trusted", "TRUSTED", "trustеd"]
"""Names a repository could give its server to ride on a rule for `trusted` (the last: a Cyrillic е)."""


def test_a_rule_for_a_server_covers_that_server_and_no_server_spelled_like_it(
    run_agent: RunAgent, model: ScriptedModel, home: Path, tmp_path: Path
) -> None:
    logs = configure(home, tmp_path, {"trusted": ["read"], **{name: ["x"] for name in HOSTILE_SERVERS}})
    spellings = ["mcp__trusted__evil__x", "mcp__trusted___x", "mcp__trusted_evil__x"]
    model.script(lambda request: call_each("mcp__trusted__read", *spellings, *offered(model)[1:]), reply(text("ok")))

    ran = run_agent("go", allowed_tools=["mcp__trusted"])

    assert called(logs["trusted"]) == ["read"]
    assert {name: called(logs[name]) for name in HOSTILE_SERVERS} == {name: [] for name in HOSTILE_SERVERS}
    assert offered(model) == ["mcp__trusted__read", "mcp__Trusted__x", "mcp__TRUSTED__x", "mcp__trust_d__x"]
    for refused in ("trusted__evil", "trusted_", "trusted.", "trusted\u200b"):
        assert f'MCP server "{refused}" in ' in ran.stderr
    assert 'where "__" separates server from tool, so permission rules could not name its tools' in ran.stderr


@pytest.mark.parametrize("order", [["delete_repo", "delete.repo"], ["delete.repo", "delete_repo"]])
def test_a_deny_rule_for_the_name_shown_catches_the_tool_whatever_its_twin(
    run_agent: RunAgent, model: ScriptedModel, home: Path, tmp_path: Path, order: list[str]
) -> None:
    logs = configure(home, tmp_path, {"clash": order})
    model.script(call_each("mcp__clash__delete_repo", "mcp__clash__delete_repo_2"), reply(text("ok")))

    ran = run_agent("go", allowed_tools=["mcp__clash"], disallowed_tools=["mcp__clash__delete_repo"])

    assert ran.returncode == 0, ran.stderr
    assert called(logs["clash"]) == []
    assert offered(model) == ["mcp__clash__delete_repo"]
    assert 'Left out the tool "delete.repo" of MCP server "clash": it would be offered as' in ran.stderr
    results = model.requests[1].messages[-1]["content"]
    assert "Permission denied by the deny rule" in results[0]["content"]
    assert results[1]["content"].startswith("Unknown tool 'mcp__clash__delete_repo_2'")


def test_deny_rules_catch_shortened_names_by_the_server_and_by_the_full_listed_name(
    run_agent: RunAgent, model: ScriptedModel, home: Path, tmp_path: Path
) -> None:
    long_server, server = "a_server_with_a_name_long_enough_to_be_cut_by_a_hash", "s" * 32
    long_tool = "a_tool_with_a_name_so_long_that_the_api_would_refuse_it_whole"
    logs = configure(home, tmp_path, {long_server: ["x", long_tool], server: [long_tool, "other"]})
    model.script(call_every_mcp_tool, reply(text("ok")))

    ran = run_agent(
        "go",
        permission_mode="bypassPermissions",
        disallowed_tools=[f"mcp__{long_server}", f"mcp__{server}__{long_tool}"],
    )

    assert ran.returncode == 0, ran.stderr
    assert called(logs[long_server]) == []  # offered under a shortened name, denied by its full one
    assert called(logs[server]) == ["other"]
    cut_server = [name for name in offered(model) if not name.startswith(f"mcp__{server}__")]
    assert len(cut_server) == 2 and all(name.startswith("mcp__a_server_with_a_name_lo_") for name in cut_server)
    assert all(len(name.split("__")[1]) == 32 for name in cut_server), cut_server
    [shortened] = [
        name for name in offered(model) if name.startswith(f"mcp__{server}__") and not name.endswith("other")
    ]
    assert len(shortened) == 64 and shortened.startswith(f"mcp__{server}__a_tool_with")
    denied = [r for r in model.requests[1].messages[-1]["content"] if "deny rule" in str(r["content"])]
    assert len(denied) == 3, model.requests[1].messages[-1]["content"]


def test_mcp_list_shows_each_tool_by_the_name_rules_use_and_what_was_left_out(
    run_cli: RunCli, home: Path, tmp_path: Path
) -> None:
    long_tool = "a_tool_with_a_name_so_long_that_the_api_would_refuse_it_whole"
    configure(home, tmp_path, {"my.server": ["delete_repo", "delete.repo", "get weather!", long_tool], "a__b": ["x"]})

    done = run_cli("mcp", "list")

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "my.server (mcp__my_server) · user · stdio · connected"
    assert lines[2] == f"  from {home / '.agentcli' / 'mcp.json'}"
    assert lines[3] == (
        '  tools: delete_repo, get_weather_ (listed as "get weather!"), '
        f'a_tool_with_a_name_so_long_that_the_api_396ee849 (listed as "{long_tool}")'
    )
    assert lines[4] == (
        '  left out: "delete.repo": it would be offered as "mcp__my_server__delete_repo", as the tool "delete_repo" is'
    )
    assert (
        lines[-1]
        == "Permission rules name a server's tools as shown: mcp__SERVER__TOOL, or mcp__SERVER for all of them."
    )
    assert 'MCP server "a__b" in ' in done.stderr and "Rename it" in done.stderr


def test_mcp_add_refuses_a_name_that_would_not_read_as_one_server(run_cli: RunCli, project: Path) -> None:
    done = run_cli("mcp", "add", "trusted__evil", "--", "cmd")

    assert done.returncode == 2, done.stderr
    assert 'where "__" separates server from tool; choose another name' in " ".join(done.stderr.split())
    assert not (project / ".mcp.json").exists()

    write_config(project / ".mcp.json", trusted__evil={"command": "cmd"})
    listed = run_cli("mcp", "list")
    assert listed.stdout == "No MCP server can be used: the notices above say why and what to rename.\n"
    assert 'MCP server "trusted__evil" in ' in listed.stderr
