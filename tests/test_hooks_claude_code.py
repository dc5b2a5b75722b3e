"""Hooks written for Claude Code, read and run as its hooks reference documents them: what
agentcli cannot run is skipped with one notice; `if`, `async`, `args`, the matcher's lists; the
events PermissionRequest, SubagentStart, PostCompact and StopFailure; PreCompact's block; Stop's
additionalContext; SessionEnd's reasons; and the fields a sub-agent's hooks are handed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentcli.errors import ModelAPIError, StoppedByHook
from agentcli.hooks import load_hooks, matcher_matches
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.sessions.store import find_session
from tests.conftest import RunAgent
from tests.hooks_helpers import hook_command, hook_entry, hook_script, logged, write_settings
from tests.test_hooks import Recorder, project_hooks, results_sent, session, texts_sent, trust_project_hooks
from tests.waiting import wait_until


def test_what_agentcli_cannot_run_is_skipped_with_one_notice_and_the_rest_runs(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    log = tmp_path / "pre.log"
    trust_project_hooks(project)
    settings = write_settings(
        project / ".claude" / "settings.json",
        {
            "hooks": {
                "Setup": [hook_entry("echo setup")],
                "Bogus": [hook_entry("echo bogus")],
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "note": "mine",
                        "hooks": [
                            {"type": "http", "url": "http://127.0.0.1:1/hook"},
                            {"type": "prompt", "prompt": "Is it safe?"},
                            {"type": "command", "command": hook_command(tmp_path, log), "colour": "red"},
                        ],
                    }
                ],
            }
        },
    )
    model.script(reply(tool_use("Bash", {"command": "true"}, id="toolu_1")), reply(text("ok")))
    recorder = Recorder()

    with session(project, model, recorder, permission_mode="bypassPermissions") as s:
        s.send("go")

    assert [entry["tool_name"] for entry in logged(log)] == ["Bash"]
    [notice] = [n for n in recorder.notices() if n.startswith("Skipped hooks")]
    assert str(settings) in notice
    for named in (
        "Setup (agentcli does not run it)",
        "Bogus (not a hook event)",
        'type "http": agentcli runs only command hooks',
        'type "prompt"',
        "the field note (not known)",
        "the field colour (not known)",
    ):
        assert named in notice


def test_a_value_of_the_wrong_kind_skips_that_entry_only(tmp_path: Path) -> None:
    hooks = {"PostToolUse": [hook_entry("true", timeout=-1), hook_entry("echo kept")], "Stop": {"not": "a list"}}

    loaded = load_hooks([("user", tmp_path / "s.json", {"hooks": hooks})])

    assert [hook.command for hook in loaded.commands] == ["echo kept"]
    [notice] = loaded.notices
    assert notice.startswith(f"Skipped hooks in {tmp_path / 's.json'}: ")
    assert "hooks.PostToolUse[0].hooks[0].timeout must be a positive number" in notice
    assert "hooks.Stop must be a list" in notice
    assert loaded.guards == ()  # neither could have refused a tool call


def test_matchers_take_comma_lists_hyphens_and_claude_codes_agent_name() -> None:
    assert matcher_matches("Edit, Write", "Write") and not matcher_matches("Edit, Write", "NotebookEdit")
    assert matcher_matches("code-reviewer", "code-reviewer") and not matcher_matches(
        "code-reviewer", "my-code-reviewer"
    )
    assert matcher_matches("Agent", "Task") and matcher_matches("^Agent$", "Task")
    assert not matcher_matches("Agent", "Bash")


def test_the_if_field_narrows_a_hook_to_the_calls_its_rule_names(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    git_log, ts_log, prompt_log = tmp_path / "git.log", tmp_path / "ts.log", tmp_path / "prompt.log"
    hooks = {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": hook_command(tmp_path, git_log), "if": "Bash(git *)"}],
            },
            {"hooks": [{"type": "command", "command": hook_command(tmp_path, ts_log), "if": "Edit(*.ts)"}]},
        ],
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": hook_command(tmp_path, prompt_log), "if": "Bash"}]}
        ],
    }
    project_hooks(project, hooks)
    (project / "a.ts").write_text("x\n")
    (project / "a.py").write_text("x\n")
    model.script(
        reply(
            tool_use("Bash", {"command": "ls"}, id="toolu_ls"),
            tool_use("Bash", {"command": "echo a && git status"}, id="toolu_git"),
            tool_use("Write", {"file_path": "a.py", "content": "y\n"}, id="toolu_py"),
            tool_use("Write", {"file_path": "a.ts", "content": "y\n"}, id="toolu_ts"),
        ),
        reply(text("ok")),
    )

    done = run_agent("go", permission_mode="bypassPermissions")

    assert done.returncode == 0, done.stderr
    assert [entry["tool_use_id"] for entry in logged(git_log)] == ["toolu_git"]
    assert [entry["tool_use_id"] for entry in logged(ts_log)] == ["toolu_ts"]
    assert logged(prompt_log) == []
    assert "an `if` on UserPromptSubmit" in done.stderr


def test_an_async_hook_does_not_hold_the_turn_and_what_it_says_reaches_the_model_later(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    release = tmp_path / "release"
    said = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "Tests pass."}}
    command = hook_command(tmp_path, tmp_path / "async.log", stdout=json.dumps(said), **{"await": release})
    project_hooks(project, {"PostToolUse": [{"hooks": [{"type": "command", "command": command, "async": True}]}]})
    model.script(reply(tool_use("Bash", {"command": "true"}, id="toolu_1")), reply(text("ran")), reply(text("ok")))

    with session(project, model, Recorder(), permission_mode="bypassPermissions") as s:
        assert s.send("go").text == "ran"  # returned while the hook still waits for `release`
        assert not any("Tests pass." in sent for sent in texts_sent(model, 1))
        release.touch()
        assert s.hooks.settle(30)
        s.send("next")

    assert any("An async PostToolUse hook" in sent and "Tests pass." in sent for sent in texts_sent(model, 2))


def test_async_hooks_still_running_are_stopped_when_the_session_ends(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    pid_file = tmp_path / "hook.pid"
    command = hook_command(tmp_path, tmp_path / "l", pid=pid_file)
    project_hooks(project, {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command, "async": True}]}]})
    model.script(reply(text("ok")))

    with session(project, model, Recorder()) as s:
        s.send("go")
        wait_until(pid_file.exists, "the async hook's start")
    pid = int(pid_file.read_text())
    status = Path(f"/proc/{pid}/status")
    assert not status.exists() or "zombie" in status.read_text()


def test_args_run_the_program_without_a_shell_with_the_project_filled_in(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "args.log"
    handler = {
        "type": "command",
        "command": sys.executable,
        "args": [str(hook_script(tmp_path)), str(log), "--touch", "${CLAUDE_PROJECT_DIR}/touched $HOME"],
    }
    project_hooks(project, {"UserPromptSubmit": [{"hooks": [handler]}]})
    model.script(reply(text("ok")))

    assert run_agent("go").returncode == 0

    assert (project / "touched $HOME").exists()  # the placeholder filled in, nothing else expanded


def test_a_permission_request_hook_answers_for_the_user_within_the_rules(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "request.log"
    allow = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "No deploys from here."},
        }
    }
    project_hooks(
        project,
        {
            "PermissionRequest": [
                hook_entry(hook_command(tmp_path, log, stdout=json.dumps(allow)), matcher="Write"),
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "command",
                            "command": hook_command(tmp_path, log, stdout=json.dumps(deny)),
                            "if": "Bash(./deploy.sh)",
                        }
                    ],
                },
                hook_entry(hook_command(tmp_path, log), matcher="Edit"),
            ]
        },
    )
    write_settings(project / ".claude" / "settings.local.json", {"permissions": {"ask": ["Write(secret.txt)"]}})
    (project / "old.txt").write_text("a\n")
    model.script(
        reply(
            tool_use("Write", {"file_path": "made.txt", "content": "hi\n"}, id="toolu_write"),
            tool_use("Write", {"file_path": "secret.txt", "content": "hi\n"}, id="toolu_secret"),
            tool_use("Bash", {"command": "./deploy.sh"}, id="toolu_deploy"),
            tool_use("Bash", {"command": "touch other"}, id="toolu_other"),
        ),
        reply(text("ok")),
    )

    done = run_agent("go", allowed_tools=["Read"])

    assert done.returncode == 0, done.stderr
    write, secret, deploy, other = results_sent(model, 1)
    assert "is_error" not in write and (project / "made.txt").read_text() == "hi\n"
    assert secret["is_error"] and not (project / "secret.txt").exists()  # an ask rule still asks (run: denied)
    assert deploy["is_error"] and "No deploys from here." in deploy["content"]
    assert other["is_error"] and "needs approval, and this run is non-interactive" in other["content"]
    handed = logged(log)
    assert [entry["tool_name"] for entry in handed] == ["Write", "Write", "Bash"]
    assert handed[0]["hook_event_name"] == "PermissionRequest" and handed[0]["tool_input"]["file_path"] == "made.txt"
    assert "tool_use_id" not in handed[0]
    assert handed[2]["permission_suggestions"][0]["rules"] == [{"toolName": "Bash", "ruleContent": "./deploy.sh:*"}]


def test_a_permission_request_hooks_updated_permissions_add_rules_for_the_session(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "request.log"
    allow = {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {
                "behavior": "allow",
                "updatedPermissions": [
                    {
                        "type": "addRules",
                        "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
                        "behavior": "allow",
                        "destination": "session",
                    }
                ],
            },
        }
    }
    project_hooks(project, {"PermissionRequest": [hook_entry(hook_command(tmp_path, log, stdout=json.dumps(allow)))]})
    model.script(
        reply(tool_use("Bash", {"command": "touch a"}, id="toolu_a")),
        reply(tool_use("Bash", {"command": "touch b"}, id="toolu_b")),
        reply(text("ok")),
    )

    assert run_agent("go").returncode == 0

    assert (project / "a").exists() and (project / "b").exists()
    assert len(logged(log)) == 1  # the second call was allowed by the rule the hook added


def test_sub_agent_hooks_start_with_context_and_carry_the_agents_id_and_type(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    start, pre, stop = tmp_path / "start.log", tmp_path / "pre.log", tmp_path / "stop.log"
    context = {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "Mind the vendored code."}}
    project_hooks(
        project,
        {
            "SubagentStart": [hook_entry(hook_command(tmp_path, start, stdout=json.dumps(context)), matcher="Explore")],
            "PreToolUse": [hook_entry(hook_command(tmp_path, pre), matcher="Read")],
            "SubagentStop": [
                hook_entry(hook_command(tmp_path, stop), matcher="Explore"),
                hook_entry(hook_command(tmp_path, tmp_path / "never.log"), matcher="general-purpose"),
            ],
        },
    )
    (project / "a.txt").write_text("a\n")
    task = {"description": "look", "prompt": "read a.txt", "subagent_type": "Explore"}
    model.script(
        reply(tool_use("Task", task, id="toolu_task")),
        reply(tool_use("Read", {"file_path": "a.txt"}, id="toolu_read")),
        reply(text("it says a")),
        reply(text("ok")),
    )

    assert run_agent("go").returncode == 0

    [started] = logged(start)
    assert started["hook_event_name"] == "SubagentStart" and started["agent_type"] == "Explore"
    assert any("Mind the vendored code." in sent for sent in texts_sent(model, 1))
    [read] = logged(pre)
    assert read["agent_id"] == started["agent_id"] and read["agent_type"] == "Explore"
    [stopped] = logged(stop)
    assert stopped["agent_id"] == started["agent_id"] and stopped["last_assistant_message"] == "it says a"
    assert Path(stopped["agent_transcript_path"]).is_file()
    assert not (tmp_path / "never.log").exists()


def test_a_stop_hooks_additional_context_keeps_the_model_going(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "once"
    said = {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "Run the tests first."}}
    # says its piece the first time only (it creates `marker`, and is quiet once it exists)
    command = f"test -e {marker} || {{ touch {marker}; echo '{json.dumps(said)}'; }}"
    project_hooks(project, {"Stop": [hook_entry(command)]})
    model.script(reply(text("done")), reply(text("tested and done")))

    done = run_agent("go")

    assert done.stdout == "tested and done\n"
    assert "Stop hook feedback:\nRun the tests first." in texts_sent(model, 1)


def test_pre_compact_can_block_and_post_compact_gets_the_summary(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    post = tmp_path / "post.log"
    blocker = hook_command(tmp_path, tmp_path / "pre.log", exit=2, stderr="Not during the demo.")
    project_hooks(
        project,
        {
            "PreCompact": [hook_entry(blocker, matcher="auto")],
            "PostCompact": [hook_entry(hook_command(tmp_path, post))],
        },
    )
    model.script(reply(text("ok")), reply(text("The summary.")))

    with session(project, model, Recorder()) as s:
        s.send("go")
        before = list(s.agent.messages)
        blocked = s.compact(auto=True)
        assert blocked.blocked == "Not during the demo." and s.agent.messages == before
        assert "a PreCompact hook blocked it" in blocked.describe()
        assert s.compact().summarised  # manual: the matcher `auto` does not name it

    [entry] = logged(post)
    assert entry["trigger"] == "manual" and entry["compact_summary"] == "The summary."


def test_stop_failure_hooks_run_when_an_api_error_ends_the_turn(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "failure.log"
    project_hooks(project, {"StopFailure": [hook_entry(hook_command(tmp_path, log), matcher="rate_limit")]})
    model.script(ModelAPIError("Rate limit reached for requests.", status=429))

    assert run_agent("go").returncode == 1

    [entry] = logged(log)
    assert entry["error"] == "rate_limit" and entry["last_assistant_message"].startswith("API Error: Rate limit")


def test_session_end_says_why_and_session_start_names_the_model(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    end, start = tmp_path / "end.log", tmp_path / "start.log"
    project_hooks(
        project,
        {
            "SessionEnd": [hook_entry(hook_command(tmp_path, end))],
            "SessionStart": [hook_entry(hook_command(tmp_path, start))],
        },
    )
    model.script(reply(text("one")), reply(text("two")))

    with session(project, model, Recorder()) as s:
        s.send("first")
        first_id = s.id
        s.clear()
        s.send("second")
        s.resume(find_session(project, first_id))
        s.close("prompt_input_exit")

    assert [entry["reason"] for entry in logged(end)] == ["clear", "resume", "prompt_input_exit"]
    assert {entry["model"] for entry in logged(start)} == {"claude-sonnet-5-5"}


def test_user_prompt_expansion_hooks_see_a_typed_command_before_it_expands_and_may_block_it(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    ran = tmp_path / "ran"
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "deploy.md").write_text(f"Deploy $ARGUMENTS. !`touch {ran}`\n")
    (commands / "review.md").write_text("Review $ARGUMENTS.\n")
    log = tmp_path / "expansion.log"
    said = {"hookSpecificOutput": {"hookEventName": "UserPromptExpansion", "additionalContext": "Check the tests."}}
    project_hooks(
        project,
        {
            "UserPromptExpansion": [
                hook_entry(hook_command(tmp_path, log, exit=2, stderr="No deploys on Fridays."), matcher="deploy"),
                hook_entry(hook_command(tmp_path, log, stdout=json.dumps(said)), matcher="review"),
            ]
        },
    )
    model.script(reply(text("reviewed")), reply(text("hello")))

    with session(project, model, Recorder()) as s:
        with pytest.raises(
            StoppedByHook,
            match=r"A UserPromptExpansion hook blocked /deploy, so nothing was sent: No deploys on Fridays\.",
        ):
            s.send("/deploy prod")
        s.send("/review src")
        s.send("hello")

    assert not ran.exists()  # blocked before it expanded: its ! command never ran
    assert len(model.requests) == 2
    assert any("Check the tests." in part for part in texts_sent(model, 0))
    assert any("Review src." in part for part in texts_sent(model, 0))
    deploy, review = logged(log)
    assert deploy["command_name"] == "deploy" and deploy["command_args"] == "prod"
    assert review == review | {
        "hook_event_name": "UserPromptExpansion",
        "expansion_type": "slash_command",
        "command_name": "review",
        "command_args": "src",
        "command_source": "projectSettings",
        "prompt": "/review src",
    }


def test_a_guard_whose_matcher_cannot_be_read_has_every_call_asked_about(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    log = tmp_path / "stop.log"
    trust_project_hooks(project)
    settings = write_settings(
        project / ".claude" / "settings.json",
        {
            "permissions": {"allow": ["Read"]},
            "hooks": {
                "PreToolUse": [hook_entry("./deny-secrets.sh", matcher="Read(")],
                "PermissionRequest": [hook_entry("./approve.sh", matcher="[")],
                "Stop": [hook_entry(hook_command(tmp_path, log))],
            },
        },
    )
    (project / "notes.txt").write_text("hi\n")
    model.script(reply(tool_use("Read", {"file_path": "notes.txt"}, id="toolu_1")), reply(text("ok")))
    recorder = Recorder()

    with session(project, model, recorder) as s:
        s.send("go")

    [notice] = [n for n in recorder.notices() if n.startswith("Skipped hooks")]
    assert notice.startswith(f"Skipped hooks in {settings}: hooks.PreToolUse[0].matcher 'Read(' is not a valid")
    assert "(asking you about every tool call instead, as the hook could have refused them)" in notice
    assert "hooks.PermissionRequest[0].matcher '[' is not a valid regular expression" in notice
    [question] = recorder.questions  # a Read rule allows it, but the broken guard might have refused it
    assert question.tool == "Read" and "hooks.PreToolUse[0].matcher 'Read(' is not a valid" in question.reason
    assert str(settings) in question.reason
    assert results_sent(model, 1)[0]["content"].endswith("hi")  # answered yes
    assert [entry["hook_event_name"] for entry in logged(log)] == ["Stop"]  # the file's other hooks run
