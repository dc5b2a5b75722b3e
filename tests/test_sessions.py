"""Sessions: transcripts on disk, --continue/--resume replaying them exactly, a killed run, compaction."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentcli.contracts import FileRecord, ModelRequest
from agentcli.errors import UsageError
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.sessions.compact import (
    CLEARED,
    SUMMARY_INTRO,
    clear_old_tool_results,
    render_conversation,
    summarised_conversation,
)
from agentcli.sessions.store import file_records, load_transcript
from agentcli.sessions.transcript import TranscriptWriter
from tests import fake_anthropic as fake
from tests.conftest import AGENTCLI, Ran, RunAgent, RunCli, RunMain, cli_env
from tests.fake_anthropic import FakeAnthropic, validation_error
from tests.session_helpers import (
    auto_compact_at,
    big_file,
    continues_after_a_killed_call,
    model_settings,
    records,
    transcript_files,
)
from tests.waiting import CEILING, wait_until


def strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def session_id(done: subprocess.CompletedProcess[str] | Ran) -> str:
    return str(json.loads(done.stdout)["session_id"])


def is_summary_request(request: ModelRequest) -> bool:
    return not request.tools and "<conversation>" in json.dumps(request.messages)


def size(request: ModelRequest) -> int:
    """Characters of JSON the request takes."""
    return len(json.dumps([request.system, request.tools, request.messages]))


# ------------------------------------------------------------------ transcript + --continue


def test_continue_replays_the_earlier_messages_byte_for_byte(
    run_main: RunMain, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    (project / "CLAUDE.md").write_text("Answer in one line.\n")
    (project / "notes.txt").write_text("alpha\n")
    fake_api.script(
        fake.reply(fake.text("Reading."), fake.tool_use("Read", {"file_path": "notes.txt"}, id="toolu_1")),
        fake.reply(fake.text("It says alpha.")),
        fake.reply(fake.text("Still alpha.")),
    )
    first = run_main("run", "what is in notes.txt?", "--output-format", "json")
    assert first.returncode == 0, first.stderr
    (project / "new_file.py").write_text("x = 1\n")  # git status changes: a fresh system prompt would differ

    second = run_main("run", "-c", "and now?", "--output-format", "json")

    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["result"] == "Still alpha."
    assert session_id(second) == session_id(first)
    earlier, resumed = fake_api.requests[1].body, fake_api.requests[2].body
    assert resumed["system"] == earlier["system"]
    prefix = strip_cache_control(resumed["messages"][: len(earlier["messages"])])
    assert json.dumps(prefix) == json.dumps(strip_cache_control(earlier["messages"]))
    assert resumed["messages"][3]["content"] == [{"type": "text", "text": "It says alpha."}]
    new_prompt = json.dumps(resumed["messages"][-1])
    assert "and now?" in new_prompt and "Answer in one line." not in new_prompt  # CLAUDE.md not sent again
    # The prompt cache (simulated by the fake) serves the whole earlier prompt.
    earlier_usage = fake_api.usage_log[1]
    earlier_total = sum(earlier_usage[k] for k in ("input_tokens", "cache_read_input_tokens"))
    earlier_total += earlier_usage["cache_creation_input_tokens"]
    assert fake_api.usage_log[2]["cache_read_input_tokens"] == earlier_total
    [path] = transcript_files(home, project)
    assert path.name == f"{session_id(first)}.jsonl"


def test_a_claude_md_changed_since_the_earlier_run_is_sent_again(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    (project / "CLAUDE.md").write_text("Use tabs.\n")
    model.script(reply(text("Answer-A")), reply(text("Answer-B")))
    assert run_agent("first").returncode == 0
    (project / "CLAUDE.md").write_text("Use spaces.\n")

    done = run_agent("second", continue_session=True)

    assert done.returncode == 0, done.stderr
    new_prompt = json.dumps(model.requests[1].messages[-1])
    assert "Use spaces." in new_prompt and "changed during this session" in new_prompt


def test_a_new_system_prompt_on_resume_is_recorded_and_kept(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path
) -> None:
    model.script(reply(text("Answer-A")), reply(text("Answer-B")), reply(text("Answer-C")))
    assert run_agent("first").returncode == 0

    assert run_agent("second", continue_session=True, append_system_prompt="Reply in French.").returncode == 0
    assert run_agent("third", continue_session=True).returncode == 0

    systems = [json.dumps(r.system) for r in model.requests]
    assert "Reply in French." not in systems[0]
    assert "Reply in French." in systems[1] and systems[2] == systems[1]
    [path] = transcript_files(home, project)
    assert [r["type"] for r in records(path)].count("system") == 1


def test_transcript_records_each_message_with_metadata(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path
) -> None:
    (project / "CLAUDE.md").write_text("Be brief.\n")
    model.script(reply(tool_use("Glob", {"pattern": "*.md"}, id="toolu_1")), reply(text("One file.")))

    done = run_agent("list the markdown files")

    assert done.returncode == 0, done.stderr
    [path] = transcript_files(home, project)
    lines = records(path)
    assert [r["type"] for r in lines] == ["session", "title", "message", "message", "message", "message", "run"]
    header = lines[0]
    assert header["cwd"] == str(project) and header["model"] == "claude-sonnet-5-5" and header["time"]
    assert header["system"] == strip_cache_control(model.requests[0].system)
    assert lines[1]["title"] == "list the markdown files"
    messages = [r["message"] for r in lines[2:-1]]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert strip_cache_control(model.requests[1].messages) == messages[:3]
    # the reminder state, for resuming
    assert set(lines[2]["reminders"]) == {"instructions", "skills", "mode", "tasks", "plan"}
    assert lines[3]["context_tokens"] > 0
    assert lines[4]["calls"] == {"toolu_1": {"ms": lines[4]["calls"]["toolu_1"]["ms"]}}  # ran, no failure
    assert [r["stop_reason"] for r in lines[3]["requests"] + lines[5]["requests"]] == ["tool_use", "end_turn"]
    assert {k: lines[-1][k] for k in ("stop", "turns")} == {"stop": "done", "turns": 2}
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_resume_by_id_picks_that_session(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(text("Answer-A")), reply(text("Answer-B")), reply(text("Answer-C")))
    first = run_agent("topic A", output_format="json")
    second = run_agent("topic B", output_format="json")
    assert session_id(first) != session_id(second)

    done = run_agent("back to A", resume=session_id(first)[:8], output_format="json")

    assert done.returncode == 0, done.stderr
    assert session_id(done) == session_id(first)
    messages = model.requests[2].messages
    assert "topic A" in json.dumps(messages[0]) and messages[1]["content"][0]["text"] == "Answer-A"
    assert "topic B" not in json.dumps(messages)


def test_unknown_session_id_is_a_usage_error_listing_recent_ones(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(text("Answer-A")))
    first = run_agent("remember me", output_format="json")

    done = run_agent("hello", resume="no-such-session")

    assert done.returncode == 2
    assert "No session 'no-such-session'" in done.stderr
    assert session_id(first) in done.stderr and "remember me" in done.stderr
    assert len(model.requests) == 1


def test_continue_without_any_session_is_a_usage_error(run_agent: RunAgent, model: ScriptedModel) -> None:
    done = run_agent("hello", continue_session=True)

    assert done.returncode == 2
    assert "No earlier session to continue" in done.stderr
    assert model.requests == []


# ------------------------------------------------------------------ a killed run


def test_a_run_killed_during_a_long_bash_leaves_a_transcript_that_continues(
    fake_api: FakeAnthropic, run_cli: RunCli, home: Path, project: Path
) -> None:
    command = "sleep 30 & echo $! > sleeper.pid; wait"
    fake_api.script(fake.reply(fake.text("Waiting."), fake.tool_use("Bash", {"command": command}, id="toolu_long")))
    proc = subprocess.Popen(
        [AGENTCLI, "run", "wait a while", "--permission-mode", "bypassPermissions"],
        cwd=project,
        env=cli_env(home, fake_api.url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pid_file = project / "sleeper.pid"
    try:
        wait_until(lambda: pid_file.exists() and bool(pid_file.read_text().strip()), "the Bash command starting")
        [path] = transcript_files(home, project)
        written = records(path)  # written as the turn goes, not at the end
        assert written[-1]["message"]["content"][-1]["id"] == "toolu_long"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=CEILING)
    finally:
        if pid_file.exists() and pid_file.read_text().strip():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
    continues_after_a_killed_call(run_cli, fake_api, "toolu_long")


def test_a_torn_last_line_is_dropped_and_the_session_continues(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path
) -> None:
    model.script(reply(text("Answer-A")), reply(text("Answer-B")))
    assert run_agent("first").returncode == 0
    [path] = transcript_files(home, project)
    with path.open("a") as file:
        file.write('{"type":"message","time":"2026-01-01","message":{"role":"assistant","content":[{"type":"te')

    done = run_agent("second", continue_session=True)

    assert done.returncode == 0, done.stderr
    assert model.rejected == []
    assert [m["role"] for m in model.requests[1].messages] == ["user", "assistant", "user"]
    lines = records(path)  # every line parses again: the torn one was cut before appending
    assert lines[-2]["message"]["content"] == [{"type": "text", "text": "Answer-B"}]
    assert lines[-1]["type"] == "run"


def test_load_repairs_tool_calls_left_without_results(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    user = {"role": "user", "content": [{"type": "text", "text": "go"}]}
    calls = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}},
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "sleep 9"}},
        ],
    }
    lines = [{"type": "message", "message": user}, {"type": "message", "message": calls}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"type":"mess')

    loaded = load_transcript(path)

    assert loaded.torn_lines == 1
    conversation = [*loaded.messages, *loaded.repairs()]
    assert loaded.messages == [user, calls]  # earlier messages untouched
    body = {"model": "m", "max_tokens": 10, "messages": [*conversation, user]}
    assert validation_error(body) is None
    assert [b["tool_use_id"] for b in conversation[2]["content"][:2]] == ["t1", "t2"]


# ------------------------------------------------------------------ compaction


def conversation_with_results(count: int, size: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "read them all"}]}]
    for n in range(count):
        call = {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": f"f{n}"}}
        messages.append({"role": "assistant", "content": [call]})
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": f"file {n} " + "x" * size}
        messages.append({"role": "user", "content": [result]})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    return messages


def test_clearing_old_tool_results_keeps_the_newest_and_the_protocol() -> None:
    messages = conversation_with_results(5, 2000)
    original = json.dumps(messages)

    cleared, count = clear_old_tool_results(messages, keep_recent=3)

    assert count == 2
    assert json.dumps(messages) == original  # a new list: the old conversation is not rewritten
    contents = [m["content"][0]["content"] for m in cleared if m["content"][0].get("type") == "tool_result"]
    assert contents[:2] == [CLEARED, CLEARED]
    assert all(c.startswith("file ") for c in contents[2:])
    body = {"model": "m", "max_tokens": 10, "messages": [*cleared, {"role": "user", "content": "next"}]}
    assert validation_error(body) is None
    assert clear_old_tool_results(cleared, keep_recent=3)[1] == 0  # nothing left to clear


def test_summary_input_is_capped_and_the_new_conversation_is_valid() -> None:
    messages = conversation_with_results(40, 3000)

    rendered = render_conversation(messages, max_chars=20_000)

    assert len(rendered) < 20_200
    assert "read them all" in rendered  # the start (the request) is kept
    assert "file 39" in rendered and "characters of the conversation omitted" in rendered
    reminder = {"type": "text", "text": "<system-reminder>\nrules\n</system-reminder>"}
    new = summarised_conversation("SUMMARY", [reminder], mid_task=True)
    assert new[0]["content"][0] == reminder and new[0]["content"][1]["text"].startswith(SUMMARY_INTRO)
    assert validation_error({"model": "m", "max_tokens": 10, "messages": new}) is None


def test_auto_compact_summarises_when_the_context_fills_up(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path
) -> None:
    big_file(project / "one.txt", 20_000)  # about 5.6k tokens read
    big_file(project / "two.txt", 20_000)
    auto_compact_at(run_agent, model, project, 8_400)  # passed by the second read only
    model.script(
        reply(tool_use("Read", {"file_path": "one.txt"}, id="toolu_1")),
        reply(tool_use("Read", {"file_path": "two.txt"}, id="toolu_2")),
        reply(text("SUMMARY-OF-THE-WORK: read one.txt and two.txt.")),
        reply(text("Both files hold digits.")),
    )

    done = run_agent("what is in one.txt and two.txt?")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Both files hold digits.\n"
    assert "Auto-compacted" in done.stderr and "summarised" in done.stderr
    before, summary, after = model.requests[2:5]
    assert is_summary_request(summary) and summary.max_tokens <= 4_000
    assert model.rejected == []
    [message] = after.messages
    sent = json.dumps(message)
    assert "SUMMARY-OF-THE-WORK" in sent and "Continue the task" in sent
    assert size(after) < size(before) - 10_000
    path = transcript_files(home, project)[-1]
    lines = records(path)
    boundary = next(r for r in lines if r["type"] == "compact")
    assert boundary["trigger"] == "auto" and boundary["summarised"] is True
    kinds = [r["type"] for r in lines]
    assert kinds == ["session", "title", *["message"] * 5, "compact", "message", "message", "run"]
    answer = {"role": "assistant", "content": [{"type": "text", "text": "Both files hold digits."}]}
    assert load_transcript(path).messages == [strip_cache_control(message), answer]


def test_a_summary_request_draws_on_the_runs_budget(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    big_file(project / "one.txt", 20_000)
    big_file(project / "two.txt", 20_000)
    auto_compact_at(run_agent, model, project, 8_400)  # passed by the second read only
    model.script(
        reply(tool_use("Read", {"file_path": "one.txt"}, id="toolu_1")),
        reply(tool_use("Read", {"file_path": "two.txt"}, id="toolu_2")),
        reply(text("SUMMARY-OF-THE-WORK: read both."), usage={"input_tokens": 1_000_000}),
        reply(text("Both files hold digits.")),
    )

    done = run_agent("what is in one.txt and two.txt?", max_budget_tokens=200_000)

    assert done.returncode == 1
    assert "Auto-compacted" in done.stderr
    assert re.search(r"Error: Used 1,0\d\d,\d{3} tokens, over this run's budget of 200,000", done.stderr), done.stderr
    assert is_summary_request(model.requests[-1])  # nothing was sent after the summary passed the budget
    assert model.remaining == 1


def test_auto_compact_first_just_clears_old_tool_results(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    big_file(project / "a.txt", 24_000)  # about 6.7k tokens read
    big_file(project / "b.txt", 24_000)
    for name in ("c", "d"):
        (project / f"{name}.txt").write_text("small\n")
    big_file(project / "e.txt", 16_000)  # about 4.5k
    auto_compact_at(run_agent, model, project, 15_200)  # passed by the last read only
    model.script(
        *(reply(tool_use("Read", {"file_path": f"{name}.txt"}, id=f"toolu_{name}")) for name in "abcde"),
        reply(text("Read them all.")),
    )

    done = run_agent("read a to e one by one")

    assert done.returncode == 0, done.stderr
    assert "Auto-compacted: cleared 2 old tool results" in done.stderr
    assert not any(is_summary_request(r) for r in model.requests)
    last = model.requests[-1]
    assert model.rejected == []
    results = [b for m in last.messages for b in m["content"] if b.get("type") == "tool_result"]
    assert [r["content"] == CLEARED for r in results] == [True, True, False, False, False]
    assert size(last) < size(model.requests[-2]) - 30_000


def test_auto_compact_can_be_turned_off(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    big_file(project / "one.txt", 20_000)
    big_file(project / "two.txt", 20_000)
    model_settings(project, models={"claude-sonnet-5-5": {"context_window": 4_000}}, autoCompactPercent=False)
    model.script(
        reply(tool_use("Read", {"file_path": "one.txt"})),
        reply(tool_use("Read", {"file_path": "two.txt"})),
        reply(text("done")),
    )

    done = run_agent("read both")

    assert done.returncode == 0, done.stderr
    assert "compacted" not in done.stderr.lower()
    assert len(model.requests) == 3


@pytest.mark.parametrize("value", [150, "80", -1])
def test_a_bad_auto_compact_setting_is_a_usage_error(run_agent: RunAgent, project: Path, value: object) -> None:
    model_settings(project, autoCompactPercent=value)

    done = run_agent("hello")

    assert done.returncode == 2
    assert "autoCompactPercent must be a number from 1 to 100" in done.stderr


def test_an_open_transcript_is_locked_and_its_line_in_progress_is_not_cut(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    notices: list[str] = []
    first = TranscriptWriter.new(
        path, session_id="s", cwd=tmp_path, provider="anthropic", model="m", system=[], on_error=notices.append
    )
    first.write({"type": "title", "time": "t", "title": "hello"})
    with path.open("ab") as file:  # the other process's next line, half written
        file.write(b'{"type":"message","time":"t","mess')
    size = path.stat().st_size

    with pytest.raises(UsageError, match="Session s is in use by another agentcli process"):
        TranscriptWriter.existing(path, notices.append)

    assert path.stat().st_size == size
    first.close()
    second = TranscriptWriter.existing(path, notices.append)  # free now: it takes over and cuts the torn line
    assert path.read_bytes().endswith(b'"title":"hello"}\n')
    second.close()
    assert notices == []


def test_a_resumed_session_may_edit_what_it_read_unless_the_file_changed_since(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path
) -> None:
    (project / "a.txt").write_text("alpha\n")
    (project / "b.txt").write_text("beta\n")
    model.script(
        reply(tool_use("Read", {"file_path": "a.txt"}), tool_use("Read", {"file_path": "b.txt"})),
        reply(text("Read both.")),
        reply(
            tool_use("Edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
            tool_use("Edit", {"file_path": "b.txt", "old_string": "beta", "new_string": "BETA"}),
        ),
        reply(text("Done.")),
    )
    assert run_agent("read a.txt and b.txt").returncode == 0
    (project / "b.txt").write_text("beta, edited by the user\n")

    done = run_agent("capitalise both", continue_session=True, permission_mode="acceptEdits")

    assert done.returncode == 0, done.stderr
    assert (project / "a.txt").read_text() == "ALPHA\n"  # read before the resume, unchanged since: editable
    assert (project / "b.txt").read_text() == "beta, edited by the user\n"
    results = [b for b in model.requests[-1].messages[-1]["content"] if b.get("type") == "tool_result"]
    assert not results[0].get("is_error")
    assert results[1]["is_error"] is True and "was modified since you read it" in results[1]["content"]
    [path] = transcript_files(home, project)
    recorded = [r["read_files"] for r in records(path) if "read_files" in r]
    assert sorted(Path(p).name for p in recorded[0]) == ["a.txt", "b.txt"]
    assert [Path(p).name for p in recorded[-1]] == ["a.txt"]  # afterwards, only what changed is written


def test_guard_records_of_files_read_only_in_part_load_back_without_a_hash() -> None:
    recorded = {
        "/p/part.log": {"mtime_ns": 5, "size": 9, "sha256": None},  # a partial Read: no whole-file hash
        "/p/whole.txt": {"mtime_ns": 7, "size": 3, "sha256": "ab12"},
        "/p/broken": {"mtime_ns": "soon"},
    }
    assert file_records(recorded) == {
        Path("/p/part.log"): FileRecord(5, 9, None),
        Path("/p/whole.txt"): FileRecord(7, 3, "ab12"),
    }
