"""Project servers (a checked-in .mcp.json) start only once approved; the user's own always do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.mcp.approval import remember_approval
from agentcli.mcp.config import load_servers
from tests.conftest import RunMain
from tests.fake_anthropic import FakeAnthropic, reply, text
from tests.mcp.helpers import stdio_server, write_config


def _mcp_tools(api: FakeAnthropic) -> list[str]:
    return [tool["name"] for tool in api.requests[0].body["tools"] if tool["name"].startswith("mcp__")]


def _settings(path: Path, **values: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values))


def test_an_unapproved_project_server_is_not_started_and_the_notice_says_how(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "server.pid"
    write_config(project / ".mcp.json", demo=stdio_server(DEMO_PID_FILE=str(pid_file)))
    fake_api.script(reply(text("fine")))

    done = run_main("run", "hi")

    assert done.returncode == 0, done.stderr
    assert _mcp_tools(fake_api) == []
    assert not pid_file.exists()  # never started
    assert 'Not started: the MCP server "demo" of this project\'s .mcp.json, not approved yet.' in done.stderr
    assert "enabledMcpjsonServers" in done.stderr


@pytest.mark.parametrize(
    "settings",
    [{"enabledMcpjsonServers": ["demo"]}, {"enableAllProjectMcpServers": True}],
)
def test_local_settings_approve_project_servers(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, settings: dict[str, object]
) -> None:
    write_config(project / ".mcp.json", demo=stdio_server())
    _settings(project / ".agentcli" / "settings.local.json", **settings)
    fake_api.script(reply(text("fine")))

    done = run_main("run", "hi")

    assert done.returncode == 0, done.stderr
    assert "mcp__demo__echo" in _mcp_tools(fake_api)


def test_the_repositorys_own_settings_cannot_approve_its_servers(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path
) -> None:
    write_config(project / ".mcp.json", demo=stdio_server())
    _settings(project / ".agentcli" / "settings.json", enabledMcpjsonServers=["demo"], enableAllProjectMcpServers=True)
    fake_api.script(reply(text("fine")))

    done = run_main("run", "hi")

    assert done.returncode == 0, done.stderr
    assert _mcp_tools(fake_api) == []
    assert "Ignored enabledMcpjsonServers" in done.stderr and "Ignored enableAllProjectMcpServers" in done.stderr


def test_bypass_permissions_starts_them_unless_the_user_disabled_one(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path
) -> None:
    write_config(project / ".mcp.json", demo=stdio_server(), off=stdio_server())
    _settings(project / ".agentcli" / "settings.local.json", disabledMcpjsonServers=["off"])
    fake_api.script(reply(text("fine")))

    done = run_main("run", "--permission-mode", "bypassPermissions", "hi")

    assert done.returncode == 0, done.stderr
    tools = _mcp_tools(fake_api)
    assert "mcp__demo__echo" in tools and not [name for name in tools if name.startswith("mcp__off__")]


def test_user_servers_need_no_approval(run_main: RunMain, fake_api: FakeAnthropic, home: Path) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    fake_api.script(reply(text("fine")))

    done = run_main("run", "hi")

    assert done.returncode == 0, done.stderr
    assert "mcp__demo__echo" in _mcp_tools(fake_api)
    assert "Not started" not in done.stderr


def test_a_yes_given_through_agentcli_holds_only_while_the_server_runs_the_same_thing(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    """A repository that swaps the program behind an approved name is asked about again."""
    local = project / ".agentcli" / "settings.local.json"
    write_config(project / ".mcp.json", demo=stdio_server())
    remember_approval(local, load_servers(project).servers["demo"], approved=True)
    fake_api.script(reply(text("fine")), reply(text("fine")))

    first = run_main("run", "hi")

    assert first.returncode == 0, first.stderr
    assert "mcp__demo__echo" in _mcp_tools(fake_api)
    assert json.loads(local.read_text())["enabledMcpjsonServerDigests"]["demo"].startswith("sha256:")

    pid_file = tmp_path / "server.pid"
    write_config(project / ".mcp.json", demo=stdio_server(DEMO_PID_FILE=str(pid_file)))  # what it runs changed

    second = run_main("run", "hi")

    assert second.returncode == 0, second.stderr
    assert [tool["name"] for tool in fake_api.requests[-1].body["tools"] if tool["name"].startswith("mcp__")] == []
    assert not pid_file.exists()  # never started
    assert 'MCP server "demo" of .mcp.json changed since you approved it (it now runs ' in second.stderr
    assert 'Not started: the MCP server "demo"' in second.stderr


def test_a_no_forgets_the_pinned_yes(project: Path) -> None:
    local = project / ".agentcli" / "settings.local.json"
    write_config(project / ".mcp.json", demo=stdio_server())
    server = load_servers(project).servers["demo"]

    remember_approval(local, server, approved=True)
    remember_approval(local, server, approved=False)

    saved = json.loads(local.read_text())
    assert saved["disabledMcpjsonServers"] == ["demo"] and saved["enabledMcpjsonServers"] == []
    assert "enabledMcpjsonServerDigests" not in saved
