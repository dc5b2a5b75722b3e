"""Sessions in the REPL, driven in a real pseudo-terminal: -c, /resume, /clear, /compact."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentcli.context.paths import project_state_dir
from agentcli.providers import scripted
from agentcli.providers.scripted import ScriptedModel
from tests.conftest import RunAgent, RunCli, StartRepl
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.waiting import wait_until


def transcripts(home: Path, project: Path) -> list[Path]:
    return sorted(project_state_dir(project, home / ".agentcli").glob("*.jsonl"))


def test_continue_flag_shows_the_last_exchange_and_goes_on(
    start_repl: StartRepl, run_agent: RunAgent, model: ScriptedModel, fake_api: FakeAnthropic
) -> None:
    model.script(scripted.reply(scripted.text("The build uses make.")))
    assert run_agent("how do I build?").returncode == 0  # an earlier session, made in-process
    fake_api.script(reply(text("Answer-2")))

    repl = start_repl("-c")
    screen = repl.wait_for("The build uses make.")
    assert "Resumed “how do I build?”" in screen and "> how do I build?" in screen
    repl.submit("and test?")

    repl.wait_for("Answer-2")
    messages = fake_api.requests[0].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert "and test?" in json.dumps(messages[-1])


def test_resume_lists_sessions_and_picks_one_by_number(
    start_repl: StartRepl, run_agent: RunAgent, model: ScriptedModel, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    model.script(scripted.reply(scripted.text("Answer-A")), scripted.reply(scripted.text("Answer-B")))
    assert run_agent("topic apples").returncode == 0
    assert run_agent("topic bananas").returncode == 0
    fake_api.script(reply(text("Answer-C")))
    apples = next(p for p in transcripts(home, project) if "apples" in p.read_text())
    os.utime(apples, (1_700_000_000, 1_700_000_000))  # the older one: listed second

    repl = start_repl()
    repl.submit("/resume")
    screen = repl.wait_for("Resume which session?")
    assert "1." in screen and "topic bananas" in screen and "2." in screen and "topic apples" in screen
    assert "1 messages" not in screen and "2 messages" in screen
    repl.submit("2")
    repl.wait_for("Resumed “topic apples”")
    repl.submit("more about them")

    repl.wait_for("Answer-C")
    messages = fake_api.requests[0].body["messages"]
    assert "topic apples" in json.dumps(messages[0]) and messages[1]["content"][0]["text"] == "Answer-A"
    assert "more about them" in json.dumps(messages[2])
    assert len(transcripts(home, project)) == 2  # appended to the resumed transcript
    assert "more about them" in apples.read_text()


def test_clear_starts_a_new_transcript(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(reply(text("Answer-A")), reply(text("Answer-B")))
    repl = start_repl()
    repl.submit("first conversation")
    repl.wait_for_prompt("Answer-A")

    repl.submit("/clear")
    repl.wait_for("new conversation")
    repl.submit("second conversation")
    repl.wait_for_prompt("Answer-B")

    files = transcripts(home, project)
    assert len(files) == 2
    contents = sorted(f.read_text() for f in files)
    assert "first conversation" in contents[0] and "second conversation" not in contents[0]
    assert "second conversation" in contents[1] and "first conversation" not in contents[1]


def test_compact_summarises_and_shrinks_the_next_request(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    (project / "CLAUDE.md").write_text("Use tabs.\n")
    (project / "data.txt").write_text("row of data\n" * 2000)
    # The bulk comes from a search, not a file read: a compaction carries the files read last again.
    fake_api.script(
        reply(tool_use("Grep", {"pattern": "row", "path": "data.txt", "output_mode": "content", "head_limit": 2000})),
        reply(text("It is 2000 rows of data.")),
        reply(text("Answer-2")),
        reply(text("SUMMARY-XYZ: the user asked about data.txt (2000 rows).")),
        reply(text("Answer-3")),
    )
    repl = start_repl()
    repl.submit("what is in data.txt?")
    repl.wait_for_prompt("It is 2000 rows")
    repl.submit("thanks")
    repl.wait_for_prompt("Answer-2")

    repl.submit("/compact keep the row count")
    repl.wait_for("Compacted: summarised the conversation")
    repl.submit("next question")
    repl.wait_for_prompt("Answer-3")  # the prompt is back once the run record is written

    before, summary, after = fake_api.requests[2], fake_api.requests[3], fake_api.requests[4]
    assert "tools" not in summary.body and summary.body["max_tokens"] <= 4_000
    assert "keep the row count" in json.dumps(summary.body["messages"])
    assert all(r.status == 200 for r in fake_api.requests)
    messages = after.body["messages"]
    assert [m["role"] for m in messages] == ["user", "user"]
    first = json.dumps(messages[0])
    assert "SUMMARY-XYZ" in first and "Use tabs." in first  # the instructions come back with the summary
    assert "next question" in json.dumps(messages[1]) and "Use tabs." not in json.dumps(messages[1])
    assert len(after.raw) * 2 < len(before.raw)
    print(f"request size before /compact: {len(before.raw):,} bytes; after: {len(after.raw):,} bytes")
    [path] = transcripts(home, project)

    def kinds() -> list[str]:
        return [json.loads(line)["type"] for line in path.read_text().splitlines()]

    # the answer is on screen while it streams; its turn's records are written when the turn ends
    wait_until(lambda: kinds().count("run") == 3, "the last turn's run record")
    assert kinds().count("compact") == 1 and kinds()[-4:] == ["message", "message", "message", "run"]


def test_a_session_still_open_in_the_repl_cannot_be_continued_elsewhere(
    start_repl: StartRepl, run_agent: RunAgent, model: ScriptedModel, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(reply(text("Answer-A")), reply(text("Answer-B")))
    model.script(scripted.reply(scripted.text("Answer-C")))
    repl = start_repl()
    repl.submit("first question")
    repl.wait_for_prompt("Answer-A")
    [path] = transcripts(home, project)
    before = path.read_bytes()

    elsewhere = run_agent("from another terminal", continue_session=True)

    assert elsewhere.returncode == 2
    assert "is in use by another agentcli process" in elsewhere.stderr and "--resume ID" in elsewhere.stderr
    assert "Traceback" not in elsewhere.stderr
    assert len(fake_api.requests) == 1 and model.requests == [] and path.read_bytes() == before
    repl.submit("second question")  # the REPL's session goes on untouched
    repl.wait_for_prompt("Answer-B")
    repl.submit("/exit")
    assert repl.wait_exit() == 0

    afterwards = run_agent("now it is free", continue_session=True)

    assert afterwards.returncode == 0, afterwards.stderr
    assert [m["role"] for m in model.requests[-1].messages] == ["user", "assistant"] * 2 + ["user"]


def test_resume_of_a_session_open_elsewhere_is_refused_and_the_current_one_goes_on(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(reply(text("Answer-A")), reply(text("Answer-B")))
    first = start_repl()
    first.submit("topic apples")
    first.wait_for_prompt("Answer-A")
    second = start_repl()

    second.submit("/resume 1")
    second.wait_for("is in use by another agentcli process")
    second.submit("topic bananas")

    second.wait_for_prompt("Answer-B")
    assert "topic apples" not in json.dumps(fake_api.requests[1].body["messages"])
    assert len(transcripts(home, project)) == 2  # the second REPL wrote its own transcript


def test_resume_with_a_number_no_session_has_says_so(
    start_repl: StartRepl, run_cli: RunCli, fake_api: FakeAnthropic
) -> None:
    fake_api.script(reply(text("Answer-A")))
    assert run_cli("run", "topic apples").returncode == 0
    repl = start_repl()

    repl.submit("/resume " + "9" * 5_000)
    repl.wait_for("No session number 999999999999… (5,000 digits): pick one from 1 to 1.")
    repl.submit("/resume ²")  # a digit to str.isdigit, not to int()
    repl.wait_for("No session '²' in")

    assert "Internal error" not in repl.text() and "Traceback" not in repl.text()
