"""MCP tools in a session, in-process with the scripted model: sub-agents get them, output is
capped, and the tool list stays the same within a conversation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agentcli.events import Event, Notice
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.session import Session, SessionOptions
from tests.conftest import RunAgent
from tests.mcp.helpers import stdio_server, write_config
from tests.mcp.warm_demo import LAUNCHER
from tests.waiting import wait_until


def _names(tools: list[dict[str, object]]) -> list[str]:
    return [str(tool["name"]) for tool in tools]


def test_sub_agents_get_the_mcp_tools(run_agent: RunAgent, model: ScriptedModel, home: Path) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    task = {"description": "use echo", "prompt": "echo hi", "subagent_type": "general-purpose"}
    model.script(
        reply(tool_use("Task", task, id="toolu_1")),
        reply(tool_use("mcp__demo__echo", {"text": "from the sub-agent"}, id="toolu_2")),
        reply(text("the sub-agent is done")),
        reply(text("all done")),
    )

    ran = run_agent("delegate", allowed_tools=["mcp__demo"])

    assert ran.returncode == 0, ran.stderr
    assert "mcp__demo__echo" in _names(model.requests[1].tools)
    result = model.requests[2].messages[-1]["content"][0]
    assert result["tool_use_id"] == "toolu_2" and result["content"] == "echo: from the sub-agent"


def test_mcp_output_is_capped_at_max_mcp_output_tokens(run_agent: RunAgent, model: ScriptedModel, home: Path) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    (home / ".agentcli" / "settings.json").write_text(json.dumps({"maxMcpOutputTokens": 10}))
    model.script(reply(tool_use("mcp__demo__big", {"size": 5000}, id="toolu_1")), reply(text("ok")))

    ran = run_agent("big", allowed_tools=["mcp__demo"])

    assert ran.returncode == 0, ran.stderr
    content = model.requests[1].messages[-1]["content"][0]["content"]
    assert content.startswith("x" * 40 + "\n\n[... output truncated: 4,960 characters cut.")
    assert "capped at 10 tokens (maxMcpOutputTokens in settings, or MAX_MCP_OUTPUT_TOKENS)" in content


def test_a_server_that_connects_later_joins_at_the_next_conversation(
    in_process_env: None, project: Path, home: Path, tmp_path: Path
) -> None:
    later = tmp_path / "later_server.py"  # not there yet: "later" fails to start
    demo = stdio_server()
    write_config(home / ".agentcli" / "mcp.json", demo=demo, later={**demo, "args": [str(later), *demo["args"][1:]]})
    events: list[Event] = []
    model = ScriptedModel(reply(text("one")), reply(text("two")), reply(text("three")))
    with Session(SessionOptions(), project, events.append, model=model) as session:
        session.send("first")
        manager = session.mcp.manager
        assert manager is not None
        assert manager.status("later").state == "failed"
        shutil.copy(LAUNCHER, later)  # the launcher of the warm demo server (`warm_demo.py`)
        manager.reconnect("later")
        wait_until(lambda: manager.status("later").state == "connected", "the later server connecting")

        session.send("second")
        session.clear()
        session.send("third")

    first, second, third = (_names(request.tools) for request in model.requests)
    assert "mcp__demo__echo" in first and not [name for name in first if name.startswith("mcp__later__")]
    assert second == first  # byte-stable within the conversation
    assert "mcp__later__echo" in third
    assert not [event for event in events if isinstance(event, Notice) and "Traceback" in event.text]
