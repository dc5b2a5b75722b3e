"""A server's questions for the user (MCP elicitation): the form read from its schema, the
question naming the server and the agent whose call it serves, `run` declining with a reason,
and no question at all while none of the server's calls runs. The demo server asks (`form`,
`later`); the REPL's side is in `test_repl_elicitation.py`."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.contracts import ToolContext
from agentcli.mcp.elicitation import Field, FormQuestion, FormUnusable, Question, Reply, parse_form, with_defaults
from agentcli.mcp.manager import McpManager
from agentcli.mcp.tools import McpToolSource
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.workspace.local import LocalWorkspace
from tests.conftest import RunAgent
from tests.mcp.helpers import CONNECT_CEILING, stdio_server, write_config
from tests.mcp.test_manager import stdio
from tests.waiting import CEILING, wait_until

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 2},
        "env": {"type": "string", "enum": ["staging", "production"], "default": "staging"},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
        "ratio": {"type": "number"},
        "notify": {"type": "boolean", "default": True},
        "email": {"type": "string", "format": "email"},
        "regions": {"type": "array", "items": {"type": "string", "enum": ["eu", "us", "ap"]}, "maxItems": 2},
    },
    "required": ["name"],
}


def test_a_form_has_a_field_for_each_property_of_the_schema_each_checking_what_is_typed() -> None:
    fields = {field.name: field for field in parse_form(SCHEMA)}

    assert [f.kind for f in fields.values()] == [
        "text", "choice", "choice", "integer", "number", "boolean", "text", "choices"
    ]  # fmt: skip
    assert fields["name"].required and fields["name"].label == "Your name"
    assert [c.label for c in fields["size"].choices] == ["Small", "Large"]
    assert fields["env"].parse("2") == "production" and fields["size"].parse("large") == "l"
    assert fields["replicas"].parse("3") == 3 and fields["ratio"].parse("0.5") == 0.5
    assert fields["notify"].parse("no") is False
    assert fields["regions"].parse("1 3") == ["eu", "ap"]
    for field, typed, said in [
        ("name", "A", "at least 2 characters"),
        ("replicas", "9", "at most 5"),
        ("replicas", "two", "give a whole number"),
        ("email", "nobody", "give an email address"),
        ("env", "prod", "pick 1 (staging), 2 (production)"),
        ("regions", "1 2 3", "at most 2 choices"),
    ]:
        with pytest.raises(ValueError, match=re.escape(said)):
            fields[field].parse(typed)
    assert with_defaults(list(fields.values()), {"name": "Ada"}) == {
        "name": "Ada", "env": "staging", "replicas": 2, "notify": True
    }  # fmt: skip


def test_a_schema_a_flat_form_cannot_show_is_refused() -> None:
    with pytest.raises(FormUnusable, match="field 'address' has a type a form cannot ask for"):
        parse_form({"type": "object", "properties": {"address": {"type": "object"}}})


def test_a_field_named_like_a_secret_is_marked() -> None:
    assert Field("api_key", "text").looks_secret and Field("x", "text", title="Password").looks_secret
    assert not Field("name", "text").looks_secret


@pytest.fixture
def asked() -> list[Question]:
    return []


@pytest.fixture
def manager(tmp_path: Path, asked: list[Question]) -> Iterator[McpManager]:
    def user(question: Question) -> Reply:
        asked.append(question)
        return Reply("accept", {"name": "Ada"})

    made = McpManager(tmp_path, connect_timeout=CONNECT_CEILING, on_notice=print, elicitor=user)
    made.add(stdio("demo"))
    made.connect("demo")
    assert made.wait_for("demo", CONNECT_CEILING).state == "connected"
    yield made
    made.close()


def test_a_sub_agents_call_asks_the_user_naming_the_server_and_the_agent(
    manager: McpManager, asked: list[Question], tmp_path: Path
) -> None:
    source = McpToolSource(manager, print)
    [form] = [tool for tool in source.freeze(CEILING) if tool.name == "mcp__demo__form"]

    result = form.run(
        {"message": "Who are you?", "schema": SCHEMA}, ToolContext(LocalWorkspace(tmp_path), agent_label="Explore")
    )

    [question] = asked
    assert isinstance(question, FormQuestion)
    assert question.asker == 'MCP server "demo" (for Explore)' and question.message == "Who are you?"
    assert json.loads(result.content) == {
        "action": "accept",
        "content": {"name": "Ada", "env": "staging", "replicas": 2, "notify": True},  # the defaults filled in
    }


def test_a_question_while_none_of_the_servers_calls_runs_is_declined_without_asking(
    manager: McpManager, asked: list[Question], tmp_path: Path
) -> None:
    trigger, answer = tmp_path / "ask now", tmp_path / "answer.json"
    message = {"message": "Your API key?", "trigger": str(trigger), "answer": str(answer)}
    assert manager.call_tool("demo", "later", message, threading.Event()).texts == ("will ask later",)

    trigger.touch()

    wait_until(answer.exists, "the server's answer")
    assert json.loads(answer.read_text()) == {
        "action": "decline",
        "_meta": {"agentcli/reason": "agentcli asks the user only while one of the server's own calls is running"},
    }
    assert asked == []


@pytest.mark.parametrize(
    "url",
    ["file:///home/me/.ssh/id_rsa", "ms-settings:privacy", "javascript:alert(1)", "https:/no-host", "example.com"],
)
def test_a_page_that_is_not_a_web_address_is_declined_without_asking(
    manager: McpManager, asked: list[Question], url: str
) -> None:
    outcome = manager.call_tool("demo", "page", {"message": "Open this", "url": url}, threading.Event())

    assert json.loads(outcome.texts[0]) == {
        "action": "decline",
        "_meta": {"agentcli/reason": "agentcli asks the user to open only http and https addresses with a host"},
    }
    assert asked == []


def test_run_declines_and_says_why_to_the_server_and_the_user(
    run_agent: RunAgent, model: ScriptedModel, home: Path
) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    model.script(
        reply(tool_use("mcp__demo__form", {"message": "Deploy where?", "schema": SCHEMA}, id="toolu_1")),
        reply(text("It was declined.")),
    )

    ran = run_agent("deploy", allowed_tools=["mcp__demo"])

    assert ran.returncode == 0, ran.stderr
    answer = json.loads(model.requests[1].messages[-1]["content"][0]["content"])
    assert answer["action"] == "decline" and "content" not in answer
    assert answer["_meta"]["agentcli/reason"].startswith("agentcli run is non-interactive: there is nobody to answer")
    assert ran.stderr.count('MCP server "demo" asked for input ("Deploy where?"); declined') == 1
