"""A plugin installed from a git marketplace, working in a session: its command, skill (with a
script), agent, PreToolUse hook and stdio MCP server, as the model and the user see them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from agentcli.contracts import JSON, ModelRequest
from agentcli.providers.scripted import Reply, ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent
from tests.context.helpers import write
from tests.hooks_helpers import hook_command, hook_entry, logged
from tests.mcp.helpers import stdio_server
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


def test_a_plugin_server_with_a_long_name_is_offered_under_a_short_one_and_rules_name_it_in_full(
    model: ScriptedModel, run_agent: RunAgent, project: Path, home: Path, tmp_path: Path
) -> None:
    """As the official marketplace's laravel-boost: `plugin:laravel-boost:laravel-boost` is 34
    characters as `mcp__plugin_laravel-boost_laravel-boost__…`, over the 32 a server part may take."""
    folder = tmp_path / "laravel-boost"
    write(folder / ".claude-plugin" / "plugin.json", json.dumps({"name": "laravel-boost", "version": "1.0.0"}))
    write(folder / ".mcp.json", json.dumps({"mcpServers": {"laravel-boost": stdio_server()}}))
    ops, _ = commands(project, home / ".agentcli")
    ops.install(str(folder))
    full = "mcp__plugin_laravel-boost_laravel-boost"

    def call_echo_and_shout(request: ModelRequest) -> Reply:
        [echo] = [t["name"] for t in request.tools if str(t["name"]).endswith("__echo")]
        [shout] = [t["name"] for t in request.tools if str(t["name"]).endswith("__shout")]
        return reply(
            tool_use(str(echo), {"text": "hi"}, id="toolu_echo"), tool_use(str(shout), {"text": "hi"}, id="toolu_shout")
        )

    log = tmp_path / "hook.log"  # a hook written for Claude Code's names
    hooks = {"PreToolUse": [hook_entry(hook_command(tmp_path, log), matcher=f"{full}__.*")]}
    user_settings = home / ".agentcli" / "settings.json"  # where the install enabled the plugin
    write(user_settings, json.dumps({**json.loads(user_settings.read_text()), "hooks": hooks}))
    model.script(call_echo_and_shout, reply(text("Done.")))
    # its prompt is a command by the server's full name, as in Claude Code; the tool rule uses the tool's
    ran = run_agent(f"/{full}__review app.py", allowed_tools=[f"{full}__echo"])

    assert ran.returncode == 0, ran.stderr
    assert "Please review app.py, looking for bugs." in json.dumps(model.requests[0].messages[-1])
    names = [str(t["name"]) for t in model.requests[0].tools]
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name) for name in names), names
    offered = sorted(name for name in names if name.startswith("mcp__plugin_laravel-boost"))
    assert offered, names
    server_part = offered[0].split("__")[1]
    assert re.fullmatch(r"plugin_laravel-boost_la_[0-9a-f]{8}", server_part), offered
    assert all(name.split("__")[1] == server_part for name in offered)
    echoed, shouted = model.requests[1].messages[-1]["content"]
    assert echoed["tool_use_id"] == "toolu_echo" and echoed["content"] == "echo: hi", echoed
    assert shouted["tool_use_id"] == "toolu_shout" and shouted["is_error"] is True, shouted
    assert "Permission denied" in shouted["content"], shouted
    called = sorted(name for name in offered if name.endswith(("__echo", "__shout")))
    assert sorted(entry["tool_name"] for entry in logged(log)) == called  # the hook heard both calls
