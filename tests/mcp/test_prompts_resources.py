"""MCP prompts as `/mcp__server__prompt` commands and resources as `@server:uri`, through `agentcli run`."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RunMain
from tests.fake_anthropic import FakeAnthropic, reply, text
from tests.mcp.helpers import stdio_server, write_config


def _texts(api: FakeAnthropic, request: int = 0) -> list[str]:
    content = api.requests[request].body["messages"][-1]["content"]
    return [block["text"] for block in content if block["type"] == "text" and "<system-reminder>" not in block["text"]]


def test_a_prompt_becomes_the_message_with_positional_and_named_arguments(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, home: Path
) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    fake_api.script(reply(text("Reviewed.")), reply(text("Reviewed again.")))

    positional = run_main("run", "/mcp__demo__review src/app.py")
    named = run_main("run", "/mcp__demo__review focus=style file=x.py")

    assert positional.returncode == 0, positional.stderr
    assert _texts(fake_api) == ["Please review src/app.py, looking for bugs."]
    assert named.returncode == 0, named.stderr
    assert _texts(fake_api, 1) == ["Please review x.py, looking for style."]


def test_a_prompt_without_its_required_argument_is_refused_and_nothing_is_sent(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, home: Path
) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())

    done = run_main("run", "/mcp__demo__review")
    unknown = run_main("run", "/mcp__demo__nothing")

    assert done.returncode == 2
    assert "/mcp__demo__review needs file: give them in order or as key=value (<file> [focus])" in done.stderr
    assert unknown.returncode == 2 and "not a prompt of a connected MCP server" in unknown.stderr
    assert fake_api.requests == []


def test_a_resource_mention_is_attached_and_a_bad_one_left_as_text(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, home: Path
) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    fake_api.script(reply(text("Read it.")))
    message = "Summarise @demo:note://greeting and @demo:blob://dot, not @ghost:note://x or @demo:note://missing."

    done = run_main("run", message)

    assert done.returncode == 0, done.stderr
    assert _texts(fake_api) == [
        message,
        '<resource uri="note://greeting" type="text/plain">\nHello from the demo server.\n</resource>',
        '<resource uri="blob://dot" type="image/png">[binary contents not shown]</resource>',
    ]
    assert "@ghost:note://x left as text: no MCP server 'ghost' (servers: demo)." in done.stderr
    assert "@demo:note://missing left as text: the MCP server 'demo' could not read it" in done.stderr
