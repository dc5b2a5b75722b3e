"""An MCP server's questions in the REPL: its form, field by field, reviewed before it is sent;
declining; a page to open. The demo server asks (`form`, `page`) during a call the scripted model makes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import StartRepl
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.mcp.helpers import stdio_server, write_config
from tests.terminal import Terminal

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name"},
        "env": {"type": "string", "enum": ["staging", "production"], "default": "staging"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
        "notify": {"type": "boolean", "default": True},
        "api_token": {"type": "string"},
    },
    "required": ["name"],
}


def answer(fake_api: FakeAnthropic) -> dict[str, object]:
    [result] = [b for b in fake_api.requests[1].body["messages"][-1]["content"] if b["type"] == "tool_result"]
    return dict(json.loads(str(result["content"])))


def asking(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path, tool: str, arguments: dict[str, object]
) -> Terminal:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    fake_api.script(reply(tool_use(f"mcp__demo__{tool}", arguments, id="toolu_1")), reply(text("Thanks.")))
    repl = start_repl("--allowed-tools", "mcp__demo")
    repl.submit("go")
    return repl


def test_a_form_is_filled_in_field_by_field_checked_reviewed_and_sent(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path
) -> None:
    repl = asking(start_repl, fake_api, home, "form", {"message": "Where should I deploy?", "schema": SCHEMA})

    screen = repl.wait_for("Fill in the form")
    assert 'MCP server "demo" asks' in screen and "Where should I deploy?" in screen
    assert 'This form asks for what looks like a secret ("api_token")' in screen
    repl.press("1")
    repl.wait_for("Your name (required)")
    repl.type("Ada")
    repl.press("enter")
    repl.wait_for("production")
    repl.press("2")  # env
    repl.wait_for("(a whole number, 1 to 5) › 2")  # the default, typed already
    repl.press("\x7f")
    repl.type("9")
    repl.press("enter")
    repl.wait_for("at most 5")
    repl.press("\x7f")
    repl.type("4")
    repl.press("enter")
    repl.wait_for("notify")
    repl.press("enter")  # yes, the default
    repl.wait_for("api_token")
    repl.type("hunter2")
    repl.press("enter")
    screen = repl.wait_for("Change the answers")
    assert "env: production" in screen and "replicas: 4" in screen and "notify: yes" in screen
    assert "api_token: ••••••" in screen and "hunter2" not in screen
    repl.press("1")

    screen = repl.wait_for_prompt("Thanks.")
    assert '✓ Sent the form · MCP server "demo"' in screen and "hunter2" not in screen
    assert answer(fake_api) == {
        "action": "accept",
        "content": {"name": "Ada", "env": "production", "replicas": 4, "notify": True, "api_token": "hunter2"},
    }


def test_a_form_can_be_declined(start_repl: StartRepl, fake_api: FakeAnthropic, home: Path) -> None:
    repl = asking(start_repl, fake_api, home, "form", {"message": "Your name?", "schema": SCHEMA})

    repl.wait_for("Fill in the form")
    repl.press("2")

    repl.wait_for_prompt("Thanks.")
    assert answer(fake_api) == {"action": "decline"}


def test_a_page_to_open_shows_its_host_and_opens_only_on_a_yes(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path
) -> None:
    url = "https://pay.example.com/checkout?order=7"
    repl = asking(start_repl, fake_api, home, "page", {"message": "Pay for the plan", "url": url})

    screen = repl.wait_for("Open it in the browser")
    assert 'MCP server "demo" asks you to open a page' in screen and url in screen
    assert "It is on pay.example.com." in screen
    repl.press("esc")

    screen = repl.wait_for_prompt("Thanks.")
    assert '✗ Cancelled · MCP server "demo"' in screen
    assert answer(fake_api) == {"action": "cancel"}
