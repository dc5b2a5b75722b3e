"""What survives a compaction: the first request after it carries the user's requests word for
word, the instructions, the task list, the files changed and recently read, the skills in force,
where the work stood and the model's summary; a compaction's cost stays bounded whatever the
conversation's size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.contracts import JSON, ModelRequest
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.session import Session
from agentcli.session.composition import SessionOptions
from agentcli.sessions.carry import Budgets, TaskState, carry
from agentcli.sessions.compact import SUMMARY_INPUT_CHARS, SUMMARY_INTRO
from agentcli.sessions.store import load_transcript
from agentcli.sessions.worklog import ABSENT, WorkLog
from agentcli.workspace.local import LocalWorkspace
from tests.conftest import RunAgent
from tests.credential_values import SECRETS, assert_no_secret_in, hold_every_credential
from tests.hooks_helpers import hook_command, hook_entry, logged
from tests.session_helpers import records, transcript_files, two_files_compacting_at_the_second_read
from tests.test_hooks import Recorder, project_hooks
from tests.test_subagents import task

TODOS = [
    {"content": "Fix the parser", "status": "completed", "activeForm": "Fixing the parser"},
    {"content": "Add a changelog entry", "status": "in_progress", "activeForm": "Adding a changelog entry"},
]
FIRST = "Fix the off-by-one in src/parser.py. Never touch tests/: they are the spec."
SECOND = "/house-style"
THIRD = "Also add a changelog entry; keep it to one line, no emoji."


def session(project: Path, model: ScriptedModel, recorder: Recorder, mode: str | None = None) -> Session:
    options = SessionOptions(permission_mode=mode)
    return Session(options, project, recorder.events.append, model=model, prompter=recorder)


def is_summary_request(request: ModelRequest) -> bool:
    return not request.tools and "<conversation>" in json.dumps(request.messages)


def first_message_texts(request: ModelRequest) -> str:
    [message] = request.messages[:1]
    return "\n".join(block.get("text", "") for block in message["content"])


def long_session(project: Path, model: ScriptedModel, recorder: Recorder) -> Session:
    """Three requests with a constraint each, a task list, a skill, a file changed, one created."""
    (project / "CLAUDE.md").write_text("Indent with tabs in this project.\n")
    (project / "src").mkdir()
    (project / "src" / "parser.py").write_text("def last(items):\n    return items[len(items)]\n")
    (project / "tests").mkdir()
    skill = project / ".agentcli" / "skills" / "house-style"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\ndescription: House style\n---\nHOUSE-STYLE: short functions, no abbreviations.\n"
    )
    model.script(
        reply(tool_use("TodoWrite", {"todos": TODOS}, id="toolu_todo")),
        reply(tool_use("Read", {"file_path": "src/parser.py"}, id="toolu_read")),
        reply(
            tool_use(
                "Edit",
                {"file_path": "src/parser.py", "old_string": "items[len(items)]", "new_string": "items[-1]"},
                id="toolu_edit",
            )
        ),
        reply(text("Fixed the parser.")),
        reply(text("Noted the house style.")),
        reply(
            text("Writing the entry."), tool_use("Write", {"file_path": "CHANGELOG.md", "content": "- Fix last()\n"})
        ),
        reply(text("Added the changelog entry.")),
    )
    s = session(project, model, recorder)
    for request in (FIRST, SECOND, THIRD):
        s.send(request)
    return s


def test_the_first_request_after_compact_carries_the_task(
    model: ScriptedModel, project: Path, home: Path, tmp_path: Path, in_process_env: None
) -> None:
    log = tmp_path / "precompact.log"
    project_hooks(project, {"PreCompact": [hook_entry(hook_command(tmp_path, log, stdout="Name every file changed."))]})
    recorder = Recorder()
    with long_session(project, model, recorder) as s:
        model.script(reply(text("SUMMARY: parser fixed, changelog written.")), reply(text("Nothing is left.")))
        compacted = s.compact("focus on the parser")
        s.send("what is left?")

    summary, after = model.requests[-2:]
    assert is_summary_request(summary)
    asked = json.dumps(summary.messages)
    assert "focus on the parser" in asked and "Name every file changed." in asked  # /compact's and the hook's
    assert logged(log)[0]["custom_instructions"] == "focus on the parser"
    assert model.rejected == []
    carried = first_message_texts(after)
    for request in (FIRST, SECOND, THIRD):
        assert request in carried  # word for word
    assert carried.index(FIRST) < carried.index(THIRD)
    assert "Indent with tabs in this project." in carried  # the instructions, fresh
    assert "1. [completed] Fix the parser\n2. [in_progress] Add a changelog entry" in carried  # the task list
    assert "- src/parser.py: changed, still differs from before" in carried
    assert "- CHANGELOG.md: created" in carried
    assert "The current content of CHANGELOG.md" in carried and "- Fix last()" in carried
    assert "The current content of src/parser.py" in carried and "return items[-1]" in carried
    assert "HOUSE-STYLE: short functions, no abbreviations." in carried  # the skill in force
    assert "Your last message said:\nAdded the changelog entry." in carried  # where the work stood
    assert SUMMARY_INTRO + "SUMMARY: parser fixed, changelog written." in carried
    assert after.messages[-1]["content"][-1]["text"] == "what is left?"
    line = compacted.describe()
    assert line.startswith("Compacted: ") and "summarised the conversation (~" in line
    assert (
        "kept 3 requests word for word, the task list (2 items), 2 changed files, 2 files re-read, skill /house-style"
        in line
    )
    [path] = transcript_files(home, project)
    [boundary] = [r for r in records(path) if r["type"] == "compact"]
    kept = boundary["kept"]
    assert kept["requests"] == [FIRST, SECOND, THIRD] and kept["skills"] == ["house-style"]
    assert sorted(Path(p).name for p in kept["changed_files"]) == ["CHANGELOG.md", "parser.py"]
    assert kept["changed_files"][str(project / "CHANGELOG.md")] is ABSENT


def test_a_file_changed_back_is_said_to_be_as_it_was(model: ScriptedModel, project: Path, in_process_env: None) -> None:
    recorder = Recorder()
    with long_session(project, model, recorder) as s:
        (project / "src" / "parser.py").write_text("def last(items):\n    return items[len(items)]\n")  # undone
        (project / "CHANGELOG.md").unlink()
        model.script(reply(text("SUMMARY")), reply(text("ok")))
        s.compact()
        s.send("go on")

    carried = first_message_texts(model.requests[-1])
    assert "- src/parser.py: back as it was before the conversation changed it" in carried
    assert "- CHANGELOG.md: created, then removed" in carried
    assert "The current content of CHANGELOG.md" not in carried


def test_auto_compaction_mid_task_carries_the_request_and_the_call_in_progress(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    two_files_compacting_at_the_second_read(run_agent, model, project)
    model.script(
        reply(tool_use("Read", {"file_path": "one.txt"}, id="toolu_1")),
        reply(text("Now the second file."), tool_use("Read", {"file_path": "two.txt"}, id="toolu_2")),
        reply(text("SUMMARY-OF-THE-WORK")),
        reply(text("Both hold digits.")),
    )
    request = "Read one.txt and two.txt, and never print them whole."

    done = run_agent(request)

    assert done.returncode == 0, done.stderr
    assert "Auto-compacted: " in done.stderr and "kept 1 request word for word, 2 files re-read" in done.stderr
    after = model.requests[-1]
    assert model.rejected == [] and len(after.messages) == 1
    carried = first_message_texts(after)
    assert request in carried
    assert (
        "Your last message said:\nNow the second file.\n"
        'Its tool calls, and how each ended:\n- Read {"file_path": "two.txt"}: done' in carried
    )
    assert carried.rstrip().endswith("without asking the user to repeat anything.")


def test_requests_resumed_with_continue_are_carried_too(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    two_files_compacting_at_the_second_read(run_agent, model, project)
    model.script(
        reply(tool_use("Write", {"file_path": "notes.md", "content": "x\n"}, id="toolu_w")),
        reply(text("Wrote it.")),
    )
    assert run_agent("Write notes.md. Use British spelling throughout.", permission_mode="acceptEdits").returncode == 0
    model.script(
        reply(tool_use("Read", {"file_path": "one.txt"}, id="toolu_1")),
        reply(tool_use("Read", {"file_path": "two.txt"}, id="toolu_2")),
        reply(text("SUMMARY")),
        reply(text("Done.")),
    )

    done = run_agent("now read one.txt and two.txt", continue_session=True)

    assert done.returncode == 0, done.stderr
    carried = first_message_texts(model.requests[-1])
    assert "[1] Write notes.md. Use British spelling throughout.\n\n[2] now read one.txt and two.txt" in carried
    assert "- notes.md: created" in carried


def test_requests_over_their_budget_keep_the_first_and_the_latest(project: Path) -> None:
    requests = [f"request {n}: " + "words " * 200 for n in range(1, 41)]  # about 1.2k characters each

    with LocalWorkspace(project) as workspace:
        carried = carry(
            TaskState(requests=requests), workspace, WorkLog(workspace).fingerprint, Budgets(requests=2_500)
        )

    [block] = carried.blocks
    shown = block["text"]
    assert requests[0] in shown and requests[-1] in shown and requests[-2] in shown
    assert "request 2:" not in shown and "request 20:" not in shown
    left_out = carried.kept["requests_left_out"]
    assert 25 < left_out < 39
    assert f"[requests 2 to {1 + left_out} ({left_out} of them) are left out here" in shown
    assert len(shown) < 2_500 * 4 + 500
    assert carried.kept["requests"] == requests  # the record keeps them all
    assert carried.describe() == f"kept {40 - left_out} of 40 requests word for word"


def test_a_file_carried_again_has_the_credentials_redacted(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hold_every_credential(monkeypatch)
    (project / "env.txt").write_text(f"key={SECRETS['ANTHROPIC_API_KEY']}\nplain line\n")

    with LocalWorkspace(project) as workspace:
        carried = carry(TaskState(recent=[project / "env.txt"]), workspace, WorkLog(workspace).fingerprint)

    [block] = carried.blocks
    assert "plain line" in block["text"] and "[REDACTED]" in block["text"]
    assert_no_secret_in(block["text"])


def conversation_of(turns: int) -> list[JSON]:
    """A valid conversation of `turns` Read calls with 2k-character results."""
    messages: list[JSON] = [{"role": "user", "content": [{"type": "text", "text": "read everything"}]}]
    for n in range(turns):
        call = {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"file_path": f"f{n}.txt"}}
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": f"file {n} " + "x" * 2_000}
        messages += [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "Read them all."}]})
    return messages


def test_a_compaction_costs_one_bounded_request_whatever_the_conversations_size(
    model: ScriptedModel, project: Path, in_process_env: None
) -> None:
    sizes = {}
    for turns in (10, 2_000):
        model.script(reply(text("SUMMARY")), reply(text("ok")))
        before = len(model.requests)
        with session(project, model, Recorder()) as s:
            s.conversation.agent.replace_conversation(conversation_of(turns), 0)
            s.compact()
            s.send("go on")
        summaries = [r for r in model.requests[before:] if is_summary_request(r)]
        assert len(summaries) == 1 and len(model.requests) - before == 2
        [summary] = summaries
        assert len(json.dumps(summary.messages)) < SUMMARY_INPUT_CHARS + 10_000
        sizes[turns] = len(json.dumps(model.requests[-1].messages))
    assert sizes[2_000] < sizes[10] + 1_000  # the new conversation does not grow with the old one


def test_a_compaction_boundary_torn_by_a_killed_run_leaves_the_conversation_as_it_was(
    model: ScriptedModel, project: Path, home: Path, in_process_env: None
) -> None:
    model.script(reply(text("First answer.")), reply(text("SUMMARY")), reply(text("Second answer.")))
    with session(project, model, Recorder()) as s:
        s.send("remember the word PELICAN")
        s.compact()
    [path] = transcript_files(home, project)
    lines = path.read_bytes().splitlines(keepends=True)
    boundary = next(i for i, line in enumerate(lines) if line.startswith(b'{"type":"compact"'))
    path.write_bytes(b"".join(lines[:boundary]) + lines[boundary][:40])  # killed while writing the boundary

    loaded = load_transcript(path)

    assert [m["role"] for m in loaded.messages] == ["user", "assistant"]
    assert "remember the word PELICAN" in json.dumps(loaded.messages[0])
    assert loaded.requests == ["remember the word PELICAN"]


def test_turn_numbers_before_a_compaction_still_count_on_resume(
    model: ScriptedModel, project: Path, home: Path, in_process_env: None
) -> None:
    model.script(reply(text("One.")), reply(text("Two.")), reply(text("SUMMARY")))
    with session(project, model, Recorder()) as s:
        s.send("first")
        s.send("second")
        s.compact()
    [path] = transcript_files(home, project)

    loaded = load_transcript(path)

    assert loaded.last_turn == 2  # the next prompt is turn 3, whatever came before the boundary
    assert loaded.requests == ["first", "second"]


def command_and_sub_agent_session(project: Path, model: ScriptedModel, recorder: Recorder) -> Session:
    """One turn: Bash `sed -i` changes src/app.py, a sub-agent Writes notes.txt; README.md untouched."""
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")
    (project / "README.md").write_text("hello\n")
    model.script(
        reply(tool_use("Bash", {"command": "sed -i s/1/2/ src/app.py"}, id="toolu_sed")),
        reply(task("write notes", "general-purpose", id="toolu_task")),
        reply(tool_use("Write", {"file_path": str(project / "notes.txt"), "content": "sub\n"}, id="toolu_w")),
        reply(text("wrote the notes")),
        reply(text("done")),
    )
    s = session(project, model, recorder, "bypassPermissions")
    s.send("change the app and write notes")
    return s


def test_files_a_command_and_a_sub_agent_changed_are_listed_after_compact(
    model: ScriptedModel, project: Path, home: Path, in_process_env: None
) -> None:
    recorder = Recorder()
    with command_and_sub_agent_session(project, model, recorder) as s:
        model.script(reply(text("SUMMARY")), reply(text("ok")))
        compacted = s.compact()
        s.send("go on")

    assert (project / "src" / "app.py").read_text() == "x = 2\n" and (project / "notes.txt").read_text() == "sub\n"
    carried = first_message_texts(model.requests[-1])
    assert "Files changed in this conversation (by any tool: edits, commands, sub-agents and hooks" in carried
    assert "- src/app.py: changed, still differs from before" in carried
    assert "- notes.txt: created" in carried
    assert "README.md:" not in carried
    assert "2 changed files" in compacted.describe()
    [path] = transcript_files(home, project)
    [boundary] = [r for r in records(path) if r["type"] == "compact"]
    assert sorted(Path(p).name for p in boundary["kept"]["changed_seen"]) == ["app.py", "notes.txt"]


def test_a_file_a_command_changed_back_is_said_to_be_as_it_was(
    model: ScriptedModel, project: Path, in_process_env: None
) -> None:
    recorder = Recorder()
    with command_and_sub_agent_session(project, model, recorder) as s:
        (project / "src" / "app.py").write_text("x = 1\n")
        model.script(reply(text("SUMMARY")), reply(text("ok")))
        s.compact()
        s.send("go on")

    carried = first_message_texts(model.requests[-1])
    assert "- src/app.py: back as it was before the conversation changed it" in carried
    assert "- notes.txt: created" in carried


def test_auto_compaction_mid_turn_lists_what_a_command_changed_so_far(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    two_files_compacting_at_the_second_read(run_agent, model, project)
    (project / "app.py").write_text("x = 1\n")
    model.script(
        reply(tool_use("Bash", {"command": "sed -i s/1/2/ app.py"}, id="toolu_sed")),
        reply(tool_use("Read", {"file_path": "one.txt"}, id="toolu_1")),
        reply(text("Now the second file."), tool_use("Read", {"file_path": "two.txt"}, id="toolu_2")),
        reply(text("SUMMARY")),
        reply(text("Both hold digits.")),
    )

    done = run_agent("Bump app.py, then read one.txt and two.txt.", permission_mode="bypassPermissions")

    assert done.returncode == 0, done.stderr
    assert "Auto-compacted: " in done.stderr
    carried = first_message_texts(model.requests[-1])
    assert "- app.py: changed, still differs from before" in carried
    assert "one.txt:" not in carried  # read, not changed
