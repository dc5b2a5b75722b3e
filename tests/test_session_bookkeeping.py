"""What a session keeps up to date as it goes, without going back over the whole conversation:
which files the model has seen (for the transcript and the Edit/Write guard), and how large the
conversation is (for auto-compaction)."""

from __future__ import annotations

import functools
import threading
from pathlib import Path

from agentcli.contracts import JSON, FileRecord, FileRecords, ModelRequest
from agentcli.providers.scripted import Reply, ScriptedModel, reply, text, tool_use
from agentcli.session import Session, SessionOptions
from agentcli.sessions.compact import ConversationSize, json_chars
from agentcli.sessions.compactor import fixed_chars
from agentcli.sessions.store import find_session
from tests.conftest import RunAgent
from tests.session_helpers import records, transcript_files

# ------------------------------------------------------------------ files seen


def test_each_turns_results_record_just_the_files_that_turn_read_or_wrote(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path
) -> None:
    for name in "abc":
        (project / f"{name}.txt").write_text(f"{name}\n")
    model.script(
        reply(*(tool_use("Read", {"file_path": f"{name}.txt"}) for name in "abc")),  # run concurrently
        reply(tool_use("Read", {"file_path": "a.txt"}), tool_use("Write", {"file_path": "d.txt", "content": "d\n"})),
        reply(text("Read three, wrote one.")),
    )
    assert run_agent("read a, b and c, then write d", permission_mode="acceptEdits").returncode == 0
    model.script(
        reply(
            tool_use("Edit", {"file_path": "b.txt", "old_string": "b", "new_string": "B"}),
            tool_use("Edit", {"file_path": "d.txt", "old_string": "d", "new_string": "D"}),
        ),
        reply(text("Done.")),
    )

    done = run_agent("capitalise b and d", continue_session=True, permission_mode="acceptEdits")

    assert done.returncode == 0, done.stderr
    assert (project / "b.txt").read_text() == "B\n" and (project / "d.txt").read_text() == "D\n"
    [path] = transcript_files(home, project)
    user_lines = [r for r in records(path) if r["type"] == "message" and r["message"]["role"] == "user"]
    recorded = [sorted(Path(p).name for p in r.get("read_files", {})) for r in user_lines]
    # a.txt read again unchanged is not written again; what the edits left is
    assert recorded == [[], ["a.txt", "b.txt", "c.txt"], ["d.txt"], [], ["b.txt", "d.txt"]]
    last = user_lines[-1]["read_files"]
    assert last[str((project / "b.txt").resolve())]["size"] == 2


def test_file_records_hand_over_each_change_once() -> None:
    records = FileRecords()
    records.restore({Path("/p/old"): FileRecord(1, 1, "aa")})  # from a transcript: written down already
    records.remember(Path("/p/old"), FileRecord(1, 1, "aa"))  # seen again as it was
    records.remember(Path("/p/new"), FileRecord(2, 2, None))
    records.remember(Path("/p/touched"), FileRecord(3, 3, "cc"))
    records.remember(Path("/p/touched"), FileRecord(4, 3, "cc"))

    assert records.take_changes() == {
        Path("/p/new"): FileRecord(2, 2, None),
        Path("/p/touched"): FileRecord(4, 3, "cc"),
    }
    assert records.take_changes() == {}
    assert records.get(Path("/p/old")) == FileRecord(1, 1, "aa") and Path("/p/new") in records


# ------------------------------------------------------------------ the conversation's size


def test_a_conversations_size_is_its_json_size_as_it_grows_and_when_it_is_replaced() -> None:
    messages: list[JSON] = []
    size = ConversationSize()
    assert (size.of(messages).total_chars(), size.answered) == (json_chars([]), False)
    for role, words in [("user", "hi"), ("assistant", "héllo"), ("user", "a"), ("user", "b"), ("assistant", "c")]:
        messages.append({"role": role, "content": [{"type": "text", "text": words}]})
        size.of(messages)
        last = max(i for i, m in enumerate(messages) if m["role"] == "assistant") if size.answered else -1
        assert size.total_chars() == json_chars(messages)
        assert size.chars_after_answer() == json_chars(messages[last + 1 :])
    summary = {"role": "user", "content": [{"type": "text", "text": "Summary of all that came before."}]}
    replaced = [summary, *messages[1:], messages[2]]  # a compacted or resumed conversation is a new list
    assert size.of(replaced).total_chars() == json_chars(replaced)
    assert size.chars_after_answer() == json_chars(replaced[-1:])
    del replaced[1:]  # shorter than what was counted
    assert (size.of(replaced).total_chars(), size.answered) == (json_chars(replaced), False)


def estimate_from_scratch(session: Session) -> int:
    """The context size by going over every message: what the running count must equal."""
    agent = session.agent
    answers = [i for i, m in enumerate(agent.messages) if m["role"] == "assistant"]
    if not answers or not agent.context_tokens:
        return (fixed_chars(agent) + json_chars(agent.messages)) // 4
    return agent.context_tokens + json_chars(agent.messages[answers[-1] + 1 :]) // 4


class SizeChecks:
    """A scripted model that, before answering each request of the loop, notes the session's
    context size (what auto-compaction compares with its threshold) and the size from scratch."""

    def __init__(self) -> None:
        self.model = ScriptedModel()
        self.session: Session | None = None
        self.sizes: list[tuple[int, int]] = []

    def script(self, *replies: Reply) -> None:
        self.model.script(*(functools.partial(self._noted, scripted) for scripted in replies))

    def _noted(self, scripted: Reply, request: ModelRequest) -> Reply:
        if request.tools and self.session is not None:  # not a compaction's summary request
            self.sizes.append((self.session.context_size(), estimate_from_scratch(self.session)))
        return scripted


def test_the_context_size_before_each_request_counts_the_conversation_as_it_is(
    in_process_env: None, project: Path
) -> None:
    (project / "a.txt").write_text("alpha\n" * 300)
    checks = SizeChecks()
    session = checks.session = Session(SessionOptions(), project, lambda event: None, model=checks.model)
    checks.script(reply(tool_use("Read", {"file_path": "a.txt"})), reply(text("It says alpha.")))
    session.send("what is in a.txt?")
    checks.script(reply(tool_use("Read", {"file_path": "a.txt", "limit": 5})), reply(text("Five lines of alpha.")))
    session.send("and its first five lines?")
    checks.model.script(reply(text("SUMMARY: a.txt holds alpha.")))
    assert session.compact().summarised  # the conversation is a new, shorter list now
    checks.script(reply(text("Still alpha.")))
    session.send("and now?")
    earlier = session.id
    session.clear()
    checks.script(reply(text("A new conversation.")))
    session.send("hello")
    session.resume(find_session(project, earlier))  # the earlier conversation, loaded afresh
    checks.script(reply(text("Back to alpha.")))
    session.send("where were we?")
    session.close()

    assert checks.model.remaining == 0 and len(checks.sizes) == 7
    assert [running for running, _ in checks.sizes] == [from_scratch for _, from_scratch in checks.sizes]
    first, after_read, next_prompt, *_ = (running for running, _ in checks.sizes)
    assert first < after_read < next_prompt


# ------------------------------------------------------------------ threads


def test_a_new_conversation_ends_the_tool_threads_of_the_last_one(in_process_env: None, project: Path) -> None:
    for name in "ab":
        (project / f"{name}.txt").write_text(f"{name}\n")
    before = set(threading.enumerate())  # other tests' sessions may still hold threads of their own

    def tool_threads() -> list[str]:
        return [thread.name for thread in set(threading.enumerate()) - before if thread.name.startswith("tool")]

    model = ScriptedModel()
    session = Session(SessionOptions(), project, lambda event: None, model=model)
    both = [tool_use("Read", {"file_path": "a.txt"}), tool_use("Read", {"file_path": "b.txt"})]  # run concurrently
    model.script(reply(*both), reply(text("Read both.")))
    session.send("read a and b")
    earlier = session.id
    assert tool_threads()

    session.clear()
    assert tool_threads() == []
    model.script(reply(*both), reply(text("Read both again.")))
    session.send("read them again")
    assert tool_threads()
    session.resume(find_session(project, earlier))
    assert tool_threads() == []
    model.script(reply(*both), reply(text("And once more.")))
    session.send("read them once more")
    assert tool_threads()
    session.close()
    assert tool_threads() == []
