"""A fake OpenAI-compatible Chat Completions server for wire-level tests.

Real HTTP and real server-sent events on 127.0.0.1 (point `OPENAI_BASE_URL` at `api.url`); a
request without `stream` gets the whole completion as one JSON object, as the API answers it::

    with FakeOpenAI(api_key="k") as api:
        api.script(
            reply(calls=[call("Read", {"file_path": "a.txt"}, id="call_1")]),
            http_error(429, RATE_LIMITED, headers={"retry-after": "0"}),
            reply("done"),
        )
        ...
        assert api.requests[-1].body["messages"][-1]["role"] == "tool"

Each `POST /v1/chat/completions` that passes validation consumes one scripted entry. Requests
are checked first, and a malformed one gets the 400 OpenAI gives, in its error shape
(`{"error": {"message", "type", "param", "code"}}`), without consuming an entry: a body that is
not JSON (`NaN` and `Infinity` included); an assistant message with `tool_calls` not followed by
a `tool` message for each id; a `tool` message that answers no call; a call whose id is empty or
not a string, or repeats an earlier call's; a call whose function name is empty or not
`^[a-zA-Z0-9_-]{1,64}$`; arguments that are not a string, or not JSON (what a server that reads
them back into its prompt refuses); a tool that is not a function. A wrong or missing key is
OpenAI's 401.

Only the standard library is used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tests import fake_server
from tests.fake_server import FakeHandler, FakeServer, HttpError, JSONObject, RecordedRequest, http_error

__all__ = ["FakeOpenAI", "HttpError", "RecordedRequest", "Reply", "call", "http_error", "reply", "validation_error"]

COMPLETIONS_PATH = "/v1/chat/completions"
FUNCTION_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
NO_NAME = object()
"""A call's name to leave out of its first delta (as a broken server does)."""
RATE_LIMITED: JSONObject = {
    "error": {
        "message": "Rate limit reached for requests",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}


@dataclass(frozen=True)
class Call:
    name: Any
    """The function's name, sent as it is (an odd one a broken server sends, too); `NO_NAME`: none."""
    arguments: Mapping[str, Any] | str
    """An object (sent as its JSON), or the raw arguments text (JSON a model got wrong)."""
    id: Any


@dataclass(frozen=True)
class Reply:
    text: str = ""
    calls: Sequence[Call] = ()
    finish_reason: str | None = None
    """None: `tool_calls` when there are calls, else `stop`."""
    reasoning: str = ""
    """Streamed in pieces before the text, as `reasoning_field` deltas."""
    reasoning_field: str = "reasoning_content"
    """`reasoning_content` (DeepSeek, vLLM, llama.cpp) or `reasoning` (OpenRouter, Ollama)."""
    prompt_tokens: int = 20
    cached_tokens: int = 0
    completion_tokens: int = 5
    index_zero: bool = False
    """Send every call at index 0 (as some servers do for parallel calls)."""
    cut_arguments: bool = False
    """Send only the first half of the last call's arguments (as `length` cuts a call off)."""
    drop_after: int | None = None
    """Close the connection after this many chunks, without a finish_reason or `[DONE]`."""
    citations: Sequence[tuple[str, str]] = ()
    """A search model's sources (title, url), sent as `url_citation` annotations after the text;
    the request must carry `web_search_options`."""


def reply(text: str = "", **fields: Any) -> Reply:
    return Reply(text, **fields)


def call(name: Any, arguments: Mapping[str, Any] | str, *, id: Any) -> Call:
    return Call(name, arguments, id)


class ApiError(fake_server.ApiError):
    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", code: str | None = None):
        super().__init__(status, kind, message)
        self.code = code

    def body(self) -> JSONObject:
        return {"error": {"message": self.message, "type": self.kind, "param": None, "code": self.code}}


def validation_error(body: Mapping[str, Any]) -> str | None:
    """What OpenAI would say about `body` (a 400), or None when it would accept it."""
    try:
        _validate(body)
    except ApiError as error:
        return str(error)
    return None


def _validate(body: Mapping[str, Any]) -> None:
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise ApiError(400, "you must provide a model parameter")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "[] is too short - 'messages'")
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if tool.get("type") != "function" or not isinstance(function, dict) or not function.get("name"):
            raise ApiError(400, "Missing required parameter: 'tools[0].function'.")
    pending: list[str] = []
    call_ids: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise ApiError(
                400, f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'tool'."
            )
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                raise ApiError(
                    400,
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                    f"with 'tool_calls'. (messages[{i}])",
                )
            pending.remove(call_id)
            if not isinstance(message.get("content"), str):
                raise ApiError(400, f"Invalid type for 'messages[{i}].content': expected a string.")
            continue
        if pending:
            raise ApiError(
                400,
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(pending)}",
            )
        if role == "assistant":
            for k, tool_call in enumerate(message.get("tool_calls") or []):
                _check_call(f"messages[{i}].tool_calls[{k}]", tool_call, call_ids)
                pending.append(tool_call["id"])
    if pending:
        raise ApiError(
            400,
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(pending)}",
        )


def _check_call(where: str, tool_call: Mapping[str, Any], call_ids: set[str]) -> None:
    call_id = tool_call.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise ApiError(400, f"Invalid '{where}.id': expected a non-empty string.")
    if call_id in call_ids:
        raise ApiError(400, f"Invalid '{where}.id': duplicate tool call id '{call_id}' in the conversation.")
    call_ids.add(call_id)
    function = tool_call.get("function") or {}
    name = function.get("name")
    if not isinstance(name, str):
        raise ApiError(400, f"Invalid type for '{where}.function.name': expected a string.")
    if not name:
        raise ApiError(
            400,
            f"Invalid '{where}.function.name': empty string. Expected a string with minimum length 1, "
            "but got an empty string instead.",
        )
    if not FUNCTION_NAME.fullmatch(name):
        raise ApiError(
            400,
            f"Invalid '{where}.function.name': string does not match pattern. Expected a string that "
            "matches the pattern '^[a-zA-Z0-9_-]+$'.",
        )
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        raise ApiError(400, f"Invalid type for '{where}.function.arguments'.")
    try:
        json.loads(arguments, parse_constant=_not_json)
    except (ValueError, RecursionError):
        raise ApiError(400, f"Invalid '{where}.function.arguments': not valid JSON.") from None


def _not_json(constant: str) -> Any:
    """`NaN`, `Infinity` and `-Infinity`, which Python's decoder reads and JSON does not have."""
    raise ValueError(f"{constant} is not JSON")


def _chunks(scripted: Reply, model: str) -> list[JSONObject]:
    def chunk(delta: JSONObject, finish: str | None = None) -> JSONObject:
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    for piece in _pieces(scripted.reasoning):
        chunks.append(chunk({scripted.reasoning_field: piece}))
    for piece in _pieces(scripted.text):
        chunks.append(chunk({"content": piece}))
    if scripted.citations:
        notes = [
            {"type": "url_citation", "url_citation": {"url": url, "title": title, "start_index": 0, "end_index": 1}}
            for title, url in scripted.citations
        ]
        chunks.append(chunk({"annotations": notes}))
    for n, tool_call in enumerate(scripted.calls):
        index = 0 if scripted.index_zero else n
        raw = tool_call.arguments if isinstance(tool_call.arguments, str) else json.dumps(tool_call.arguments)
        if scripted.cut_arguments and n == len(scripted.calls) - 1:
            raw = raw[: len(raw) // 2]
        head = {"index": index, "id": tool_call.id, "type": "function"}
        function = {"arguments": ""} if tool_call.name is NO_NAME else {"name": tool_call.name, "arguments": ""}
        chunks.append(chunk({"tool_calls": [{**head, "function": function}]}))
        for piece in _pieces(raw):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    finish = scripted.finish_reason or ("tool_calls" if scripted.calls else "stop")
    chunks.append(chunk({}, finish))
    usage = {
        "prompt_tokens": scripted.prompt_tokens,
        "completion_tokens": scripted.completion_tokens,
        "total_tokens": _total(scripted.prompt_tokens, scripted.completion_tokens),
        "prompt_tokens_details": {"cached_tokens": scripted.cached_tokens},
    }
    chunks.append(
        {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model, "choices": [], "usage": usage}
    )
    return chunks


def _completion(scripted: Reply, model: str) -> JSONObject:
    """The answer to a request without `stream`: one `chat.completion` object."""
    message: JSONObject = {"role": "assistant", "content": scripted.text or None}
    if scripted.calls:
        message["tool_calls"] = [
            {
                "id": tool_call.id,
                "type": "function",
                "function": {
                    "name": tool_call.name,
                    "arguments": tool_call.arguments
                    if isinstance(tool_call.arguments, str)
                    else json.dumps(tool_call.arguments),
                },
            }
            for tool_call in scripted.calls
        ]
    finish = scripted.finish_reason or ("tool_calls" if scripted.calls else "stop")
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": scripted.prompt_tokens,
            "completion_tokens": scripted.completion_tokens,
            "total_tokens": _total(scripted.prompt_tokens, scripted.completion_tokens),
            "prompt_tokens_details": {"cached_tokens": scripted.cached_tokens},
        },
    }


def _total(prompt: object, completion: object) -> object:
    """What a server would add up; None for counts a test made garbled on purpose (a string)."""
    if isinstance(prompt, int | float) and isinstance(completion, int | float):
        return prompt + completion
    return None


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


ScriptEntry = Reply | HttpError | Callable[[RecordedRequest], Reply | HttpError]
"""A scripted reply, an HTTP error, or a callable computing either from the request."""


class FakeOpenAI(FakeServer[ScriptEntry, RecordedRequest]):
    """The fake server; `requests` lists the requests that passed validation and consumed an entry."""

    def __init__(self, *, api_key: str | None = None) -> None:
        super().__init__(_Handler)
        self.api_key = api_key

    @property
    def url(self) -> str:
        """The base URL, as OPENAI_BASE_URL takes it."""
        return f"{self.address}/v1"

    def _take(self, request: RecordedRequest) -> Reply | HttpError:
        self._record(request)
        entry = self._next_entry()
        if entry is None:
            return HttpError(500, {"error": {"message": "the fake server's script is empty", "type": "server_error"}})
        return entry(request) if callable(entry) else entry


class _Handler(FakeHandler[FakeOpenAI]):
    def do_POST(self) -> None:
        fake = self.fake
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path != COMPLETIONS_PATH:
            self.send_json(
                None, 404, {"error": {"message": f"Unknown path {self.path}", "type": "invalid_request_error"}}
            )
            return
        key = (self.headers.get("authorization") or "").removeprefix("Bearer ")
        if fake.api_key is not None and key != fake.api_key:
            message = f"Incorrect API key provided: {key[:3]}***. You can find your API key at the platform."
            self.send_json(None, 401, ApiError(401, message, code="invalid_api_key").body())
            return
        try:
            body = json.loads(raw, parse_constant=_not_json)
            _validate(body)
        except (ValueError, RecursionError):
            self.send_json(None, 400, ApiError(400, "We could not parse the JSON body of your request.").body())
            return
        except ApiError as error:
            self.send_json(None, error.status, error.body())
            return
        request = RecordedRequest(self.path, self.lower_case_headers(), body)
        entry = fake._take(request)
        if isinstance(entry, HttpError):
            self.send_json(request, entry.status, entry.body, entry.headers)
            return
        if not body.get("stream"):  # the whole completion at once, as the API answers without `stream`
            self.send_json(request, 200, _completion(entry, body["model"]))
            return
        self._stream(request, entry, body["model"])

    def _stream(self, request: RecordedRequest, scripted: Reply, model: str) -> None:
        if scripted.citations and "web_search_options" not in request.body:
            raise ApiError(400, "FakeOpenAI: the script cites sources, but the request has no web_search_options")
        self.start_response(
            request, 200, "text/event-stream", {"x-request-id": "req_fake_openai", "connection": "close"}
        )
        self.close_connection = True
        for n, chunk in enumerate(_chunks(scripted, model)):
            if scripted.drop_after is not None and n >= scripted.drop_after:
                return
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
