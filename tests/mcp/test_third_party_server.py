"""A real third-party MCP server from npm, `@modelcontextprotocol/server-everything`, over stdio.

The demo server in these tests is written with the same Python SDK agentcli uses; this one is
the protocol's reference server in TypeScript, so it checks agentcli against another
implementation, elicitation included (its form of every field type, its page to open). The
version is pinned in `tests/mcp/everything.py` (the package is versioned by date and renames its
tools and changes their replies between releases). It is installed once
into a cache outside the checkout (`scripts/setup` does it too); without node, npm or network
these tests skip and say why, except on CI (`CI` set), where they fail: CI must install it.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.mcp.config import ServerConfig
from agentcli.mcp.elicitation import FormQuestion, Question, Reply, UrlQuestion
from agentcli.mcp.manager import McpManager
from tests.conftest import RunCli
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.mcp import everything
from tests.mcp.helpers import CONNECT_CEILING, write_config


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


@pytest.fixture
def asked() -> list[Question]:
    return []


@pytest.fixture
def everything_manager(everything_command: list[str], tmp_path: Path, asked: list[Question]) -> Iterator[McpManager]:
    """The server connected in-process, with a user who fills in only the required name and opens every page."""

    def user(question: Question) -> Reply:
        asked.append(question)
        return Reply("accept", {"name": "Ada Lovelace"} if isinstance(question, FormQuestion) else None)

    command, *args = everything_command
    made = McpManager(tmp_path, connect_timeout=CONNECT_CEILING, on_notice=print, elicitor=user)
    made.add(ServerConfig("everything", "user", tmp_path, "stdio", command=command, args=tuple(args)))
    made.connect("everything")
    assert made.wait_for("everything", CONNECT_CEILING).state == "connected"
    yield made
    made.close()


def test_its_form_is_read_whole_and_the_answer_with_the_forms_defaults_reaches_it(
    everything_manager: McpManager, asked: list[Question]
) -> None:
    outcome = everything_manager.call_tool("everything", "trigger-elicitation-request", {}, threading.Event())

    [form] = asked
    assert isinstance(form, FormQuestion)
    fields = {field.name: field for field in form.fields}
    assert fields["name"].required and fields["email"].format == "email"
    assert [c.label for c in fields["titledMultipleSelectEnum"].choices] == ["Tuna", "Salmon", "Trout"]
    assert [c.label for c in fields["legacyTitledEnum"].choices][:2] == ["Cats", "Dogs"]
    said = "\n".join(outcome.texts)
    assert not outcome.is_error, said
    assert "- Name: Ada Lovelace" in said and "- Favorite Integer: 42" in said  # the default
    raw = json.loads(said.split("Raw result: ", 1)[1])
    assert raw["content"]["titledMultipleSelectEnum"] == ["fish-1"] and raw["content"]["number"] == 3.14


def test_its_page_to_open_reaches_the_user_with_its_address(
    everything_manager: McpManager, asked: list[Question]
) -> None:
    url = "https://example.com/verify?step=2"
    arguments = {"url": url, "message": "Verify your account"}

    outcome = everything_manager.call_tool("everything", "trigger-url-elicitation", arguments, threading.Event())

    assert asked == [UrlQuestion("everything", "Verify your account", url, agents=("",))]
    assert '"action": "accept"' in "\n".join(outcome.texts) and not outcome.is_error


def test_run_declines_its_form_and_the_model_is_told(
    run_cli: RunCli, fake_api: FakeAnthropic, configured: None
) -> None:
    fake_api.script(
        reply(tool_use("mcp__everything__trigger-elicitation-request", {}, id="toolu_1")), reply(text("Declined."))
    )

    done = run_cli("run", "--allowed-tools", "mcp__everything", "ask me")

    assert done.returncode == 0, done.stderr
    [result] = [b for b in fake_api.requests[1].body["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert "User declined to provide the requested information" in str(result["content"])
    assert 'MCP server "everything" asked for input ("Please provide inputs' in done.stderr


def test_a_call_it_refuses_until_a_page_is_opened_shows_the_page_and_tells_the_model_to_call_again(
    everything_manager: McpManager, asked: list[Question]
) -> None:
    url = "https://example.com/verify"
    arguments = {"url": url, "message": "Verify your account", "errorPath": True}

    first = everything_manager.call_tool("everything", "trigger-url-elicitation", arguments, threading.Event())

    assert asked == [
        UrlQuestion(
            "everything",
            "Open this link to satisfy the prerequisite, then retry the request.",
            "https://modelcontextprotocol.io",
            agents=("",),
        )
    ]
    assert first.is_error
    assert first.texts[0].splitlines()[1:] == [
        '- "Open this link to satisfy the prerequisite, then retry the request." https://modelcontextprotocol.io: '
        "the user opened it.",
        "Call the tool again once the user says they are done there; do not open the pages yourself.",
    ]

    again = everything_manager.call_tool("everything", "trigger-url-elicitation", arguments, threading.Event())

    assert asked[1:] == [UrlQuestion("everything", "Verify your account", url, agents=("",))]
    assert not again.is_error


def test_run_tells_the_model_a_page_it_needed_opened_was_not(
    run_cli: RunCli, fake_api: FakeAnthropic, configured: None
) -> None:
    arguments = {"url": "https://example.com/verify", "errorPath": True}
    fake_api.script(
        reply(tool_use("mcp__everything__trigger-url-elicitation", arguments, id="toolu_1")), reply(text("Later."))
    )

    done = run_cli("run", "--allowed-tools", "mcp__everything", "verify")

    assert done.returncode == 0, done.stderr
    [result] = [b for b in fake_api.requests[1].body["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert result["is_error"] is True
    assert "https://modelcontextprotocol.io: not opened: agentcli run is non-interactive" in str(result["content"])
