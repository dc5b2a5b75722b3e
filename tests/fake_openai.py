"""A fake OpenAI-compatible Chat Completions server for wire-level tests.

Real HTTP and real server-sent events on 127.0.0.1 (point `OPENAI_BASE_URL` at `api.url`)::

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
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

JSONObject = dict[str, Any]
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


@dataclass(frozen=True)
class HttpError:
    status: int
    body: JSONObject
    headers: Mapping[str, str] = field(default_factory=dict)


def reply(text: str = "", **fields: Any) -> Reply:
    return Reply(text, **fields)


def call(name: Any, arguments: Mapping[str, Any] | str, *, id: Any) -> Call:
    return Call(name, arguments, id)


def http_error(status: int, body: JSONObject, headers: Mapping[str, str] | None = None) -> HttpError:
    return HttpError(status, body, dict(headers or {}))


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: JSONObject


class ApiError(Exception):
    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", code: str | None = None):
        super().__init__(message)
        self.status = status
        self.body = {"error": {"message": message, "type": kind, "param": None, "code": code}}


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


def _total(prompt: object, completion: object) -> object:
    """What a server would add up; None for counts a test made garbled on purpose (a string)."""
    if isinstance(prompt, int | float) and isinstance(completion, int | float):
        return prompt + completion
    return None


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class FakeOpenAI:
    def __init__(self, *, api_key: str | None = None) -> None:
        self.api_key = api_key
        self._script: list[Reply | HttpError] = []
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        """The base URL, as OPENAI_BASE_URL takes it."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, *entries: Reply | HttpError) -> None:
        with self._lock:
            self._script.extend(entries)

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests that passed validation and consumed an entry."""
        with self._lock:
            return list(self._requests)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    def _take(self, request: RecordedRequest) -> Reply | HttpError:
        with self._lock:
            self._requests.append(request)
            if not self._script:
                return HttpError(
                    500, {"error": {"message": "the fake server's script is empty", "type": "server_error"}}
                )
            return self._script.pop(0)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fake: FakeOpenAI = self.server.fake  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path != COMPLETIONS_PATH:
            self._json(404, {"error": {"message": f"Unknown path {self.path}", "type": "invalid_request_error"}})
            return
        key = (self.headers.get("authorization") or "").removeprefix("Bearer ")
        if fake.api_key is not None and key != fake.api_key:
            message = f"Incorrect API key provided: {key[:3]}***. You can find your API key at the platform."
            self._json(401, ApiError(401, message, code="invalid_api_key").body)
            return
        try:
            body = json.loads(raw, parse_constant=_not_json)
            _validate(body)
        except (ValueError, RecursionError):
            self._json(400, ApiError(400, "We could not parse the JSON body of your request.").body)
            return
        except ApiError as error:
            self._json(error.status, error.body)
            return
        entry = fake._take(RecordedRequest(self.path, dict(self.headers.items()), body))
        if isinstance(entry, HttpError):
            self._json(entry.status, entry.body, entry.headers)
            return
        self._stream(entry, body["model"])

    def _json(self, status: int, body: JSONObject, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, scripted: Reply, model: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("x-request-id", "req_fake_openai")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        for n, chunk in enumerate(_chunks(scripted, model)):
            if scripted.drop_after is not None and n >= scripted.drop_after:
                return
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
