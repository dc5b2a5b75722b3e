"""Malformed model output never poisons the conversation, on every provider's wire.

A server may send a call without a usable name, ids that repeat (within a turn, across turns,
across a `--continue`), or arguments holding numbers JSON cannot carry (`NaN`, `Infinity`, `1e400`,
an integer too long to read), anywhere in them. Each test runs `agentcli run`'s code in-process
against a fake server that rejects what the real API rejects (an empty name, a repeated id,
`NaN`), and checks that the unusable call got an error result the model can act on, that every
later request was accepted, and that the session goes on after it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest

from agentcli.contracts import JSON, Model
from agentcli.providers.anthropic import AnthropicModel
from agentcli.providers.call_repair import ID, UNUSABLE_NAME, ConversationIds
from agentcli.providers.gemini import GeminiModel
from agentcli.providers.openai import OpenAIModel
from agentcli.runner import RunOptions, run_once
from tests import fake_anthropic, fake_gemini, fake_openai
from tests.conftest import TEST_KEY, Ran

MISSING: Any = object()
"""A name the server leaves out."""


@dataclass(frozen=True)
class Call:
    name: Any
    arguments: str
    """The arguments' JSON text as the server streams it."""
    id: Any = None
    """None: a fresh id of the server's own."""


@dataclass(frozen=True)
class Turn:
    text: str = ""
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True)
class Answer:
    """A call of the conversation as sent back, or the result that answers it."""

    key: str
    """The id that pairs them (Gemini pairs by position and name: the name)."""
    name: str
    content: Any
    """The call's input, or the result's text."""
    is_error: bool = False


class Wire(Protocol):
    """One provider's fake server, driven alike."""

    def script(self, *turns: Turn) -> None: ...

    def model(self) -> tuple[Model, str]: ...

    def served(self) -> list[JSON]:
        """The bodies of the requests the server accepted, in order."""
        ...

    def calls(self, body: JSON) -> list[Answer]: ...

    def results(self, body: JSON) -> list[Answer]: ...


@dataclass
class OpenAIWire:
    api: fake_openai.FakeOpenAI

    def script(self, *turns: Turn) -> None:
        self.api.script(
            *(
                fake_openai.reply(
                    turn.text,
                    calls=[
                        fake_openai.call(
                            fake_openai.NO_NAME if c.name is MISSING else c.name,
                            c.arguments,
                            id=f"call_{uuid.uuid4().hex[:8]}" if c.id is None else c.id,
                        )
                        for c in turn.calls
                    ],
                )
                for turn in turns
            )
        )

    def model(self) -> tuple[Model, str]:
        return OpenAIModel(base_url=self.api.url, api_key=TEST_KEY), "gpt-test"

    def served(self) -> list[JSON]:
        return [request.body for request in self.api.requests]

    def calls(self, body: JSON) -> list[Answer]:
        return [
            Answer(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for m in body["messages"]
            if m["role"] == "assistant"
            for c in m.get("tool_calls") or []
        ]

    def results(self, body: JSON) -> list[Answer]:
        return [
            Answer(m["tool_call_id"], "", m["content"], m["content"].startswith("Error: "))
            for m in body["messages"]
            if m["role"] == "tool"
        ]


@dataclass
class AnthropicWire:
    api: fake_anthropic.FakeAnthropic

    def script(self, *turns: Turn) -> None:
        self.api.script(
            *(
                fake_anthropic.reply(
                    *([fake_anthropic.text(turn.text)] if turn.text else []),
                    *(
                        fake_anthropic.tool_use(
                            None if c.name is MISSING else c.name, {}, id=c.id, raw_json=c.arguments
                        )
                        for c in turn.calls
                    ),
                )
                for turn in turns
            )
        )

    def model(self) -> tuple[Model, str]:
        return AnthropicModel(api_key=TEST_KEY, base_url=self.api.url), "claude-sonnet-4-5"

    def served(self) -> list[JSON]:
        return [request.body for request in self.api.requests if request.status == 200]

    def calls(self, body: JSON) -> list[Answer]:
        return [
            Answer(b["id"], b["name"], b["input"])
            for m in body["messages"]
            if m["role"] == "assistant"
            for b in m["content"]
            if b["type"] == "tool_use"
        ]

    def results(self, body: JSON) -> list[Answer]:
        return [
            Answer(b["tool_use_id"], "", str(b["content"]), bool(b.get("is_error")))
            for m in body["messages"]
            if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_result"
        ]


@dataclass
class GeminiWire:
    api: fake_gemini.FakeGemini
    names: list[str] = field(default_factory=list)

    def script(self, *turns: Turn) -> None:
        self.api.script(
            *(
                fake_gemini.reply(
                    *([fake_gemini.text(turn.text)] if turn.text else []),
                    *(
                        fake_gemini.call(fake_gemini.NO_NAME if c.name is MISSING else c.name, json.loads(c.arguments))
                        for c in turn.calls
                    ),
                )
                for turn in turns
            )
        )

    def model(self) -> tuple[Model, str]:
        return GeminiModel(api_key=TEST_KEY, base_url=self.api.url), "gemini-2.5-flash"

    def served(self) -> list[JSON]:
        return [request.body for request in self.api.requests if request.status == 200]

    def calls(self, body: JSON) -> list[Answer]:
        return [
            Answer(p["functionCall"]["name"], p["functionCall"]["name"], p["functionCall"]["args"])
            for content in body["contents"]
            if content["role"] == "model"
            for p in content["parts"]
            if "functionCall" in p
        ]

    def results(self, body: JSON) -> list[Answer]:
        found = []
        for content in body["contents"]:
            for part in content["parts"] if content["role"] == "user" else []:
                if "functionResponse" in part:
                    response = part["functionResponse"]["response"]
                    said = response.get("output", response.get("error"))
                    found.append(Answer(part["functionResponse"]["name"], "", said, "error" in response))
        return found


@pytest.fixture(params=["openai", "anthropic", "gemini"])
def wire(request: pytest.FixtureRequest) -> Iterator[Wire]:
    if request.param == "openai":
        with fake_openai.FakeOpenAI(api_key=TEST_KEY) as openai_api:
            yield OpenAIWire(openai_api)
    elif request.param == "anthropic":
        with fake_anthropic.FakeAnthropic(api_key=TEST_KEY) as anthropic_api:
            yield AnthropicWire(anthropic_api)
    else:
        with fake_gemini.FakeGemini(api_key=TEST_KEY) as gemini_api:
            yield GeminiWire(gemini_api)


RunOn = Callable[..., Ran]


@pytest.fixture
def run_on(wire: Wire, in_process_env: None, project: Path, capsys: pytest.CaptureFixture[str]) -> RunOn:
    """`agentcli run PROMPT` in-process with the wire's provider (a new model each run, as a new process has)."""

    def run(prompt: str, **options: Any) -> Ran:
        model, name = wire.model()
        capsys.readouterr()
        try:
            code = run_once(RunOptions(prompt=prompt, model=name, **options), model, project, retry_base_delay=0)
        finally:
            model.close()
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


def between_good_calls(project: Path, bad: list[Call]) -> tuple[Call, ...]:
    """`bad` with a call that works after each (so the run's no-progress watch, which stops a run
    after a few failed or identical calls in a row, lets the turn through)."""
    calls: list[Call] = []
    for n, call in enumerate(bad):
        (project / f"ok{n}.txt").write_text(f"fine {n}\n")
        calls += [call, Call("Read", json.dumps({"file_path": f"ok{n}.txt"}))]
    return tuple(calls)


def assert_good_between(results: list[Answer]) -> list[Answer]:
    """The results of `between_good_calls`' good calls are fine; those of the bad ones, returned."""
    assert [f"fine {n}" in r.content and not r.is_error for n, r in enumerate(results[1::2])] == [True] * (
        len(results) // 2
    )
    return results[0::2]


def assert_paired(wire: Wire, body: JSON) -> list[Answer]:
    """Every call of the conversation answered, in order, by a result carrying its id; ids all usable and distinct."""
    calls, results = wire.calls(body), wire.results(body)
    assert [c.key for c in calls] == [r.key for r in results], (calls, results)
    if not isinstance(wire, GeminiWire):
        assert len({c.key for c in calls}) == len(calls), calls
        assert all(ID.fullmatch(c.key) for c in calls), calls
    return results


# ------------------------------------------------------------------ names

BAD_NAMES: list[Any] = [MISSING, "", "   ", 7, ["Read"], "read file", "Read\n", "mcp.fs.read", "R" * 65]
"""Left out, empty, blank, not a string, or a name no API takes back (a space, a newline, dots, 65 characters)."""


def test_calls_without_a_usable_name_get_error_results_and_the_session_goes_on(
    wire: Wire, run_on: RunOn, project: Path
) -> None:
    calls = between_good_calls(project, [Call(name, '{"file_path": "ok0.txt"}') for name in BAD_NAMES])
    wire.script(Turn("Trying.", calls), Turn("I'll stop."), Turn("Still here."))

    done = run_on("go")

    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("I'll stop.\n") and "Traceback" not in done.stderr
    second = wire.served()[1]
    assert [call.name for call in wire.calls(second)] == [UNUSABLE_NAME, "Read"] * len(BAD_NAMES)
    for result in assert_good_between(assert_paired(wire, second)):
        assert result.is_error
        assert "Invalid tool call: the call named" in result.content
        assert "Call one of the tools by its exact name: " in result.content and "Read" in result.content

    again = run_on("still there?", continue_session=True)

    assert again.returncode == 0, again.stderr
    assert len(wire.served()) == 3


# ------------------------------------------------------------------ ids

SERVER_IDS: list[Any] = ["call_0", "", "bad id!", 5, "x" * 65, "call_0"]
"""Ids a server may send, each turn again: numbered from 0, empty, with characters an API refuses,
a number, too long; and one twice in the same turn."""


@pytest.mark.parametrize("wire", ["openai", "anthropic"], indirect=True)
def test_ids_that_repeat_or_cannot_be_sent_back_are_replaced_in_the_call_and_its_result(
    wire: Wire, run_on: RunOn, project: Path
) -> None:
    def reads(turn: int) -> tuple[Call, ...]:
        for n in range(len(SERVER_IDS)):
            (project / f"{turn}-{n}.txt").write_text(f"file {turn}-{n}\n")
        return tuple(Call("Read", json.dumps({"file_path": f"{turn}-{n}.txt"}), i) for n, i in enumerate(SERVER_IDS))

    wire.script(Turn("One.", reads(1)), Turn("Two.", reads(2)), Turn("Done."))

    done = run_on("read them")

    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("Done.\n")
    results = assert_paired(wire, wire.served()[-1])
    expected = [f"file {turn}-{n}" for turn in (1, 2) for n in range(len(SERVER_IDS))]
    assert [want in result.content and not result.is_error for want, result in zip(expected, results, strict=True)] == [
        True
    ] * 12
    assert wire.calls(wire.served()[1])[0].key == "call_0"  # an id that is usable and new is kept

    wire.script(Turn("Three.", reads(3)), Turn("Done again."))  # the same ids as in the transcript

    again = run_on("and the rest", continue_session=True)

    assert again.returncode == 0, again.stderr
    results = assert_paired(wire, wire.served()[-1])
    assert all(f"file 3-{n}" in results[12 + n].content for n in range(len(SERVER_IDS)))


# ------------------------------------------------------------------ arguments

NOT_JSON_NUMBERS = [
    ('{"file_path": "a.txt", "limit": NaN}', "NaN"),
    ('{"file_path": "a.txt", "limit": Infinity}', "Infinity"),
    ('{"file_path": "a.txt", "limit": -Infinity}', "-Infinity"),
    ('{"file_path": "a.txt", "limit": 1e400}', "Infinity"),
    ('{"file_path": "a.txt", "x": {"y": [1, [2, {"z": [NaN]}]]}}', "NaN"),
    ('{"file_path": "a.txt", "x": [{"y": -Infinity}]}', "-Infinity"),
]
"""Arguments holding a number JSON cannot carry, at the top or nested, and which one."""


def test_numbers_json_cannot_carry_get_error_results_and_the_session_goes_on(
    wire: Wire, run_on: RunOn, project: Path
) -> None:
    (project / "NaN.txt").write_text("apple\n")
    bad = [Call("Read", arguments) for arguments, _ in NOT_JSON_NUMBERS]
    if not isinstance(wire, GeminiWire):  # Gemini's chunks are JSON the fake writes: no number that long
        bad.append(Call("Read", '{"file_path": "a.txt", "limit": 1' + "0" * 5000 + "}"))
    calls = (*between_good_calls(project, bad), Call("Read", '{"file_path": "NaN.txt"}'))  # the word is fine
    wire.script(Turn("Reading.", calls), Turn("I'll stop."), Turn("Still here."))

    done = run_on("go")

    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("I'll stop.\n")
    second = wire.served()[1]
    *results, fine = assert_paired(wire, second)
    refused = assert_good_between(results)
    assert [call.content for call in wire.calls(second)][:-1:2] == [{}] * len(refused)
    for result, (_, number) in zip(refused, NOT_JSON_NUMBERS, strict=False):
        assert result.is_error
        assert f"Invalid input for Read: the input holds the number {number}, which JSON cannot carry" in result.content
    if not isinstance(wire, GeminiWire):
        assert "Invalid input for Read: the input holds an integer of more than 4300 digits" in refused[-1].content
    assert not fine.is_error and "apple" in fine.content

    again = run_on("still there?", continue_session=True)

    assert again.returncode == 0, again.stderr
    assert len(wire.served()) == 3


@pytest.mark.parametrize("wire", ["gemini"], indirect=True)
def test_a_gemini_chunk_nested_too_deep_to_read_is_asked_for_again(wire: Wire, run_on: RunOn) -> None:
    assert isinstance(wire, GeminiWire)
    deep = '{"a":' * 100_000 + "1" + "}" * 100_000
    wire.api.script(
        fake_gemini.reply(fake_gemini.call("Read", {}, raw_args=deep)), fake_gemini.reply(fake_gemini.text("Fine."))
    )

    done = run_on("go")

    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("Fine.\n")
    assert "malformed stream" in done.stderr and "Traceback" not in done.stderr
    assert len(wire.served()) == 2


def test_a_conversations_ids_are_read_once_per_message_and_anew_for_another_conversation() -> None:
    def turn(call_id: str) -> list[JSON]:
        call = {"type": "tool_use", "id": call_id, "name": "Read", "input": {}}
        return [{"role": "assistant", "content": [call]}, {"role": "user", "content": [{"type": "text", "text": "ok"}]}]

    ids = ConversationIds()
    conversation = [{"role": "user", "content": "go"}, *turn("a")]
    assert ids.taken(conversation) == {"a"}
    conversation += turn("b")
    assert ids.taken(conversation) == {"a", "b"}
    assert ids.taken([{"role": "user", "content": "go"}, *turn("c")]) == {"c"}  # another list
    conversation[:] = [{"role": "user", "content": "summary"}, *turn("d")]  # compacted in place: shorter
    assert ids.taken(conversation) == {"d"}
    conversation[-2:] = turn("e")  # as long, but not what was read
    assert ids.taken(conversation) == {"e"}
    assert ids.taken(conversation) == {"e"} and ids.taken([]) == set()
