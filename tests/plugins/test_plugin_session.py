"""A plugin installed from a git marketplace, working in a session: its command, skill (with a
script), agent, PreToolUse hook and stdio MCP server, as the model and the user see them."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.contracts import JSON
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent
from tests.plugins.helpers import REVIEWER_PROMPT, commands, market_with_greeter


def _result(model: ScriptedModel, request: int) -> JSON:
    found: list[JSON] = [b for b in model.requests[request].messages[-1]["content"] if b.get("type") == "tool_result"]
    [result] = found
    return result


def test_one_install_brings_a_command_a_skill_an_agent_a_hook_and_an_mcp_server(
    model: ScriptedModel, run_agent: RunAgent, project: Path, home: Path, tmp_path: Path
) -> None:
    _, remote = market_with_greeter(tmp_path)
    ops, said = commands(project, home / ".agentcli")
    ops.marketplace_add(f"file://{remote}")
    ops.install("greeter@test-market")
    shown = "\n".join(said)
    assert "/greeter:greet (also /greet)" in shown and "/greeter:tally (also /tally)" in shown
    assert "agents: greeter:reviewer" in shown
    assert 'PreToolUse [Bash]: python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"' in shown
    assert "plugin:greeter:demo:" in shown and "${CLAUDE_PLUGIN_ROOT}/server.py" in shown
    [root] = (home / ".agentcli" / "plugins" / "cache" / "test-market" / "greeter").iterdir()

    model.script(
        reply(tool_use("Skill", {"skill": "tally"}, id="toolu_skill")),
        reply(tool_use("Bash", {"command": f"python3 {root}/skills/tally/scripts/count.py"}, id="toolu_script")),
        reply(
            tool_use(
                "Task",
                {"description": "review", "prompt": "Review it.", "subagent_type": "greeter:reviewer"},
                id="toolu_task",
            )
        ),
        reply(text("One line: fine.")),  # the sub-agent
        reply(tool_use("Bash", {"command": "echo forbidden"}, id="toolu_hook")),
        reply(tool_use("mcp__plugin_greeter_demo__echo", {"text": "hi"}, id="toolu_mcp")),
        reply(tool_use("Write", {"file_path": f"{root}/hooks/guard.py", "content": "pass\n"}, id="toolu_write")),
        reply(text("Done.")),
    )

    script = f"python3 {root}/skills/tally/scripts/count.py"
    # the plugin's files are protected: only a rule naming the script runs it (here, the user's --allowed-tools)
    allowed = [f"Bash({script})", "Bash(echo:*)", "mcp__plugin_greeter_demo", "Write"]
    ran = run_agent("/greet Ann", allowed_tools=allowed, permission_mode="acceptEdits")

    assert ran.returncode == 0, ran.stderr
    first = model.requests[0]
    sent = json.dumps(first.messages)
    assert "Say hello to Ann, warmly." in sent  # the command, by its short name
    assert "/tally: Count the greetings" in sent  # the skill, listed to the model
    task = next(t for t in first.tools if t["name"] == "Task")
    assert "greeter:reviewer" in task["description"]
    assert "mcp__plugin_greeter_demo__echo" in {t["name"] for t in first.tools}
    assert f"Base directory for this skill: {root}/skills/tally" in _result(model, 1)["content"]
    assert (project / "tally.txt").read_text() == "counted by the plugin"  # its script ran
    assert REVIEWER_PROMPT in json.dumps(model.requests[3].system)  # the plugin's agent
    hooked = _result(model, 5)
    assert hooked["is_error"] is True and "the greeter plugin forbids this" in hooked["content"]
    assert (project / "guard-saw.txt").read_text().splitlines()[0] == str(root)  # CLAUDE_PLUGIN_ROOT
    assert _result(model, 6)["content"] == "echo: hi"  # the plugin's MCP server
    # its files are protected: neither a Write rule nor acceptEdits lets the model change them
    refused = _result(model, 7)
    assert refused["is_error"] is True and "forbids this" in (root / "hooks" / "guard.py").read_text()
    assert "asked about every time" in refused["content"], refused["content"]
