"""MCP servers in the REPL: the prompt comes first, a project server is asked about once."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import StartRepl
from tests.fake_anthropic import FakeAnthropic, reply, text
from tests.mcp.helpers import stdio_server, write_config
from tests.waiting import wait_until

QUESTION = "Start this MCP server and offer its tools to the model?"


def test_a_project_server_is_asked_about_once_and_the_answer_is_remembered(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "server.pid"
    write_config(project / ".mcp.json", demo=stdio_server(DEMO_PID_FILE=str(pid_file)))
    fake_api.script(reply(text("First answer.")), reply(text("Second answer.")))

    repl = start_repl()  # the prompt is up
    assert not pid_file.exists()  # and nothing was started for the unapproved server
    repl.submit("hi")
    screen = repl.wait_for(QUESTION)
    assert "demo runs" in screen and ".mcp.json" in screen
    repl.press("1")
    screen = repl.wait_for_prompt("First answer.")
    assert QUESTION not in screen and screen.count("✓ Starting MCP server demo") == 1

    assert "mcp__demo__echo" in [tool["name"] for tool in fake_api.requests[0].body["tools"]]
    local = json.loads((project / ".agentcli" / "settings.local.json").read_text())
    assert local["enabledMcpjsonServers"] == ["demo"]
    repl.submit("/clear")
    repl.submit("again")
    repl.wait_for_prompt("Second answer.")  # not asked again: the answer came without one
    assert "mcp__demo__echo" in [tool["name"] for tool in fake_api.requests[1].body["tools"]]


def test_the_users_servers_start_in_the_background_once_the_prompt_is_up(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "server.pid"
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server(DEMO_PID_FILE=str(pid_file)))
    fake_api.script(reply(text("Answer.")))

    repl = start_repl()
    wait_until(pid_file.exists, "the server starting with nothing typed")
    repl.submit("hi")
    repl.wait_for_prompt("Answer.")

    assert "mcp__demo__echo" in [tool["name"] for tool in fake_api.requests[0].body["tools"]]
    assert QUESTION not in repl.text()
