"""MCP servers in the REPL: the prompt comes first, a project server is asked about once."""

from __future__ import annotations

import json
import shlex
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


def test_slash_mcp_shows_a_failed_server_and_reconnects_it(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path, tmp_path: Path
) -> None:
    ready = tmp_path / "ready"
    demo = stdio_server()
    starts_once_ready = (
        f'[ -e "{ready}" ] && exec {shlex.join([demo["command"], *demo["args"]])}; echo not ready yet >&2; exit 1'
    )
    write_config(home / ".agentcli" / "mcp.json", flaky={"command": "sh", "args": ["-c", starts_once_ready]})

    repl = start_repl()
    for asked in range(1, 200):  # until the first attempt has failed (it may still be connecting)
        repl.submit("/mcp")
        repl.wait_for_count("server  scope", asked)
        screen = repl.wait_for_prompt("server  scope")  # the table drawn whole, not only its header
        # the row's state, not its reason: the reason is cut at the screen's edge
        row = [line.split() for line in screen.splitlines() if line.lstrip().startswith("flaky")][-1]
        if row[2] != "connecting":
            break
        repl.pump(0.1)
    assert row[:3] == ["flaky", "user", "failed"]
    assert "/mcp reconnect NAME" in screen

    ready.touch()
    repl.submit("/mcp reconnect flaky")
    screen = repl.wait_for("Its tools join at the next conversation")
    line = next(line for line in screen.splitlines()[::-1] if line.lstrip().startswith("flaky"))
    assert line.split()[:4] == ["flaky", "user", "connected", "12"]
    assert (
        'Tools of flaky: echo, shout, fail, picture, crash, wait, show_env, get_weather_ (listed as "get weather!")'
        in (screen)
    )


def test_slash_mcp_without_servers_says_how_to_add_one(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    repl = start_repl()
    repl.submit("/mcp")
    repl.wait_for("No MCP servers. Add one with `agentcli mcp add")


def test_mcp_prompts_are_listed_in_help_completed_and_sent(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path
) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    fake_api.script(reply(text("Reviewed.")))

    repl = start_repl()
    for shown in range(1, 200):  # until the server is connected and its prompts listed
        repl.submit("/help")
        screen = repl.wait_for_count("Built-in commands", shown)
        if "MCP prompts" in screen:
            break
        repl.pump(0.1)
    screen = repl.wait_for("Ask for a review of a file.")  # the section may still be drawing
    assert "/mcp__demo__review <file> [focus]" in screen
    repl.type("/mcp__demo__rev")
    repl.wait_for_count("Ask for a review of a file.", 2)  # the menu shows the prompt's description
    repl.press("tab")
    repl.wait_for("> /mcp__demo__review")
    repl.type(" app.py")
    repl.press("\r")
    repl.wait_for_prompt("Reviewed.")
    content = fake_api.requests[0].body["messages"][-1]["content"]
    assert content[-1]["text"] == "Please review app.py, looking for bugs."
