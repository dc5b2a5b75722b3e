"""`--plugin-dir DIR`: a plugin loaded from a folder for one session, without installing it (the
way a plugin's author tries it, as with Claude Code's flag): its parts work, nothing is written to
the store or the settings, an installed plugin of the same name steps aside, and the folder is
protected while the session runs, from the tools and, in the sandbox, from commands."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.contracts import JSON
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent, RunMain
from tests.fake_anthropic import FakeAnthropic
from tests.fake_anthropic import reply as fake_reply
from tests.fake_anthropic import text as fake_text
from tests.plugins.helpers import commands, make_plugin, market_with_greeter
from tests.sandbox_support import PYTHON, require_sandbox


def _results(model: ScriptedModel, request: int) -> list[JSON]:
    return [b for b in model.requests[request].messages[-1]["content"] if b.get("type") == "tool_result"]


def test_a_plugin_folder_works_for_one_run_and_nothing_is_installed(
    model: ScriptedModel, run_agent: RunAgent, project: Path, home: Path, tmp_path: Path
) -> None:
    folder = make_plugin(tmp_path / "work" / "greeter")
    model.script(
        reply(tool_use("Bash", {"command": "echo forbidden"}, id="toolu_hook")),
        reply(tool_use("mcp__plugin_greeter_demo__echo", {"text": "hi"}, id="toolu_mcp")),
        reply(text("Done.")),
    )

    ran = run_agent("/greet Ann", plugin_dirs=[str(folder)], allowed_tools=["Bash(echo:*)", "mcp__plugin_greeter_demo"])

    assert ran.returncode == 0, ran.stderr
    first = model.requests[0]
    sent = json.dumps(first.messages)
    assert "Say hello to Ann, warmly." in sent  # its command
    assert "/tally: Count the greetings" in sent  # its skill
    task = next(t for t in first.tools if t["name"] == "Task")
    assert "greeter:reviewer" in task["description"]  # its agent
    [hooked] = _results(model, 1)
    assert hooked["is_error"] is True and "the greeter plugin forbids this" in hooked["content"]  # its hook
    [served] = _results(model, 2)
    assert served["content"] == "echo: hi"  # its MCP server
    assert not (home / ".agentcli" / "plugins").exists()  # nothing installed
    assert not (home / ".agentcli" / "settings.json").exists()  # nothing enabled


def test_the_folder_is_protected_while_the_session_runs(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    folder = make_plugin(project / "plugins" / "greeter")  # the plugin being worked on, in the project
    hooks = folder / "hooks" / "hooks.json"
    before = hooks.read_text()
    model.script(
        reply(tool_use("Write", {"file_path": str(hooks), "content": "{}"}, id="toolu_write")),
        reply(tool_use("Bash", {"command": f"echo '{{}}' > {hooks}"}, id="toolu_bash")),
        reply(tool_use("Write", {"file_path": str(project / "notes.md"), "content": "ok\n"}, id="toolu_other")),
        reply(text("Done.")),
    )

    ran = run_agent(
        "change its hooks",
        plugin_dirs=[str(folder)],
        permission_mode="acceptEdits",
        allowed_tools=["Write", "Bash(echo:*)"],
    )

    assert ran.returncode == 0, ran.stderr
    assert hooks.read_text() == before
    for request in (1, 2):
        [refused] = _results(model, request)
        assert refused["is_error"] is True
        assert "asked about every time" in refused["content"], refused["content"]
        assert "--plugin-dir" in refused["content"], refused["content"]
    assert (project / "notes.md").read_text() == "ok\n"  # the rest of the project is as before


def test_in_the_sandbox_a_command_cannot_change_the_folder_either(
    model: ScriptedModel, run_agent: RunAgent, project: Path, home: Path
) -> None:
    require_sandbox()
    (home / ".agentcli" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    folder = make_plugin(project / "plugins" / "greeter")
    hooks = folder / "hooks" / "hooks.json"
    before = hooks.read_text()
    # an interpreter: the gate cannot see the path, so the sandbox is what stops it
    script = f'{PYTHON} -c \'open("{hooks}", "w").write("{{}}")\'; touch elsewhere.txt'
    model.script(reply(tool_use("Bash", {"command": script}, id="toolu_1")), reply(text("Done.")))

    ran = run_agent("go", plugin_dirs=[str(folder)])

    assert ran.returncode == 0, ran.stderr
    assert hooks.read_text() == before
    assert (project / "elsewhere.txt").exists()  # the command ran, in the sandbox
    [result] = _results(model, 1)
    assert "Read-only file system" in str(result["content"])


def test_an_installed_plugin_of_the_same_name_steps_aside_for_the_session(
    model: ScriptedModel, run_agent: RunAgent, project: Path, home: Path, tmp_path: Path
) -> None:
    _, remote = market_with_greeter(tmp_path)
    ops, _ = commands(project, home / ".agentcli")
    ops.marketplace_add(f"file://{remote}")
    ops.install("greeter@test-market")
    folder = make_plugin(tmp_path / "work" / "greeter")
    (folder / "commands" / "greet.md").write_text("---\ndescription: Greet\n---\nThe new greeting for $ARGUMENTS.\n")
    model.script(reply(text("Hi.")))

    ran = run_agent("/greet Ann", plugin_dirs=[str(folder)])

    assert ran.returncode == 0, ran.stderr
    sent = json.dumps(model.requests[0].messages)
    assert "The new greeting for Ann." in sent and "warmly" not in sent
    assert f"The plugin greeter@test-market is left out for this session: --plugin-dir {folder}" in ran.stderr
    assert "greeter@test-market" in json.loads((home / ".agentcli" / "settings.json").read_text())["enabledPlugins"]


def test_a_folder_without_a_plugin_is_a_usage_error_before_anything_is_sent(
    run_main: RunMain, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    empty = tmp_path / "nothing-here"
    empty.mkdir()

    ran = run_main("--plugin-dir", str(empty), "run", "hi")

    assert ran.returncode == 2
    assert f"--plugin-dir {empty}: {empty} is not a plugin" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert fake_api.requests == []


def test_the_flag_is_taken_before_or_after_run_and_repeated(
    run_main: RunMain, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    first = make_plugin(tmp_path / "a" / "greeter")
    second = make_plugin(tmp_path / "b" / "helper", name="helper")
    fake_api.script(fake_reply(fake_text("Hi.")), fake_reply(fake_text("Hi.")))

    before = run_main("--plugin-dir", str(first), "run", "--plugin-dir", str(second), "/helper:greet Bo")
    after = run_main("run", "--plugin-dir", str(first), "/greeter:greet Al")

    assert before.returncode == 0 and after.returncode == 0, before.stderr + after.stderr
    sent = [json.dumps(request.body["messages"]) for request in fake_api.requests]
    assert "Say hello to Bo, warmly." in sent[0]
    # both plugins loaded: the first given keeps the short names
    assert "- /tally: Count the greetings" in sent[0] and "- /helper:tally: Count the greetings" in sent[0]
    assert "Say hello to Al, warmly." in sent[1]


def test_mcp_list_shows_the_folders_servers(run_main: RunMain, tmp_path: Path) -> None:
    folder = make_plugin(tmp_path / "work" / "greeter")

    ran = run_main("mcp", "list", "--plugin-dir", str(folder))

    assert ran.returncode == 0, ran.stderr
    assert "plugin:greeter:demo" in ran.stdout and "connected" in ran.stdout, ran.stdout
