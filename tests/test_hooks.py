"""Hooks: each event and exit code, JSON decisions, permissions, timeouts, sub-agents, trust.

Hooks are real processes (`tests/hooks_helpers.HOOK_SOURCE`); what is asserted is what each was
handed on stdin, the files, what the model was sent and what the user was told.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from agentcli.access import Access
from agentcli.agents.build import build_agent
from agentcli.agents.sources import ToolList
from agentcli.contracts import JSON, Concurrency, ToolContext, ToolResult
from agentcli.events import Event, Notice
from agentcli.hooks import Hooks, load_hooks, matcher_matches
from agentcli.hooks.runner import MAX_OUTPUT_CHARS
from agentcli.hooks.trust import ENABLE_ALL_KEY, TRUST_KEY, hooks_digest
from agentcli.loop import MAX_STOP_HOOK_CONTINUATIONS, LoopConfig
from agentcli.permissions.gate import Gate
from agentcli.permissions.prompt import Answer, PermissionRequest
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.session import Session, SessionOptions
from agentcli.workspace.local import LocalWorkspace
from tests import fake_anthropic as wire
from tests.conftest import AGENTCLI, RunAgent, cli_env
from tests.fake_anthropic import FakeAnthropic
from tests.hooks_helpers import hook_command, hook_entry, logged, write_settings
from tests.terminal import Terminal

DATA = Path(__file__).parent / "data"
COMMON_FIELDS = {"session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode"}


def project_hooks(project: Path, hooks: JSON) -> Path:
    """`hooks` in the project's checked-in settings, which the user trusts (their own local settings say so)."""
    trust_project_hooks(project)
    return checked_in_hooks(project, hooks)


def checked_in_hooks(project: Path, hooks: JSON) -> Path:
    """`hooks` in the project's checked-in settings, not trusted (yet)."""
    return write_settings(project / ".agentcli" / "settings.json", {"hooks": hooks})


def trust_project_hooks(project: Path) -> None:
    write_settings(project / ".agentcli" / "settings.local.json", {ENABLE_ALL_KEY: True})


def results_sent(model: ScriptedModel, index: int) -> list[JSON]:
    return [b for b in model.requests[index].messages[-1]["content"] if b.get("type") == "tool_result"]


def texts_sent(model: ScriptedModel, index: int) -> list[str]:
    return [b["text"] for b in model.requests[index].messages[-1]["content"] if b.get("type") == "text"]


class Recorder:
    """A prompter answering yes and keeping each question; the session's events too."""

    def __init__(self) -> None:
        self.questions: list[PermissionRequest] = []
        self.events: list[Event] = []

    def __call__(self, request: PermissionRequest) -> Answer:
        self.questions.append(request)
        return Answer.yes()

    def notices(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, Notice)]


def session(project: Path, model: ScriptedModel, recorder: Recorder, **options: object) -> Session:
    return Session(SessionOptions(**options), project, recorder.events.append, model=model, prompter=recorder)  # type: ignore[arg-type]


# ------------------------------------------------------------------ configuration


def test_matchers_follow_claude_code() -> None:
    assert matcher_matches("", "Bash") and matcher_matches("*", "mcp__x__y")
    assert matcher_matches("Bash|Edit", "Edit") and not matcher_matches("Bash|Edit", "MultiEdit")
    assert matcher_matches("mcp__github__.*", "mcp__github__create_issue")
    assert not matcher_matches("mcp__github__.*", "mcp__gitlab__create_issue")
    assert matcher_matches("Notebook.*", "NotebookEdit")


def test_hooks_of_every_settings_file_run_and_keep_their_source(
    run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path, tmp_path: Path
) -> None:
    logs = {scope: tmp_path / f"{scope}.log" for scope in ("user", "project", "local")}
    files = {
        "user": home / ".agentcli" / "settings.json",
        "project": project / ".agentcli" / "settings.json",
        "local": project / ".agentcli" / "settings.local.json",
    }
    for scope, path in files.items():
        trusted = {ENABLE_ALL_KEY: True} if scope == "local" else {}
        write_settings(
            path, {"hooks": {"UserPromptSubmit": [hook_entry(hook_command(tmp_path, logs[scope]))]}, **trusted}
        )
    model.script(reply(text("ok")))

    assert run_agent("hello").returncode == 0

    for scope in files:
        assert [entry["prompt"] for entry in logged(logs[scope])] == ["hello"]
    from agentcli.settings import load_settings

    config = load_hooks(load_settings(project).raw)
    assert [(h.scope, h.source) for h in config.commands] == [(scope, files[scope]) for scope in files]


def test_a_malformed_guard_fails_closed_its_calls_are_asked_and_the_other_hooks_run(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    path = project_hooks(
        project,
        {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command"}]}],  # no command: what did it guard?
            "PostToolUse": [hook_entry(hook_command(tmp_path, log))],
        },
    )
    (project / "notes.txt").write_text("hi\n")
    model.script(
        reply(
            tool_use("Bash", {"command": "touch made.txt"}, id="toolu_bash"),
            tool_use("Read", {"file_path": "notes.txt"}, id="toolu_read"),
        ),
        reply(text("done")),
    )

    ran = run_agent("hello", allowed_tools=["Bash(touch:*)"])

    assert ran.returncode == 0, ran.stderr
    notice = " ".join(ran.stderr.split())
    assert f"Skipped hooks in {path}: hooks.PreToolUse[0].hooks[0].command must be the shell command to run" in notice
    assert "(asking you about the calls of 'Bash' instead, as the hook could have refused them)" in notice
    assert not (project / "made.txt").exists()  # an allow rule no longer suffices: nobody to ask in a run
    bash, read = results_sent(model, 1)
    assert bash["is_error"] and "a PreToolUse hook asks the user to confirm" in bash["content"], bash
    assert "hooks.PreToolUse[0].hooks[0].command must be the shell command to run" in bash["content"]
    assert read["content"].endswith("hi")  # the guard names Bash only
    assert [entry["tool_name"] for entry in logged(log)] == ["Read"]  # the file's other hook runs


def test_a_repositorys_broken_guard_asks_only_once_its_hooks_are_trusted(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    checked_in_hooks(project, {"PreToolUse": [{"matcher": "Bash(", "hooks": [{"type": "command", "command": "x"}]}]})
    touch = reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1"))
    model.script(touch, reply(text("done")), touch, reply(text("done")))

    assert run_agent("go", allowed_tools=["Bash(touch:*)"]).returncode == 0
    assert (project / "made.txt").exists()  # its hooks would not run untrusted: nor does the guard

    (project / "made.txt").unlink()
    assert run_agent("go", allowed_tools=["Bash(touch:*)"], trust_project_hooks=True).returncode == 0
    assert not (project / "made.txt").exists()
    assert "a PreToolUse hook asks the user to confirm" in results_sent(model, 3)[0]["content"]


def test_a_configuration_from_claude_codes_documentation_works_verbatim(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    # The file protection example of Claude Code's hooks guide ("Get started with Claude Code
    # hooks"), copied unchanged into tests/data.
    trust_project_hooks(project)
    shutil.copy(DATA / "claude_code_file_protection.json", project / ".agentcli" / "settings.json")
    model.script(
        reply(
            tool_use("Write", {"file_path": str(project / ".env"), "content": "KEY=1\n"}, id="toolu_env"),
            tool_use("Write", {"file_path": str(project / "notes.txt"), "content": "hi\n"}, id="toolu_notes"),
        ),
        reply(text("done")),
    )

    assert run_agent("write them", permission_mode="acceptEdits").returncode == 0

    assert not (project / ".env").exists()
    assert (project / "notes.txt").read_text() == "hi\n"
    env_result, notes_result = results_sent(model, 1)
    assert env_result["is_error"] and "Blocked by a PreToolUse hook" in env_result["content"]
    assert "is_error" not in notes_result


# ------------------------------------------------------------------ PreToolUse


def test_pre_tool_use_exit_2_blocks_the_call_and_its_stderr_is_the_result(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "pre.log"
    project_hooks(
        project,
        {"PreToolUse": [hook_entry(hook_command(tmp_path, log, exit=2, stderr="No touching."), matcher="Bash")]},
    )
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("ok")))

    assert run_agent("go", allowed_tools=["Bash"]).returncode == 0  # `run` runs the project's hooks unasked

    assert not (project / "made.txt").exists()
    (result,) = results_sent(model, 1)
    assert result["is_error"] and "No touching." in result["content"]
    (handed,) = logged(log)
    assert handed.keys() >= COMMON_FIELDS
    assert handed["hook_event_name"] == "PreToolUse" and handed["cwd"] == str(project)
    assert handed["tool_name"] == "Bash" and handed["tool_use_id"] == "toolu_1"
    assert handed["tool_input"] == {"command": "touch made.txt"}
    assert handed["permission_mode"] == "default"
    assert Path(handed["transcript_path"]).parent.is_dir()


def test_a_hooks_deny_beats_an_allow_rule(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "Not on Fridays."}}  # fmt: skip
    project_hooks(
        project, {"PreToolUse": [hook_entry(hook_command(tmp_path, tmp_path / "l", stdout=json.dumps(deny)))]}
    )
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("ok")))

    run_agent("go", permission_mode="bypassPermissions")

    assert not (project / "made.txt").exists()
    assert "Not on Fridays." in results_sent(model, 1)[0]["content"]


def test_a_hooks_allow_runs_a_call_nobody_could_be_asked_about(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    allow = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    project_hooks(
        project, {"PreToolUse": [hook_entry(hook_command(tmp_path, tmp_path / "l", stdout=json.dumps(allow)))]}
    )
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("ok")))

    run_agent("go")

    assert (project / "made.txt").exists()


def test_a_hooks_allow_never_beats_a_deny_rule_or_a_protected_path(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    allow = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    project_hooks(
        project, {"PreToolUse": [hook_entry(hook_command(tmp_path, tmp_path / "l", stdout=json.dumps(allow)))]}
    )
    model.script(
        reply(
            tool_use("Bash", {"command": "touch denied.txt"}, id="toolu_deny"),
            tool_use(
                "Write", {"file_path": str(project / ".git" / "hooks" / "pre-commit"), "content": "x"}, id="toolu_git"
            ),
        ),
        reply(text("ok")),
    )

    run_agent("go", disallowed_tools=["Bash(touch:*)"], permission_mode="acceptEdits")

    assert not (project / "denied.txt").exists()
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    denied, protected = results_sent(model, 1)
    assert denied["is_error"] and "Bash(touch:*)" in denied["content"]
    assert protected["is_error"]


def test_a_hooks_ask_asks_even_where_a_rule_allows(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    ask = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                  "permissionDecisionReason": "Production database."}}  # fmt: skip
    project_hooks(project, {"PreToolUse": [hook_entry(hook_command(tmp_path, tmp_path / "l", stdout=json.dumps(ask)))]})
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("ok")))
    recorder = Recorder()

    with session(project, model, recorder, allowed_tools=["Bash"]) as s:
        s.send("go")

    (question,) = recorder.questions
    assert "Production database." in question.reason
    assert (project / "made.txt").exists()


def test_updated_input_is_what_runs_and_what_the_question_shows(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    change = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "touch safer.txt"}}}
    project_hooks(
        project, {"PreToolUse": [hook_entry(hook_command(tmp_path, tmp_path / "l", stdout=json.dumps(change)))]}
    )
    model.script(reply(tool_use("Bash", {"command": "touch risky.txt"}, id="toolu_1")), reply(text("ok")))
    recorder = Recorder()

    with session(project, model, recorder) as s:
        s.send("go")

    assert (project / "safer.txt").exists() and not (project / "risky.txt").exists()
    (question,) = recorder.questions
    assert question.subject == "touch safer.txt" and "hook changed" in question.note


def test_an_updated_input_that_breaks_the_schema_is_not_run(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    change = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": 42}}}
    project_hooks(
        project, {"PreToolUse": [hook_entry(hook_command(tmp_path, tmp_path / "l", stdout=json.dumps(change)))]}
    )
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("ok")))

    run_agent("go", permission_mode="bypassPermissions")

    assert not (project / "made.txt").exists()
    (result,) = results_sent(model, 1)
    assert result["is_error"] and "not valid" in result["content"]


def test_continue_false_ends_the_turn_with_the_stop_reason(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    stop = {"continue": False, "stopReason": "Build is red; stopping."}
    project_hooks(
        project, {"PreToolUse": [hook_entry(hook_command(tmp_path, tmp_path / "l", stdout=json.dumps(stop)))]}
    )
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("never sent")))

    ran = run_agent("go", permission_mode="bypassPermissions")

    assert ran.returncode == 1 and "Build is red; stopping." in ran.stderr
    assert len(model.requests) == 1 and not (project / "made.txt").exists()


# ------------------------------------------------------------------ PostToolUse


def test_post_tool_use_feedback_goes_to_the_model_with_the_result(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    post, failure = tmp_path / "post.log", tmp_path / "failure.log"
    context = {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "Check the path."}}
    project_hooks(
        project,
        {
            "PostToolUse": [hook_entry(hook_command(tmp_path, post, exit=2, stderr="Lint: missing newline."))],
            "PostToolUseFailure": [hook_entry(hook_command(tmp_path, failure, stdout=json.dumps(context)))],
        },
    )
    model.script(
        reply(
            tool_use("Bash", {"command": "printf made > made.txt"}, id="toolu_ok"),
            tool_use("Read", {"file_path": str(project / "missing.txt")}, id="toolu_bad"),
        ),
        reply(text("ok")),
    )

    run_agent("go", permission_mode="bypassPermissions")

    assert (project / "made.txt").read_text() == "made"  # the call ran
    ok, bad = results_sent(model, 1)
    assert "Lint: missing newline." in ok["content"]
    assert bad["is_error"] and "Check the path." in bad["content"]
    assert [e["tool_use_id"] for e in logged(post)] == ["toolu_ok"]
    assert "tool_response" in logged(post)[0]
    (handed,) = logged(failure)
    assert handed["hook_event_name"] == "PostToolUseFailure" and handed["tool_name"] == "Read" and handed["error"]


def test_a_hooks_output_past_the_cap_is_cut_saying_how_much(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    flood = "import sys; sys.stdout.write('o' * 3_000_000); sys.stderr.write('é' * 1_500_000); sys.exit(2)"
    project_hooks(project, {"PostToolUse": [hook_entry(shlex.join([sys.executable, "-c", flood]))]})
    model.script(reply(tool_use("Bash", {"command": "true"}, id="toolu_ok")), reply(text("ok")))

    run_agent("go", permission_mode="bypassPermissions")

    (result,) = results_sent(model, 1)
    said = "é" * MAX_OUTPUT_CHARS + f"\n[… {2 * 1_500_000 - 2 * MAX_OUTPUT_CHARS:,} more bytes cut]"
    assert said in result["content"] and len(result["content"]) < 2 * MAX_OUTPUT_CHARS


# ------------------------------------------------------------------ UserPromptSubmit, SessionStart


def test_prompt_and_session_start_output_become_reminders_in_the_newest_message(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    prompt_log, start_log = tmp_path / "prompt.log", tmp_path / "start.log"
    project_hooks(
        project,
        {
            "UserPromptSubmit": [hook_entry(hook_command(tmp_path, prompt_log, stdout="Ticket: ABC-123"))],
            "SessionStart": [hook_entry(hook_command(tmp_path, start_log, stdout="Branch: main"), matcher="startup")],
        },
    )
    model.script(reply(text("ok")))

    assert run_agent("what now?").returncode == 0

    sent = texts_sent(model, 0)
    assert sent[-1] == "what now?"
    assert "<system-reminder>\nTicket: ABC-123\n</system-reminder>" in sent
    assert "<system-reminder>\nBranch: main\n</system-reminder>" in sent
    assert logged(prompt_log)[0]["prompt"] == "what now?"
    assert logged(start_log)[0]["source"] == "startup"


def test_a_blocked_prompt_is_never_sent_and_the_user_sees_why(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    project_hooks(
        project,
        {
            "UserPromptSubmit": [
                hook_entry(hook_command(tmp_path, tmp_path / "l", exit=2, stderr="No secrets in prompts."))
            ]
        },
    )
    model.script(reply(text("never")))

    ran = run_agent("my password is hunter2")

    assert model.requests == []
    assert ran.returncode == 1 and "No secrets in prompts." in ran.stderr


# ------------------------------------------------------------------ Stop


def test_a_stop_hook_keeps_the_model_going_a_bounded_number_of_times(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "stop.log"
    project_hooks(project, {"Stop": [hook_entry(hook_command(tmp_path, log, exit=2, stderr="Run the tests first."))]})
    model.script(*[reply(text(f"done {n}")) for n in range(MAX_STOP_HOOK_CONTINUATIONS + 1)])

    assert run_agent("go").returncode == 0

    assert len(model.requests) == MAX_STOP_HOOK_CONTINUATIONS + 1
    assert "Run the tests first." in texts_sent(model, 1)[0]
    assert [e["stop_hook_active"] for e in logged(log)] == [False] + [True] * MAX_STOP_HOOK_CONTINUATIONS


# ------------------------------------------------------------------ other events, failures, timeouts


def test_session_end_pre_compact_and_notification_hooks_run(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    logs = {event: tmp_path / f"{event}.log" for event in ("SessionEnd", "PreCompact", "Notification")}
    project_hooks(project, {event: [hook_entry(hook_command(tmp_path, log))] for event, log in logs.items()})
    model.script(reply(tool_use("Bash", {"command": "true"}, id="toolu_1")), reply(text("ok")), reply(text("summary")))
    recorder = Recorder()

    with session(project, model, recorder) as s:
        s.send("go")
        s.compact()

    assert logged(logs["Notification"])[0]["message"] == "agentcli needs your permission to use Bash"
    assert logged(logs["PreCompact"])[0]["trigger"] == "manual"
    assert logged(logs["SessionEnd"])[0]["reason"] == "other"


def test_another_exit_status_is_a_warning_and_the_call_goes_on(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    project_hooks(project, {"PreToolUse": [hook_entry(hook_command(tmp_path, tmp_path / "l", exit=1, stderr="oops"))]})
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("ok")))
    recorder = Recorder()

    with session(project, model, recorder, permission_mode="bypassPermissions") as s:
        s.send("go")

    assert (project / "made.txt").exists()
    assert any("failed with exit status 1: oops" in notice for notice in recorder.notices())


def test_a_hook_past_its_timeout_is_killed_with_a_warning(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    pid_file = tmp_path / "hook.pid"
    project_hooks(
        project, {"PreToolUse": [hook_entry(hook_command(tmp_path, tmp_path / "l", pid=pid_file), timeout=1)]}
    )
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("ok")))
    recorder = Recorder()

    with session(project, model, recorder, permission_mode="bypassPermissions") as s:
        s.send("go")

    assert (project / "made.txt").exists()
    assert any("timed out after 1 s" in notice for notice in recorder.notices())
    pid = int(pid_file.read_text())
    status = Path(f"/proc/{pid}/status")
    assert not status.exists() or "zombie" in status.read_text()


def test_hooks_of_one_event_run_at_the_same_time(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    first, second = tmp_path / "first.flag", tmp_path / "second.flag"
    # each waits for the other's file: run one after the other, the first would give up (exit 3)
    a = hook_command(tmp_path, tmp_path / "a.log", touch=first, **{"await": second, "stdout": "A"})
    b = hook_command(tmp_path, tmp_path / "b.log", touch=second, **{"await": first, "stdout": "B"})
    project_hooks(project, {"UserPromptSubmit": [hook_entry(a), hook_entry(b)]})
    model.script(reply(text("ok")))

    run_agent("go")

    sent = texts_sent(model, 0)
    assert "<system-reminder>\nA\n</system-reminder>" in sent and "<system-reminder>\nB\n</system-reminder>" in sent


def test_hooks_never_see_the_api_key(run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path) -> None:
    env_file = tmp_path / "env.json"
    project_hooks(project, {"UserPromptSubmit": [hook_entry(hook_command(tmp_path, tmp_path / "l", env=env_file))]})
    model.script(reply(text("ok")))
    assert os.environ["ANTHROPIC_API_KEY"]

    run_agent("go")

    seen = json.loads(env_file.read_text())
    assert "ANTHROPIC_API_KEY" not in seen
    assert seen["CLAUDE_PROJECT_DIR"] == seen["AGENTCLI_PROJECT_DIR"] == str(project)


# ------------------------------------------------------------------ sub-agents and MCP-named tools


def test_hooks_run_for_a_sub_agents_calls_and_when_it_stops(
    run_agent: RunAgent, model: ScriptedModel, project: Path, tmp_path: Path
) -> None:
    pre, stop = tmp_path / "pre.log", tmp_path / "stop.log"
    project_hooks(
        project,
        {
            "PreToolUse": [hook_entry(hook_command(tmp_path, pre, exit=2, stderr="No reading."), matcher="Read")],
            "SubagentStop": [hook_entry(hook_command(tmp_path, stop))],
        },
    )
    (project / "a.txt").write_text("secret\n")
    task = {"description": "look", "prompt": "read a.txt", "subagent_type": "Explore"}
    model.script(
        reply(tool_use("Task", task, id="toolu_task")),
        reply(tool_use("Read", {"file_path": str(project / "a.txt")}, id="toolu_read")),
        reply(text("could not read it")),
        reply(text("ok")),
    )

    assert run_agent("go", permission_mode="bypassPermissions").returncode == 0

    (read_result,) = results_sent(model, 2)
    assert read_result["is_error"] and "No reading." in read_result["content"]
    assert [e["tool_use_id"] for e in logged(pre)] == ["toolu_read"]
    assert [e["hook_event_name"] for e in logged(stop)] == ["SubagentStop"]


class McpLikeTool:
    """A tool named as an MCP server's would be, from a tool source of its own."""

    name = "mcp__x__y"
    description = "Does y on server x."
    input_schema: JSON = {"type": "object", "properties": {}}
    concurrency: Concurrency = "exclusive"

    def __init__(self) -> None:
        self.ran = 0

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        self.ran += 1
        return ToolResult("y done")

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return Access(server="x")


def test_a_matcher_on_an_mcp_tool_name_blocks_that_tool(project: Path, tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"
    blocker = hook_command(tmp_path, log, exit=2, stderr="Server x is read-only today.")
    settings = [("local", tmp_path / "s.json", {"hooks": {"PreToolUse": [hook_entry(blocker, matcher="mcp__x__.*")]}})]
    tool = McpLikeTool()
    model = ScriptedModel(reply(tool_use("mcp__x__y", {}, id="toolu_mcp")), reply(text("ok")))
    agent = build_agent(
        sources=[ToolList("mcp:x", (tool,))],
        system=[{"type": "text", "text": "test"}],
        model=model,
        gate=Gate(mode="bypassPermissions"),
        config=LoopConfig(model="claude-sonnet-4-5"),
        ctx=ToolContext(LocalWorkspace(project)),
        on_event=lambda event: None,
        hooks=Hooks(load_hooks(settings), project),
    )
    try:
        agent.run([{"type": "text", "text": "go"}])
    finally:
        agent.close()

    assert tool.ran == 0
    (result,) = results_sent(model, 1)
    assert "Server x is read-only today." in result["content"]
    assert logged(log)[0]["tool_name"] == "mcp__x__y"


# ------------------------------------------------------------------ trust


def test_the_checked_in_settings_cannot_mark_their_own_hooks_trusted(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    log = tmp_path / "prompt.log"
    hooks = {"UserPromptSubmit": [hook_entry(hook_command(tmp_path, log))]}
    digest = hooks_digest(load_hooks([("project", project, {"hooks": hooks})]).commands)
    write_settings(
        project / ".agentcli" / "settings.json", {"hooks": hooks, TRUST_KEY: {"sha256": digest, "trusted": True}}
    )
    asked: list[int] = []

    def refuse(commands: object) -> bool:
        asked.append(1)
        return False

    model.script(reply(text("ok")), reply(text("ok")))
    with Session(SessionOptions(), project, lambda event: None, model=model, approve_hooks=refuse) as s:
        s.send("hi")
    with Session(SessionOptions(), project, lambda event: None, model=model, approve_hooks=refuse) as s:
        s.send("hi again")

    assert asked == [1]  # asked despite the file's claim, and the answer remembered
    assert logged(log) == []
    local = json.loads((project / ".agentcli" / "settings.local.json").read_text())
    assert local[TRUST_KEY] == {"sha256": digest, "trusted": False}


@pytest.mark.parametrize("answer", ["1", "2"])
def test_the_repl_asks_once_whether_to_trust_the_projects_hooks(
    answer: str, fake_api: FakeAnthropic, project: Path, tmp_path: Path, home: Path
) -> None:
    log = tmp_path / "prompt.log"
    checked_in_hooks(project, {"UserPromptSubmit": [hook_entry(hook_command(tmp_path, log))]})
    fake_api.script(wire.reply(wire.text("answered")))
    env = cli_env(home, fake_api.url)
    env.pop("NO_COLOR")
    env["TERM"] = "xterm-256color"

    terminal = Terminal([AGENTCLI], env=env, cwd=project, cols=160)
    try:
        terminal.wait_for("Trust these hooks and run them in this project?")
        terminal.type(answer)
        terminal.wait_for("(shift-tab)")
        terminal.submit("/hooks")
        terminal.wait_for(".agentcli/settings.json" if answer == "1" else "No hooks.")
        terminal.submit("hi")
        terminal.wait_for("answered")
    finally:
        terminal.close()
    assert [e["prompt"] for e in logged(log)] == (["hi"] if answer == "1" else [])

    again = Terminal([AGENTCLI], env=env, cwd=project, cols=160)
    try:
        screen = again.wait_for("(shift-tab)")  # remembered: no question the second time
    finally:
        again.close()
    assert "Trust these hooks" not in screen
