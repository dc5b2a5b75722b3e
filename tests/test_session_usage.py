"""What a session spent is recorded in its transcript and read back on resume (older transcripts
without it still load)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.contracts import Usage
from agentcli.sessions.store import load_transcript
from tests.conftest import RunMain
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.session_helpers import auto_compact_over_the_wire_at, big_file, records, transcript_files

HEADER = {
    "type": "session",
    "session_id": "s1",
    "version": 1,
    "cwd": "/p",
    "model": "m",
    "system": [{"type": "text", "text": "You help."}],
}


def message(role: str, words: str, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "message": {"role": role, "content": [{"type": "text", "text": words}]}, **extra}


def write(path: Path, *lines: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def summed(usages: list[dict[str, int]]) -> Usage:
    total = Usage()
    for usage in usages:
        total.add(Usage(**usage))
    return total


def test_usage_is_summed_over_the_whole_transcript_compactions_included(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s1.jsonl",
        HEADER,
        message("user", "q1"),
        message("assistant", "a1", usage={"input_tokens": 100, "output_tokens": 10}),
        {"type": "compact", "usage": {"input_tokens": 50, "output_tokens": 5, "cache_read_input_tokens": 7}},
        message("user", "summary"),
        message("user", "q2"),
        message("assistant", "a2", usage={"input_tokens": 1, "cache_creation_input_tokens": 3}),
    )

    loaded = load_transcript(path)

    assert loaded.usage == Usage(
        input_tokens=151, output_tokens=15, cache_creation_input_tokens=3, cache_read_input_tokens=7
    )
    assert [m["content"][0]["text"] for m in loaded.messages] == ["summary", "q2", "a2"]


def test_a_damaged_usage_counts_nothing_and_loses_nothing(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s1.jsonl",
        HEADER,
        message("user", "q1"),
        message("assistant", "a1", usage={"input_tokens": "100", "output_tokens": -5, "cache_read_input_tokens": True}),
        message("user", "q2", usage=[1, 2]),
        message("assistant", "a2", usage={"output_tokens": 4, "surprise": 9}),
    )

    loaded = load_transcript(path)

    assert loaded.usage == Usage(output_tokens=4)
    assert len(loaded.messages) == 4 and not loaded.repaired


def test_a_transcript_from_before_usage_was_recorded_loads_with_no_usage(tmp_path: Path) -> None:
    path = write(tmp_path / "s1.jsonl", HEADER, message("user", "q1"), message("assistant", "a1", context_tokens=9))

    loaded = load_transcript(path)

    assert loaded.usage == Usage() and len(loaded.messages) == 2 and loaded.context_tokens == 9


def test_each_response_is_recorded_once_and_a_continued_run_adds_only_its_own(
    run_main: RunMain, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    (project / "notes.txt").write_text("alpha\n")
    fake_api.script(
        reply(tool_use("Read", {"file_path": "notes.txt"})),
        reply(text("It says alpha.")),
        reply(text("Still alpha.")),
    )
    assert run_main("run", "what is in notes.txt?").returncode == 0
    assert run_main("run", "-c", "and now?").returncode == 0

    [path] = transcript_files(home, project)
    recorded = [r["usage"] for r in records(path) if "usage" in r]
    assert [r["message"]["role"] for r in records(path) if "usage" in r] == ["assistant"] * 3
    assert recorded == fake_api.usage_log
    assert load_transcript(path).usage == summed(fake_api.usage_log)


def test_a_compactions_summary_is_counted_in_the_compact_record(
    run_main: RunMain, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    big_file(project / "one.txt", 20_000)
    big_file(project / "two.txt", 20_000)
    auto_compact_over_the_wire_at(
        run_main, fake_api, project, 8_400
    )  # passed by the second read: a summary is asked for
    fake_api.script(
        reply(tool_use("Read", {"file_path": "one.txt"})),
        reply(tool_use("Read", {"file_path": "two.txt"})),
        reply(text("SUMMARY: read both.")),
        reply(text("Both files hold digits.")),
    )
    assert run_main("run", "what is in one.txt and two.txt?").returncode == 0

    path = transcript_files(home, project)[-1]
    this_run = fake_api.usage_log[1:]  # the first reply answered auto_compact_at's own session
    [boundary] = [r for r in records(path) if r["type"] == "compact"]
    assert boundary["usage"] == this_run[2]
    assert load_transcript(path).usage == summed(this_run)
