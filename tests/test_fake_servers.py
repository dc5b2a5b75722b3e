"""The three fake model servers share one base (`tests/fake_server.py`): the same record of a
request, the same scripted HTTP error, and each provider's error body for what it cannot serve."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from tests import fake_server
from tests.fake_anthropic import FakeAnthropic
from tests.fake_gemini import FakeGemini
from tests.fake_openai import FakeOpenAI
from tests.fake_server import FakeServer, http_error

HI = [{"role": "user", "content": "hi"}]
FAKES: dict[str, tuple[Callable[[], FakeServer[Any, Any]], str, dict[str, str], dict[str, Any]]] = {
    "anthropic": (
        lambda: FakeAnthropic(api_key="k"),
        "/v1/messages",
        {"x-api-key": "k", "anthropic-version": "2023-06-01"},
        {"model": "m", "max_tokens": 10, "messages": HI, "stream": True},
    ),
    "openai": (
        lambda: FakeOpenAI(api_key="k"),
        "/v1/chat/completions",
        {"authorization": "Bearer k"},
        {"model": "m", "messages": HI, "stream": True},
    ),
    "gemini": (
        lambda: FakeGemini(api_key="k"),
        "/v1beta/models/m:streamGenerateContent?alt=sse",
        {"x-goog-api-key": "k"},
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    ),
}


def post(fake: FakeServer[Any, Any], path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any, Any]:
    """The status, headers and JSON body of the fake's answer."""
    request = urllib.request.Request(
        fake.address + path,
        data=json.dumps(body).encode(),
        headers={**headers, "Content-Type": "application/json", "X-Test": "Yes"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers, json.loads(error.read())


@pytest.mark.parametrize("provider", FAKES)
def test_every_fake_serves_a_scripted_http_error_and_records_the_request_alike(provider: str) -> None:
    make, path, headers, body = FAKES[provider]
    with make() as fake:
        fake.script(http_error(429, {"error": {"message": "slow down"}}, headers={"retry-after": "0"}))
        status, answer_headers, answer = post(fake, path, headers, body)

    assert (status, answer_headers["retry-after"], answer) == (429, "0", {"error": {"message": "slow down"}})
    [request] = fake.requests
    assert isinstance(request, fake_server.RecordedRequest)
    assert (request.path, request.headers["x-test"], request.body, request.status) == (
        path.split("?")[0],
        "Yes",
        body,
        429,
    )
    assert fake.remaining == 0


@pytest.mark.parametrize("provider", FAKES)
def test_every_fake_answers_a_request_its_script_has_no_entry_for_with_a_500_in_its_own_shape(
    provider: str,
) -> None:
    make, path, headers, body = FAKES[provider]
    with make() as fake:
        status, _, answer = post(fake, path, headers, body)

    assert status == 500
    assert "script" in answer["error"]["message"]


def test_the_openai_fake_answers_a_request_without_stream_with_the_whole_completion() -> None:
    from tests.fake_openai import call, reply

    with FakeOpenAI(api_key="k") as fake:
        fake.script(reply("thinking", calls=[call("Bash", {"command": "ls"}, id="call_1")]))
        status, _, body = post(
            fake, "/v1/chat/completions", {"authorization": "Bearer k"}, {"model": "m", "messages": HI}
        )

    assert status == 200 and body["object"] == "chat.completion"
    [choice] = body["choices"]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] == "thinking"
    [tool_call] = choice["message"]["tool_calls"]
    assert tool_call["function"] == {"name": "Bash", "arguments": '{"command": "ls"}'}
    assert body["usage"]["total_tokens"] == 25
