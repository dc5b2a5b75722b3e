"""The Gemini provider on the wire: `agentcli run`'s code in-process with `GeminiModel` against
the fake Gemini server, which rejects malformed conversations as the real API does."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.contracts import ModelRequest, Unwatched
from agentcli.providers.gemini import MISSING_GEMINI_KEY, GeminiModel
from agentcli.runner import RunOptions, run_once
from tests.conftest import Ran
from tests.fake_gemini import FakeGemini, RecordedRequest, call, error_body, http_error, reply, text, validation_error

KEY = "gemini-test-key"
MODEL = "gemini-2.5-flash"

RunGemini = Callable[..., Ran]


@pytest.fixture
def fake_gemini() -> Iterator[FakeGemini]:
    with FakeGemini(api_key=KEY) as api:
        yield api


@pytest.fixture
def run_gemini(
    fake_gemini: FakeGemini, in_process_env: None, project: Path, capsys: pytest.CaptureFixture[str]
) -> RunGemini:
    """`agentcli run PROMPT --model gemini-2.5-flash` in-process on a `GeminiModel` at the fake; retries don't wait."""

    def run(prompt: str, *, api_key: str | None = KEY, **options: Any) -> Ran:
        capsys.readouterr()
        model = GeminiModel(api_key=api_key, base_url=fake_gemini.url)
        code = run_once(RunOptions(prompt=prompt, model=MODEL, **options), model, project, retry_base_delay=0)
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


def parts_of(request: RecordedRequest, index: int) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = request.body["contents"][index]["parts"]
    return parts


def roles(request: RecordedRequest) -> list[str]:
    return [content["role"] for content in request.body["contents"]]


def test_a_text_answer_and_what_gemini_was_sent(run_gemini: RunGemini, fake_gemini: FakeGemini) -> None:
    fake_gemini.script(reply(text("Hello from Gemini, streamed in pieces.")))

    done = run_gemini("hi there")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from Gemini, streamed in pieces.\n"
    [request] = fake_gemini.requests
    assert request.status == 200
    assert request.model == MODEL and request.headers["x-goog-api-key"] == KEY
    assert roles(request) == ["user"]
    assert any("hi there" in part.get("text", "") for part in parts_of(request, 0))
    assert "agentcli" in request.body["systemInstruction"]["parts"][0]["text"]
    names = [d["name"] for d in request.body["tools"][0]["functionDeclarations"]]
    assert {"Read", "Write", "Edit", "Bash", "Grep", "Glob"} <= set(names)
    assert request.body["generationConfig"]["maxOutputTokens"] > 0


def test_the_key_comes_from_gemini_api_key_else_google_api_key(
    run_gemini: RunGemini, fake_gemini: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    fake_gemini.script(reply(text("from GOOGLE_API_KEY")), reply(text("from GEMINI_API_KEY")))

    assert run_gemini("hi", api_key=None).stdout == "from GOOGLE_API_KEY\n"
    monkeypatch.setenv("GOOGLE_API_KEY", "a-key-the-fake-refuses")
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    assert run_gemini("hi", api_key=None).stdout == "from GEMINI_API_KEY\n"
    assert [r.headers["x-goog-api-key"] for r in fake_gemini.requests] == [KEY, KEY]


def test_no_key_at_all_is_one_clear_line(
    run_gemini: RunGemini, fake_gemini: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)

    done = run_gemini("hi", api_key=None)

    assert done.returncode == 1
    assert MISSING_GEMINI_KEY in done.stderr and "Traceback" not in done.stderr
    assert fake_gemini.requests == []


def test_one_tool_round_trip(run_gemini: RunGemini, fake_gemini: FakeGemini, project: Path) -> None:
    (project / "a.txt").write_text("alpha contents\n")
    fake_gemini.script(reply(text("Let me look."), call("Read", {"file_path": "a.txt"})), reply(text("It says alpha.")))

    done = run_gemini("what is in a.txt?")

    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("It says alpha.\n")
    second = fake_gemini.requests[1]
    assert second.status == 200  # the fake found the functionResponse where it belongs
    assert roles(second) == ["user", "model", "user"]
    assert parts_of(second, 1) == [
        {"text": "Let me look."},
        {"functionCall": {"name": "Read", "args": {"file_path": "a.txt"}}},
    ]
    response = parts_of(second, 2)[0]["functionResponse"]
    assert response["name"] == "Read" and "alpha contents" in response["response"]["output"]


def test_parallel_calls_are_answered_one_response_each_in_call_order(
    run_gemini: RunGemini, fake_gemini: FakeGemini, project: Path
) -> None:
    (project / "a.txt").write_text("first file\n")
    (project / "b.txt").write_text("second file\n")
    fake_gemini.script(
        reply(
            call("Read", {"file_path": "b.txt"}),
            call("Glob", {"pattern": "*.txt"}),
            call("Read", {"file_path": "a.txt"}),
        ),
        reply(text("Both read.")),
    )

    done = run_gemini("read both")

    assert done.returncode == 0, done.stderr
    second = fake_gemini.requests[1]
    assert second.status == 200
    answers = [part["functionResponse"] for part in parts_of(second, 2) if "functionResponse" in part]
    assert [a["name"] for a in answers] == ["Read", "Glob", "Read"]
    assert "second file" in answers[0]["response"]["output"] and "first file" in answers[2]["response"]["output"]
    assert "a.txt" in answers[1]["response"]["output"]


def test_a_failed_call_goes_back_as_an_error_response(run_gemini: RunGemini, fake_gemini: FakeGemini) -> None:
    fake_gemini.script(reply(call("Read", {"file_path": "missing.txt"})), reply(text("No such file.")))

    done = run_gemini("read missing.txt")

    assert done.returncode == 0, done.stderr
    response = parts_of(fake_gemini.requests[1], 2)[0]["functionResponse"]["response"]
    assert set(response) == {"error"} and "missing.txt" in response["error"]


def test_a_call_cut_off_by_max_tokens_is_never_run(
    run_gemini: RunGemini, fake_gemini: FakeGemini, project: Path
) -> None:
    cut = reply(call("Write", {"file_path": "out.txt", "content": "half of it"}), finish_reason="MAX_TOKENS")
    fake_gemini.script(cut, cut, reply(text("Done in smaller steps.")))

    done = run_gemini("write out.txt", permission_mode="acceptEdits")

    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("Done in smaller steps.\n")
    assert not (project / "out.txt").exists()
    assert all(r.status == 200 for r in fake_gemini.requests)
    last = fake_gemini.requests[-1]
    assert "functionResponse" not in json.dumps(last.body) and "functionCall" not in json.dumps(last.body)
    assert roles(last) == ["user"]  # the note to go on in smaller steps joined the user's turn
    assert "cut off" in json.dumps(parts_of(last, 0))


@pytest.mark.parametrize(
    ("broken", "said"),
    [
        pytest.param(reply(text("partial answer that drops"), drop_after=2), "dropped", id="dropped"),
        pytest.param(reply(text("partial answer that breaks"), error_after=2), "overloaded", id="error chunk"),
        pytest.param(reply(text("no finish reason"), finish_reason=None), "cut short", id="no finish"),
        pytest.param(reply(finish_reason="MALFORMED_FUNCTION_CALL"), "malformed function call", id="malformed call"),
    ],
)
def test_a_broken_stream_is_retried(run_gemini: RunGemini, fake_gemini: FakeGemini, broken: Any, said: str) -> None:
    fake_gemini.script(broken, reply(text("whole answer")))

    done = run_gemini("hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "whole answer\n"
    assert said in done.stderr and "Traceback" not in done.stderr
    assert len(fake_gemini.requests) == 2


def test_an_invalid_key_says_what_to_check(run_gemini: RunGemini, fake_gemini: FakeGemini) -> None:
    done = run_gemini("hi", api_key="not-the-key")

    assert done.returncode == 1
    assert "API error 400: API key not valid. Please pass a valid API key." in done.stderr
    assert "GEMINI_API_KEY" in done.stderr and "Traceback" not in done.stderr
    assert [r.status for r in fake_gemini.requests] == [400]


@pytest.mark.parametrize(("status", "code"), [(401, "UNAUTHENTICATED"), (403, "PERMISSION_DENIED")], ids=["401", "403"])
def test_a_refused_key_says_what_to_check(
    run_gemini: RunGemini, fake_gemini: FakeGemini, status: int, code: str
) -> None:
    fake_gemini.script(http_error(status, error_body(status, code, "The caller does not have permission")))

    done = run_gemini("hi")

    assert done.returncode == 1
    assert f"API error {status}: The caller does not have permission" in done.stderr
    assert "Check GEMINI_API_KEY" in done.stderr and "Traceback" not in done.stderr
    assert len(fake_gemini.requests) == 1  # not retried


@pytest.mark.parametrize(
    ("status", "code", "said"),
    [(429, "RESOURCE_EXHAUSTED", "rate limited"), (503, "UNAVAILABLE", "server error 503")],
    ids=["429", "503"],
)
def test_rate_limits_and_server_errors_are_retried(
    run_gemini: RunGemini, fake_gemini: FakeGemini, status: int, code: str, said: str
) -> None:
    body = error_body(status, code, "Resource has been exhausted (e.g. check quota).")
    fake_gemini.script(http_error(status, body, headers={"retry-after": "0"}), reply(text("fine")))

    done = run_gemini("hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
    assert said in done.stderr
    assert [r.status for r in fake_gemini.requests] == [status, 200]


def test_thought_signatures_go_back_verbatim_on_their_parts(
    run_gemini: RunGemini, fake_gemini: FakeGemini, project: Path
) -> None:
    (project / "a.txt").write_text("alpha\n")
    fake_gemini.script(
        reply(
            text("Thinking it over, then a look.", signature="c2lnLXRleHQ="),
            call("Read", {"file_path": "a.txt"}, signature="c2lnLWNhbGw=/+"),
            call("Glob", {"pattern": "*.txt"}),
        ),
        reply(text("Seen.", signature="c2lnLWVuZA==")),
        reply(text("Again.")),
    )

    assert run_gemini("look").returncode == 0
    done = run_gemini("and again", continue_session=True)

    assert done.returncode == 0, done.stderr
    assert all(r.status == 200 for r in fake_gemini.requests)  # the fake demands the call's signature back
    model_turn = parts_of(fake_gemini.requests[-1], 1)
    assert model_turn == [
        {"text": "Thinking it over, then a look.", "thoughtSignature": "c2lnLXRleHQ="},
        {"functionCall": {"name": "Read", "args": {"file_path": "a.txt"}}, "thoughtSignature": "c2lnLWNhbGw=/+"},
        {"functionCall": {"name": "Glob", "args": {"pattern": "*.txt"}}},
    ]
    assert parts_of(fake_gemini.requests[-1], 3) == [{"text": "Seen.", "thoughtSignature": "c2lnLWVuZA=="}]


def test_usage_counts_cached_tokens_once_and_thoughts_as_output(run_gemini: RunGemini, fake_gemini: FakeGemini) -> None:
    usage = {
        "promptTokenCount": 1000,
        "cachedContentTokenCount": 600,
        "candidatesTokenCount": 50,
        "thoughtsTokenCount": 30,
    }
    fake_gemini.script(reply(text("ok"), usage=usage))

    done = run_gemini("hi", output_format="json")

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["usage"] == {
        "input_tokens": 400,
        "output_tokens": 80,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 600,
    }


def test_a_safety_stop_is_a_refusal(run_gemini: RunGemini, fake_gemini: FakeGemini) -> None:
    fake_gemini.script(reply(text("I will not"), finish_reason="SAFETY"))

    done = run_gemini("hi")

    assert done.returncode == 1
    assert "declined" in done.stderr and "Traceback" not in done.stderr


SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "path": {"type": ["string", "null"], "description": "Where.", "default": "."},
        "mode": {"const": "fast"},
        "level": {"type": "integer", "enum": [1, 2], "exclusiveMinimum": 0},
        "tags": {"type": "array", "items": {"type": "string", "examples": ["a"]}, "minItems": 1},
        "options": {"type": "object", "properties": {"deep": {"type": "boolean"}}, "additionalProperties": False},
        "choice": {"oneOf": [{"type": "string"}, {"type": "number"}]},
    },
    "required": ["path", "not-a-property"],
    "additionalProperties": False,
}


def test_tool_schemas_are_cut_down_to_what_gemini_accepts(fake_gemini: FakeGemini) -> None:
    tools = [
        {"name": "Search", "description": "Finds things.", "input_schema": SCHEMA},
        {"name": "Nothing", "description": "Takes no input.", "input_schema": {"type": "object", "properties": {}}},
    ]
    raw = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "Search", "parameters": SCHEMA}]}],
    }
    assert 'Unknown name "$schema"' in (validation_error(raw) or "")  # the fake refuses the schema as it is
    fake_gemini.script(reply(text("ok")))
    model = GeminiModel(api_key=KEY, base_url=fake_gemini.url)
    request = ModelRequest(MODEL, [], tools, [{"role": "user", "content": "hi"}], 100)

    response = model.stream(request, Unwatched())
    model.close()

    assert response.content == [{"type": "text", "text": "ok"}] and response.stop_reason == "end_turn"
    [sent] = fake_gemini.requests
    assert sent.status == 200
    search, nothing = sent.body["tools"][0]["functionDeclarations"]
    assert search["parameters"] == {
        "type": "OBJECT",
        "properties": {
            "path": {"type": "STRING", "nullable": True, "description": "Where."},
            "mode": {"type": "STRING", "enum": ["fast"]},
            "level": {"type": "INTEGER"},
            "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "minItems": 1},
            "options": {"type": "OBJECT", "properties": {"deep": {"type": "BOOLEAN"}}},
            "choice": {"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]},
        },
        "required": ["path"],
    }
    assert nothing == {"name": "Nothing", "description": "Takes no input."}
    assert "systemInstruction" not in sent.body  # no system blocks, none sent


def _body(*contents: tuple[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"contents": [{"role": role, "parts": parts} for role, parts in contents]}


ANSWER = {"functionResponse": {"name": "Read", "response": {"output": "x"}}}
CALL = {"functionCall": {"name": "Read", "args": {}}}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (_body(("user", [{"text": "a"}]), ("user", [{"text": "b"}])), "alternate between user and model"),
        (_body(("model", [{"text": "a"}])), "alternate between user and model"),
        (_body(("user", [ANSWER])), "function response turn comes immediately after a function call turn"),
        (
            _body(("user", [{"text": "a"}]), ("model", [CALL, CALL]), ("user", [ANSWER])),
            "number of function response parts",
        ),
        (
            _body(
                ("user", [{"text": "a"}]),
                ("model", [CALL]),
                ("user", [{"functionResponse": {"name": "Glob", "response": {}}}]),
            ),
            "in order",
        ),
        (_body(("user", [])), "must not be empty"),
    ],
    ids=["two user turns", "model first", "answer without call", "too few answers", "wrong name", "no parts"],
)
def test_the_fake_rejects_what_gemini_rejects(body: dict[str, Any], message: str) -> None:
    assert message in (validation_error(body) or "")


def test_the_fake_refuses_a_request_without_a_key(fake_gemini: FakeGemini) -> None:
    import httpx2

    answer = httpx2.post(
        f"{fake_gemini.url}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse", json=_body(("user", [{"text": "a"}]))
    )

    assert answer.status_code == 403 and answer.json()["error"]["status"] == "PERMISSION_DENIED"
