"""Sub-agent definitions written for Claude Code, and the model aliases people write: `tools:`
naming tools agentcli lacks, `disallowedTools`, `permissionMode`, `skills`, `hooks`, `color`,
fields read and ignored; `sonnet`/`opus`/`haiku`/`inherit` in settings, definitions, commands
and `--model`, per provider, overridable in `modelAliases`."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from agentcli.events import SubagentStarted
from agentcli.model_aliases import resolve_alias
from agentcli.output.subagents import SubagentRun
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.ui.subagent_render import SubagentLine
from tests.conftest import RunAgent
from tests.hooks_helpers import hook_command, logged
from tests.test_subagents import define, names, task, texts


def agent(name: str, fields: str, prompt: str = "You help.") -> str:
    return f"---\nname: {name}\ndescription: Helps with {name}.\n{fields}---\n{prompt}\n"


def hooks_field(event: str, command: str) -> str:
    """A definition's `hooks:` running `command` on `event`, in YAML."""
    return f"hooks:\n  {event}:\n    - hooks:\n        - type: command\n          command: {json.dumps(command)}\n"


def test_tools_agentcli_lacks_are_left_out_with_one_notice(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    define(
        project / ".claude" / "agents",
        "researcher",
        agent("researcher", "tools: Read, WebFetch, NotebookRead, LS, Task\n"),
    )
    define(project / ".claude" / "agents", "surfer", agent("surfer", "tools: LS\n"))
    model.script(
        reply(
            task("look it up", "researcher", id="toolu_1"),
            task("surf", "surfer", id="toolu_2"),
        ),
        reply(text("found")),
        reply(text("ok")),
    )

    done = run_agent("go")

    assert done.returncode == 0, done.stderr
    sub_request = next(r for r in model.requests if "You help." in json.dumps(r.system))
    assert names(sub_request.tools) == ["Read", "WebFetch"]
    assert done.stderr.count("names tools agentcli does not have (NotebookRead, LS)") == 1
    assert "`tools:` names Task, but sub-agents cannot start sub-agents" in " ".join(done.stderr.split())
    final = model.requests[-1].messages[-1]["content"]
    surfed = next(block for block in final if block.get("tool_use_id") == "toolu_2")
    assert surfed["is_error"] and "none of the tools its `tools:` names is there (LS)" in surfed["content"]


def test_disallowed_tools_are_taken_out(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    define(project / ".claude" / "agents", "reader", agent("reader", "disallowedTools: Write, Edit, Bash\n"))
    model.script(reply(task("read", "reader", id="toolu_1")), reply(text("read")), reply(text("ok")))

    assert run_agent("go").returncode == 0

    sub_request = model.requests[1]
    assert not {"Write", "Edit", "Bash"} & set(names(sub_request.tools)) and "Read" in names(sub_request.tools)


def test_permission_mode_applies_to_the_sub_agents_calls_while_the_session_is_in_default(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    define(project / ".claude" / "agents", "writer", agent("writer", "permissionMode: acceptEdits\n"))
    write = tool_use("Write", {"file_path": "made.txt", "content": "hi\n"}, id="toolu_w")
    model.script(
        reply(task("write it", "writer", id="toolu_1")), reply(write), reply(text("written")), reply(text("ok"))
    )

    assert run_agent("go").returncode == 0
    assert (project / "made.txt").read_text() == "hi\n"

    (project / "made.txt").unlink()
    model.script(reply(task("write it", "writer", id="toolu_1")), reply(write), reply(text("no")), reply(text("ok")))

    assert run_agent("go", permission_mode="plan").returncode == 0
    assert not (project / "made.txt").exists()  # the session's plan mode holds for its sub-agents


def test_only_your_own_definition_may_ask_for_bypass_or_run_hooks(
    run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "hook.log"
    fields = f"permissionMode: bypassPermissions\n{hooks_field('PreToolUse', hook_command(tmp_path, log))}"
    define(project / ".claude" / "agents", "repo-agent", agent("repo-agent", fields))
    define(home / ".claude" / "agents", "my-agent", agent("my-agent", fields))
    touch = tool_use("Bash", {"command": "touch from-repo"}, id="toolu_b")
    model.script(reply(task("go", "repo-agent", id="toolu_1")), reply(touch), reply(text("x")), reply(text("ok")))

    done = run_agent("go")

    assert done.returncode == 0
    assert not (project / "from-repo").exists() and logged(log) == []
    shown = " ".join(done.stderr.split())
    assert "`permissionMode: bypassPermissions` is ignored: only a definition of your own may ask for it" in shown
    assert "its `hooks:` do not run" in shown

    touch = tool_use("Bash", {"command": "touch from-mine"}, id="toolu_b")
    model.script(reply(task("go", "my-agent", id="toolu_1")), reply(touch), reply(text("x")), reply(text("ok")))

    assert run_agent("go").returncode == 0
    assert (project / "from-mine").exists()
    assert [entry["agent_type"] for entry in logged(log)] == ["my-agent"]


def test_a_definitions_stop_hook_runs_as_subagent_stop(
    run_agent: RunAgent, model: ScriptedModel, home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "stop.log"
    fields = hooks_field("Stop", hook_command(tmp_path, log))
    define(home / ".claude" / "agents", "checker", agent("checker", fields))
    model.script(reply(task("check", "checker", id="toolu_1")), reply(text("checked")), reply(text("ok")))

    assert run_agent("go").returncode == 0

    [entry] = logged(log)
    assert entry["hook_event_name"] == "SubagentStop" and entry["last_assistant_message"] == "checked"


def test_a_definitions_broken_guard_fails_closed_and_its_other_hooks_run(
    run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "stop.log"
    broken = (
        "hooks:\n  PreToolUse:\n    - matcher: 'Bash('\n      hooks:\n        - type: command\n          command: x\n"
    )
    stop = hooks_field("Stop", hook_command(tmp_path, log)).removeprefix("hooks:\n")
    define(home / ".claude" / "agents", "builder", agent("builder", broken + stop))
    touch = tool_use("Bash", {"command": "touch made.txt"}, id="toolu_b")
    model.script(reply(task("build", "builder", id="toolu_1")), reply(touch), reply(text("built")), reply(text("ok")))

    done = run_agent("go", allowed_tools=["Bash(touch:*)"])

    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stderr.split())
    assert f"Skipped hooks in {home / '.claude' / 'agents' / 'builder.md'}" in shown
    assert "hooks.PreToolUse[0].matcher 'Bash(' is not a valid regular expression" in shown
    assert not (project / "made.txt").exists()  # the rule allows it, but the guard it may have been asks
    assert [entry["hook_event_name"] for entry in logged(log)] == ["SubagentStop"]


def test_preloaded_skills_are_in_the_sub_agents_first_message(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    (project / ".commands").mkdir()
    (project / ".commands" / "house-style.md").write_text(
        "---\ndescription: Our style.\n---\nUse tabs, never spaces.\n"
    )
    define(project / ".claude" / "agents", "styler", agent("styler", "skills: house-style, missing-one\n"))
    model.script(reply(task("restyle", "styler", id="toolu_1")), reply(text("done")), reply(text("ok")))

    done = run_agent("go")

    assert done.returncode == 0
    first = texts(model.requests[1].messages[0])
    assert any("Use tabs, never spaces." in part and "/house-style" in part for part in first)
    assert "preloads the skill 'missing-one', but there is no such skill" in done.stderr


def test_color_names_the_sub_agent_and_ignored_fields_are_said_once(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    define(
        project / ".claude" / "agents",
        "painter",
        agent("painter", "color: purple\nmemory: project\nisolation: worktree\n"),
    )
    model.script(reply(task("paint", "painter", id="toolu_1")), reply(text("painted")), reply(text("ok")))

    done = run_agent("go")

    assert done.returncode == 0
    shown = " ".join(done.stderr.split())
    assert shown.count("`memory:` is ignored (agentcli has no persistent memory)") == 1
    assert "`isolation:` is ignored" in shown
    started = SubagentStarted("sub-1", "toolu_1", "painter", "paint", "magenta", agent_id="main")
    console = Console(color_system="standard", force_terminal=True, width=80, no_color=False)
    with console.capture() as captured:
        console.print(SubagentLine({}, SubagentRun(started)))
    assert "\x1b[1;35mpainter" in captured.get()


def test_aliases_resolve_per_provider_and_settings_override_them() -> None:
    assert resolve_alias("sonnet", "anthropic") == "claude-sonnet-5-5"
    assert resolve_alias("opus[1m]", "anthropic") == "claude-opus-5-5"
    assert resolve_alias("haiku", "openai") == "gpt-5-mini"
    assert resolve_alias("opus", "gemini") == "gemini-2.5-pro"
    assert resolve_alias("sonnet", "ollama") is None
    assert resolve_alias("sonnet", "ollama", {"ollama": {"sonnet": "qwen3-coder"}}) == "qwen3-coder"
    assert resolve_alias("claude-opus-4-5", "anthropic") == "claude-opus-4-5"
    assert resolve_alias("default", "openai", default_model="gpt-5") == "gpt-5"
    assert resolve_alias("opus", "anthropic", environ={"ANTHROPIC_DEFAULT_OPUS_MODEL": "claude-opus-4-1"}) == (
        "claude-opus-4-1"
    )
    assert resolve_alias("sonnet", "anthropic", environ={"AGENTCLI_USE_BEDROCK": "1"}) is None


def test_aliases_are_sent_as_the_model_they_stand_for(
    run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path
) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"model": "opus"}))
    define(project / ".claude" / "agents", "quick", agent("quick", "model: haiku\n"))
    (project / ".commands").mkdir()
    (project / ".commands" / "fast.md").write_text("---\ndescription: Quickly.\nmodel: haiku\n---\nDo it fast.\n")
    model.script(reply(task("be quick", "quick", id="toolu_1")), reply(text("quick")), reply(text("ok")))

    assert run_agent("go").returncode == 0
    assert [r.model for r in model.requests] == ["claude-opus-5-5", "claude-haiku-5-5", "claude-opus-5-5"]

    model.script(reply(text("ok")))
    assert run_agent("/fast").returncode == 0
    assert model.requests[-1].model == "claude-haiku-5-5"

    model.script(reply(text("ok")))
    assert run_agent("go", model="sonnet").returncode == 0
    assert model.requests[-1].model == "claude-sonnet-5-5"


def test_an_alias_with_no_model_for_the_provider_is_a_usage_error_saying_how_to_map_it(
    run_agent: RunAgent, model: ScriptedModel
) -> None:
    done = run_agent("go", model="ollama:sonnet")

    assert done.returncode == 2
    assert "The model alias 'sonnet' names no model for ollama" in done.stderr
    assert '"modelAliases": {"ollama": {"sonnet": "MODEL"}}' in done.stderr
    assert model.requests == []
