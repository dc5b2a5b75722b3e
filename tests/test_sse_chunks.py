"""The HTTP layer's one reading of server-sent events as JSON objects (`EventStream.json_chunks`),
which the OpenAI and Gemini providers share: what it yields, where it stops, what it raises."""

from __future__ import annotations

import httpx2
import pytest

from agentcli.errors import ModelAPIError, TransientModelError
from agentcli.providers.http import EventStream
from agentcli.providers.timeouts import Timeouts

FAULTS = {"overloaded": "the API is busy"}


def stream(*data: str) -> EventStream:
    """A stream whose events carry `data` ("": a keep-alive comment instead)."""
    body = "".join(f"data: {item}\n\n" if item else ": keep-alive\n\n" for item in data).encode()
    response = httpx2.Response(
        200,
        content=body,
        headers={"content-type": "text/event-stream"},
        request=httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions"),
    )
    return EventStream(response, Timeouts(), "req_7")


def test_each_event_is_its_json_object_up_to_the_done_marker() -> None:
    events = stream('{"n": 1}', "", '[{"n": 2}]', "[DONE]", '{"n": 3}')

    assert list(events.json_chunks(FAULTS, done="[DONE]")) == [{"n": 1}, {"n": 2}]


def test_without_a_done_marker_every_event_is_read() -> None:
    assert list(stream('{"n": 1}', '{"n": "[DONE]"}').json_chunks(FAULTS)) == [{"n": 1}, {"n": "[DONE]"}]


@pytest.mark.parametrize(
    ("data", "kind", "message", "fault"),
    [
        ('{"error": {"type": "overloaded", "message": "busy"}}', TransientModelError, "busy", "the API is busy"),
        ('[{"error": {"status": "overloaded", "message": "busy"}}]', TransientModelError, "busy", "the API is busy"),
        ('{"error": {"message": "no type"}}', TransientModelError, "no type", "stream error"),
        ('{"error": {"type": "invalid_request", "message": "bad"}}', ModelAPIError, "(invalid_request): bad", None),
        ('{"n": ', TransientModelError, "a chunk that is not valid JSON", "malformed stream"),
        ("[1, 2]", TransientModelError, "a chunk that is not a JSON object (list)", "malformed stream"),
        ("42", TransientModelError, "a chunk that is not a JSON object (int)", "malformed stream"),
        ("[" * 100_000 + "]" * 100_000, TransientModelError, "a chunk that is not valid JSON", "malformed stream"),
    ],
    ids=["retryable", "in-an-array", "no-type", "fatal", "cut-short", "array", "number", "too-deep"],
)
def test_an_error_or_a_chunk_that_is_not_an_object_is_raised_with_the_request_id(
    data: str, kind: type[Exception], message: str, fault: str | None
) -> None:
    chunks = stream('{"n": 1}', data).json_chunks(FAULTS)
    assert next(chunks) == {"n": 1}

    with pytest.raises(kind) as raised:
        next(chunks)

    error = raised.value
    assert type(error) is kind and message in str(error)
    assert isinstance(error, TransientModelError | ModelAPIError) and error.request_id == "req_7"
    if isinstance(error, TransientModelError):
        assert error.fault == fault
