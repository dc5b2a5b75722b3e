"""Bad input never crashes a session: odd file names, malformed model output, damaged transcripts.

Each case ends with a request the model accepts (scripted or the fake server: both reject what the real API would),
and the session can be continued afterwards.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentcli.contracts import JSON
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.sessions.store import load_transcript
from tests import fake_anthropic as fake
from tests.conftest import RunAgent
from tests.fake_anthropic import FakeAnthropic, validation_error
from tests.session_helpers import records, transcript_files

BAD_NAME = b"caf\xe9.txt"
"""A file name that is not UTF-8 (Latin-1 é), as a Linux file system happily stores."""
SHOWN = "caf\\xe9.txt"
"""How agentcli shows it: the undecodable byte escaped."""


def make_bad_file(project: Path) -> None:
    with open(os.path.join(os.fsencode(project), BAD_NAME), "wb") as file:
        file.write(b"needle\n")


def tool_results(messages: list[JSON]) -> list[JSON]:
    """The tool_result blocks of the last message."""
    return [block for block in messages[-1]["content"] if block["type"] == "tool_result"]


SEARCHES = [
    ("Glob", {"pattern": "*.txt"}),
    ("Grep", {"pattern": "needle"}),
    ("Grep", {"pattern": "needle", "output_mode": "content"}),
    ("Bash", {"command": "ls"}),
]


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_a_file_name_that_is_not_utf8_is_shown_escaped_and_the_session_goes_on(
    run_agent: RunAgent, model: ScriptedModel, project: Path, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if engine == "python":
        monkeypatch.setenv("AGENTCLI_NO_RIPGREP", "1")
    make_bad_file(project)
    calls = [tool_use(name, tool_input, id=f"toolu_{n}") for n, (name, tool_input) in enumerate(SEARCHES)]
    model.script(reply(*calls), reply(text("Found it.")), reply(text("Again.")))

    done = run_agent("find the file", permission_mode="bypassPermissions")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Found it.\n"
    assert model.rejected == []
    results = tool_results(model.requests[1].messages)
    assert [SHOWN in str(result["content"]) for result in results] == [True] * len(SEARCHES), results

    again = run_agent("once more", continue_session=True)

    assert again.returncode == 0, again.stderr
    assert again.stdout == "Again.\n"
    assert model.rejected == [] and len(model.requests) == 3


def test_a_name_a_tool_shows_escaped_can_be_passed_back_to_every_tool(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    """Glob shows `caf\\xe9.txt`; Read, Edit, Write, Grep's and Glob's path take that spelling back.
    A name typed with a real backslash (`caf\\xe9.txt` in UTF-8) has a spelling of its own."""
    root = os.fsencode(project)
    make_bad_file(project)
    os.mkdir(os.path.join(root, b"d\xe9p"))
    with open(os.path.join(root, b"d\xe9p", b"inner.txt"), "wb") as file:
        file.write(b"inner needle\n")
    (project / "caf\\xe9.txt").write_text("decoy\n")  # a backslash, typed: valid UTF-8
    decoy = "caf\\x5cxe9.txt"
    model.script(
        reply(tool_use("Glob", {"pattern": "**/*.txt"}, id="toolu_glob")),
        reply(
            tool_use("Read", {"file_path": SHOWN}, id="toolu_read"),
            tool_use("Read", {"file_path": decoy}, id="toolu_decoy"),
            tool_use("Grep", {"pattern": "needle", "path": "d\\xe9p", "output_mode": "content"}, id="toolu_grep"),
            tool_use("Glob", {"pattern": "*.txt", "path": "d\\xe9p"}, id="toolu_glob_in"),
        ),
        reply(
            tool_use("Edit", {"file_path": SHOWN, "old_string": "needle", "new_string": "thread"}, id="toolu_edit"),
            tool_use("Write", {"file_path": "d\\xe9p/new.txt", "content": "written\n"}, id="toolu_write"),
        ),
        reply(tool_use("Bash", {"command": "cat $'caf\\xe9.txt'"}, id="toolu_bash")),
        reply(text("Done.")),
    )

    done = run_agent("work on the odd files", permission_mode="bypassPermissions")

    assert done.returncode == 0, done.stderr
    assert model.rejected == []
    results = {r["tool_use_id"]: r for request in model.requests for r in tool_results(request.messages)}
    assert not any(r.get("is_error") for r in results.values()), results
    listing = results["toolu_glob"]["content"]
    assert {SHOWN, decoy, "d\\xe9p/inner.txt"} <= set(listing.splitlines())
    assert "pass it to Read, Write, Edit, Glob and Grep as shown" in listing
    assert "needle" in results["toolu_read"]["content"] and "decoy" in results["toolu_decoy"]["content"]
    assert "inner needle" in results["toolu_grep"]["content"]
    assert results["toolu_glob_in"]["content"].startswith("d\\xe9p/inner.txt")
    with open(os.path.join(root, BAD_NAME), "rb") as file:
        assert file.read() == b"thread\n"
    with open(os.path.join(root, b"d\xe9p", b"new.txt"), "rb") as file:
        assert file.read() == b"written\n"
    assert (project / "caf\\xe9.txt").read_text() == "decoy\n"
    assert "thread" in results["toolu_bash"]["content"]


def test_a_prompt_with_a_byte_that_is_not_utf8_is_sent_escaped(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(text("Noted.")))

    done = run_agent("open " + os.fsdecode(BAD_NAME))

    assert done.returncode == 0, done.stderr
    assert model.rejected == []
    assert model.requests[0].messages[-1]["content"][-1]["text"].endswith(f"open {SHOWN}")


# ------------------------------------------------------------------ malformed model output


def deeply_nested(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


@pytest.mark.parametrize(
    ("raw_json", "problem"),
    [
        pytest.param("[1, 2]", "the input must be a JSON object, not a list", id="list"),
        pytest.param('"ls"', "the input must be a JSON object, not a string", id="string"),
        pytest.param(deeply_nested(100_000), "the input is nested more than 64 levels deep", id="nested-100000"),
        pytest.param(deeply_nested(500), "the input is nested more than 64 levels deep", id="nested-500"),
        pytest.param(
            '{"command": "echo \\udce9"}', "the input holds text that is not valid Unicode", id="lone-surrogate"
        ),
    ],
)
def test_a_tool_input_that_cannot_be_used_gets_an_error_result_and_the_session_goes_on(
    run_wire: RunAgent, fake_api: FakeAnthropic, raw_json: str, problem: str
) -> None:
    fake_api.script(
        fake.reply(fake.text("Running it."), fake.tool_use("Bash", {}, id="toolu_1", raw_json=raw_json), chunk=100_000),
        fake.reply(fake.text("I'll stop.")),
        fake.reply(fake.text("Still here.")),
    )

    done = run_wire("go", permission_mode="bypassPermissions")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "I'll stop.\n"
    assert fake_api.requests[1].status == 200
    [result] = tool_results(fake_api.requests[1].body["messages"])
    assert result["tool_use_id"] == "toolu_1" and result["is_error"] is True
    assert f"Invalid input for Bash: {problem}" in str(result["content"])
    [call] = [b for b in fake_api.requests[1].body["messages"][1]["content"] if b["type"] == "tool_use"]
    assert call["id"] == "toolu_1" and call["input"] == {}
    assert "✗ Bash" in done.stderr and "Traceback" not in done.stderr

    again = run_wire("still there?", continue_session=True)

    assert again.returncode == 0, again.stderr
    assert fake_api.requests[2].status == 200


def transcript_with_tool_calls(run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path) -> Path:
    """A real transcript: a prompt, two tool calls one after the other with their results, an answer.

    Lines: 1 session, 2 title, 3 prompt, 4 Read call, 5 its result, 6 Glob call, 7 its result, 8 answer.
    """
    (project / "notes.txt").write_text("alpha\n")
    model.script(
        reply(text("Reading."), tool_use("Read", {"file_path": "notes.txt"}, id="toolu_1")),
        reply(text("Listing."), tool_use("Glob", {"pattern": "*.txt"}, id="toolu_2")),
        reply(text("It says alpha; it is the only file.")),
    )
    assert run_agent("what is in notes.txt?").returncode == 0
    [path] = transcript_files(home, project)
    return path


CORRUPTIONS: dict[str, Callable[[dict[str, Any]], str]] = {
    "content missing": lambda record: json.dumps({**record, "message": {"role": record["message"]["role"]}}),
    "content 5": lambda record: json.dumps({**record, "message": {**record["message"], "content": 5}}),
    "garbage": lambda record: "%% not json at all",
    "message a list": lambda record: json.dumps({**record, "message": [1, 2]}),
    "blocks not objects": lambda record: json.dumps({**record, "message": {**record["message"], "content": [7]}}),
}


def damaged(path: Path, line: int, corruption: str) -> list[str]:
    lines = path.read_text().splitlines()
    lines[line - 1] = CORRUPTIONS[corruption](json.loads(lines[line - 1]))
    path.write_text("".join(f"{line}\n" for line in lines))
    return lines


def test_every_damaged_message_line_is_repaired_into_a_valid_conversation(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path, tmp_path: Path
) -> None:
    path = transcript_with_tool_calls(run_agent, model, home, project)
    original = path.read_text()
    message_lines = [n for n, record in enumerate(records(path), start=1) if record["type"] == "message"]
    assert message_lines == [3, 4, 5, 6, 7, 8]
    prompt = {"role": "user", "content": [{"type": "text", "text": "go on"}]}
    for line in message_lines:
        for corruption in CORRUPTIONS:
            copy = tmp_path / "copy.jsonl"
            copy.write_text(original)
            damaged(copy, line, corruption)

            loaded = load_transcript(copy)

            body = {"model": "m", "max_tokens": 10, "messages": [*loaded.messages, *loaded.repairs(), prompt]}
            assert validation_error(body) is None, (line, corruption, body["messages"])
            assert f"line {line}" in loaded.describe_repairs(), (line, corruption)


def test_an_undamaged_transcript_needs_no_repair(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path
) -> None:
    path = transcript_with_tool_calls(run_agent, model, home, project)

    loaded = load_transcript(path)

    assert loaded.repaired == [] and loaded.describe_repairs() == ""
    assert loaded.messages == [r["message"] for r in records(path) if r["type"] == "message"]


@pytest.mark.parametrize(
    ("line", "corruption"),
    [
        pytest.param(4, "content 5", id="tool-call-content-5"),
        pytest.param(7, "garbage", id="tool-results-garbage"),
    ],
)
def test_continue_repairs_a_damaged_transcript_says_which_line_and_leaves_the_file_alone(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path, line: int, corruption: str
) -> None:
    path = transcript_with_tool_calls(run_agent, model, home, project)
    before = damaged(path, line, corruption)
    model.script(reply(text("Going on.")), reply(text("And again.")))

    done = run_agent("go on", continue_session=True)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Going on.\n"
    assert model.rejected == []
    assert f"line {line}" in done.stderr and "repaired" in done.stderr
    assert "Traceback" not in done.stderr
    assert path.read_text().splitlines()[: len(before)] == before  # earlier lines never rewritten

    again = run_agent("and again", continue_session=True)

    assert again.returncode == 0, again.stderr
    assert model.rejected == []


def test_resume_with_a_very_long_id_is_a_usage_error(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(text("Answer-A")))
    assert run_agent("first").returncode == 0

    done = run_agent("hello", resume="a" * 5000)

    assert done.returncode == 2, done.stderr
    assert "No session 'aaaa" in done.stderr and "5,000 characters" in done.stderr
    assert "Recent sessions" in done.stderr and "Traceback" not in done.stderr
    assert len(model.requests) == 1


def test_a_transcript_holding_undecodable_bytes_loads_with_them_escaped(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path
) -> None:
    """Transcripts written before tool output was cleaned keep lone surrogates (as `\\udce9` escapes)."""
    path = transcript_with_tool_calls(run_agent, model, home, project)
    lines = path.read_text().splitlines()
    record = json.loads(lines[4])
    record["message"]["content"][0]["content"] = os.fsdecode(BAD_NAME)
    lines[4] = json.dumps(record)  # ASCII: the surrogate is written as \udce9
    path.write_text("".join(f"{line}\n" for line in lines))
    model.script(reply(text("Going on.")))

    done = run_agent("go on", continue_session=True)

    assert done.returncode == 0, done.stderr
    assert model.rejected == []
    assert model.requests[-1].messages[2]["content"][0]["content"] == SHOWN


def rewritten(path: Path, line: int, change: Callable[[str], str]) -> None:
    lines = path.read_text().splitlines()
    lines[line - 1] = change(lines[line - 1])
    path.write_text("".join(f"{line}\n" for line in lines))


@pytest.mark.parametrize(
    "mistake",
    [
        pytest.param(
            {6: lambda s: s.replace("toolu_2", "toolu_1"), 7: lambda s: s.replace("toolu_2", "toolu_1")},
            id="id-repeated",
        ),
        pytest.param(
            {6: lambda s: s.replace("toolu_2", "call 2!"), 7: lambda s: s.replace("toolu_2", "call 2!")},
            id="id-refused",
        ),
        pytest.param({6: lambda s: s.replace('"name":"Glob"', '"name":""')}, id="name-empty"),
        pytest.param({4: lambda s: s.replace('"notes.txt"}', '"notes.txt", "limit": NaN}')}, id="input-NaN"),
    ],
)
def test_continue_mends_what_a_server_got_wrong_before_the_provider_edge_did(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path, mistake: dict[int, Callable[[str], str]]
) -> None:
    """A transcript written before agentcli mended calls at the provider edge can hold them as the server sent them."""
    path = transcript_with_tool_calls(run_agent, model, home, project)
    for line, change in mistake.items():
        before = path.read_text()
        rewritten(path, line, change)
        assert path.read_text() != before
    model.script(reply(text("Going on.")))

    done = run_agent("go on", continue_session=True)

    assert done.returncode == 0, done.stderr
    assert model.rejected == []
    sent = model.requests[-1].messages
    calls = [b for m in sent if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    results = [b for m in sent if m["role"] == "user" for b in m["content"] if b["type"] == "tool_result"]
    assert [c["id"] for c in calls] == [r["tool_use_id"] for r in results] and len({c["id"] for c in calls}) == 2
    assert "alpha" in str(results[0]["content"]) and "notes.txt" in str(results[1]["content"])
