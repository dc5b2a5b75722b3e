"""A fake Gemini API server (`streamGenerateContent?alt=sse`) for wire-level tests.

Real HTTP and real server-sent events on 127.0.0.1::

    with FakeGemini(api_key="k") as api:
        api.script(reply(call("Read", {"file_path": "a.txt"}, signature="sig-1")), reply(text("done")))
        ...  # run GeminiModel(base_url=api.url, api_key="k")
        assert api.requests[-1].body["contents"][-1]["parts"][0]["functionResponse"]["name"] == "Read"

Each request that passes validation consumes one scripted entry (a `Reply`, an `HttpError`,
or a callable computing either from the request). Requests are checked first, and a malformed
one gets the error the real API gives (see `validation_error`), without consuming an entry:

- the body: JSON (`NaN` and `Infinity` are not);
- the key: none is 403 PERMISSION_DENIED, a wrong one 400 INVALID_ARGUMENT (API_KEY_INVALID);
- `contents`: non-empty, roles `user`/`model` alternating from `user`, every part one kind of data;
- function calling: a `functionResponse` turn only right after a `functionCall` turn, as many
  responses as calls, in order and by name, each `response` an object; each name non-empty and a
  valid function name (`FUNCTION_NAME`);
- a `functionCall` the fake sent with a `thoughtSignature` must come back with that signature;
- tool schemas: only the OpenAPI subset's fields (`additionalProperties`, `$schema`, `default`…
  are "Unknown name"), known types, an OBJECT's `properties` non-empty when given.

Only the standard library is used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from tests import fake_server
from tests.fake_server import FakeHandler, FakeServer, HttpError, JSONObject, http_error

__all__ = [
    "FakeGemini",
    "HttpError",
    "RecordedRequest",
    "Reply",
    "call",
    "error_body",
    "http_error",
    "reply",
    "text",
    "validation_error",
]

STREAM_PATH: Final = re.compile(r"^/v1beta/models/([^/:]+):streamGenerateContent$")
SCHEMA_FIELDS: Final = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "items",
        "minimum",
        "maximum",
    }
)
TYPES: Final = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})
DATA_FIELDS: Final = ("text", "inlineData", "fileData", "functionCall", "functionResponse")
FUNCTION_NAME: Final = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}")
NO_NAME: Final = object()
"""A functionCall's name to leave out (as a broken server does)."""
RAW_ARGS: Final = "<raw args>"
"""Stands for a functionCall's `raw_args` until the chunk is written."""


def error_body(code: int, status: str, message: str) -> JSONObject:
    """An error body as Gemini sends it."""
    return {"error": {"code": code, "message": message, "status": status}}


# --------------------------------------------------------------------------- script


@dataclass(frozen=True)
class Reply:
    """A scripted streamed answer: its parts, then a chunk with `finish_reason` and the usage.

    `finish_reason=None`: the stream ends, cleanly, without one. `drop_after`: close the
    connection after that many chunks. `error_after`: send an error
    chunk (`UNAVAILABLE`) after that many. `usage`: `usageMetadata` fields to report."""

    parts: tuple[JSONObject, ...]
    finish_reason: str | None = "STOP"
    usage: Mapping[str, int] | None = None
    drop_after: int | None = None
    error_after: int | None = None
    chunk: int = 8
    grounding: tuple[str, tuple[tuple[str, str], ...]] | None = None
    """Google Search grounding: the query and its sources (title, uri), sent as the final chunk's
    `groundingMetadata`; the request must offer the `google_search` tool."""


def reply(
    *parts: JSONObject,
    finish_reason: str | None = "STOP",
    usage: Mapping[str, int] | None = None,
    drop_after: int | None = None,
    error_after: int | None = None,
    chunk: int = 8,
    grounding: tuple[str, Sequence[tuple[str, str]]] | None = None,
) -> Reply:
    searched = None if grounding is None else (grounding[0], tuple(grounding[1]))
    return Reply(tuple(parts), finish_reason, usage, drop_after, error_after, chunk, searched)


def text(value: str, *, signature: str | None = None) -> JSONObject:
    """A text part, streamed `chunk` characters at a time (the signature on the last piece)."""
    return {"text": value, **({"thoughtSignature": signature} if signature else {})}


def call(
    name: Any, args: Mapping[str, Any], *, signature: str | None = None, raw_args: str | None = None
) -> JSONObject:
    """A functionCall part, sent whole in one chunk, as Gemini does. `name` is sent as it is (an odd
    one a broken server sends, too; `NO_NAME`: none), and so are `args` (`nan` as `NaN`); `raw_args`
    is sent instead of them, as written (JSON the fake could not write: nesting 100,000 deep)."""
    function: JSONObject = {"args": RAW_ARGS if raw_args is not None else dict(args)}
    if name is not NO_NAME:
        function["name"] = name
    part: JSONObject = {"functionCall": function, **({RAW_ARGS: raw_args} if raw_args is not None else {})}
    return {**part, "thoughtSignature": signature} if signature else part


@dataclass
class RecordedRequest(fake_server.RecordedRequest):
    model: str = ""
    """The model named in the path."""
    query: dict[str, list[str]] = field(default_factory=dict)


ScriptEntry = Reply | HttpError | Callable[[RecordedRequest], Reply | HttpError]


# --------------------------------------------------------------------------- validation


class ApiError(fake_server.ApiError):
    def body(self) -> JSONObject:
        return error_body(self.status, self.kind, self.message)


def _invalid(message: str) -> ApiError:
    return ApiError(400, "INVALID_ARGUMENT", message)


def validation_error(body: Mapping[str, Any], signed_calls: Mapping[str, str] | None = None) -> str | None:
    """The message of the 400 Gemini gives for this body, or None when it is valid.

    `signed_calls`: the `thoughtSignature` each functionCall (by `_call_key`) was sent with."""
    try:
        _validate(body, signed_calls or {})
    except ApiError as error:
        return error.message
    return None


def _validate(body: Mapping[str, Any], signed_calls: Mapping[str, str]) -> None:
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise _invalid("* GenerateContentRequest.contents: contents is not specified")
    for i, content in enumerate(contents):
        _check_content(i, content, signed_calls)
    for i, content in enumerate(contents):
        previous = contents[i - 1]["role"] if i else None
        if content["role"] == previous or (i == 0 and content["role"] != "user"):
            raise _invalid("Please ensure that multiturn requests alternate between user and model.")
    _check_function_turns(contents)
    for i, tool in enumerate(body.get("tools") or []):
        for k, declaration in enumerate(tool.get("functionDeclarations") or []):
            where = f"tools[{i}].function_declarations[{k}]"
            if not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}", str(declaration.get("name", ""))):
                raise _invalid(f"* GenerateContentRequest.{where}.name: Invalid function name.")
            if "parameters" in declaration:
                _check_schema(declaration["parameters"], f"{where}.parameters")
    config = body.get("generationConfig") or {}
    tokens = config.get("maxOutputTokens", 1)
    if not isinstance(tokens, int) or tokens < 1:
        raise _invalid("* GenerateContentRequest.generation_config.max_output_tokens: must be positive")


def _check_content(i: int, content: object, signed_calls: Mapping[str, str]) -> None:
    if not isinstance(content, dict) or content.get("role") not in ("user", "model"):
        raise _invalid(f"* GenerateContentRequest.contents[{i}].role: Please use a valid role: user, model.")
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts:
        raise _invalid(f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.")
    for k, part in enumerate(parts):
        data = [name for name in DATA_FIELDS if isinstance(part, dict) and name in part]
        if len(data) != 1:
            raise _invalid(
                f"* GenerateContentRequest.contents[{i}].parts[{k}].data: "
                "required oneof field 'data' must have one initialized field"
            )
        if "functionCall" in part and content["role"] == "model":
            wanted = signed_calls.get(_call_key(part["functionCall"]))
            if wanted is not None and part.get("thoughtSignature") != wanted:
                raise _invalid(
                    f"Function call is missing a thought_signature in functionCall parts. This is required for "
                    f"tools to work correctly, and missing thought_signature may lead to degraded model performance. "
                    f"Additional data, function call `{part['functionCall'].get('name')}` , position {k + 1}."
                )
        for kind, field_name in (("functionCall", "function_call"), ("functionResponse", "function_response")):
            if kind in part:
                _check_function_name(part[kind].get("name"), f"contents[{i}].parts[{k}].{field_name}.name")
        if "functionResponse" in part and not isinstance(part["functionResponse"].get("response"), dict):
            raise _invalid(
                f"* GenerateContentRequest.contents[{i}].parts[{k}].function_response.response: must be an object"
            )


def _check_function_name(name: object, where: str) -> None:
    if not isinstance(name, str) or not name:
        raise _invalid(f"* GenerateContentRequest.{where}: Name cannot be empty.")
    if not FUNCTION_NAME.fullmatch(name):
        raise _invalid(
            f"* GenerateContentRequest.{where}: Invalid function name. Must start with a letter or an underscore. "
            "Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a "
            "maximum length of 128."
        )


def _not_json(constant: str) -> Any:
    """`NaN`, `Infinity` and `-Infinity`, which Python's decoder reads and JSON does not have."""
    raise ValueError(f"{constant} is not JSON")


def _check_function_turns(contents: list[JSONObject]) -> None:
    for i, content in enumerate(contents):
        responses = [p["functionResponse"] for p in content["parts"] if "functionResponse" in p]
        calls = [p["functionCall"] for p in contents[i - 1]["parts"] if "functionCall" in p] if i else []
        if responses and not calls:
            raise _invalid("Please ensure that function response turn comes immediately after a function call turn.")
        if content["role"] == "user" and calls and len(responses) != len(calls):
            raise _invalid(
                "Please ensure that the number of function response parts is equal to the number of "
                "function call parts of the function call turn."
            )
        for made, answered in zip(calls, responses, strict=False):
            if made.get("name") != answered.get("name"):
                raise _invalid(
                    f"Please ensure that function response parts match the function call parts in order: "
                    f"got {answered.get('name')!r} for a call of {made.get('name')!r}."
                )


def _check_schema(schema: object, where: str) -> None:
    if not isinstance(schema, dict):
        raise _invalid(f"Invalid JSON payload received. Invalid value at '{where}': expected an object.")
    for key in schema:
        if key not in SCHEMA_FIELDS:
            raise _invalid(f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': Cannot find field.")
    kind = schema.get("type")
    if kind is not None and str(kind).upper() not in TYPES:
        raise _invalid(f"Invalid JSON payload received. Invalid value at '{where}.type' ({kind!r})")
    properties = schema.get("properties")
    if properties is not None:
        if str(kind).upper() == "OBJECT" and not properties:
            raise _invalid(f"* GenerateContentRequest.{where}.properties: should be non-empty for OBJECT type")
        for name, sub in properties.items():
            _check_schema(sub, f"{where}.properties[{name}].value")
    if "items" in schema:
        _check_schema(schema["items"], f"{where}.items")
    for k, sub in enumerate(schema.get("anyOf") or []):
        _check_schema(sub, f"{where}.any_of[{k}]")


def _call_key(function_call: Mapping[str, Any]) -> str:
    return json.dumps([function_call.get("name"), function_call.get("args")], sort_keys=True)


# --------------------------------------------------------------------------- the server


class FakeGemini(FakeServer[ScriptEntry, RecordedRequest]):
    """The fake server; `requests` lists every request received (served or rejected)."""

    def __init__(self, api_key: str = "test-key") -> None:
        super().__init__(_Handler)
        self.api_key = api_key
        self.signed_calls: dict[str, str] = {}
        """The signature each functionCall the fake sent was sent with, by `_call_key`."""

    @property
    def url(self) -> str:
        return self.address

    def served(self) -> list[RecordedRequest]:
        """The requests answered with 200."""
        return [r for r in self.requests if r.status == 200]

    def _remember_signatures(self, parts: tuple[JSONObject, ...]) -> None:
        with self._changed:
            for part in parts:
                if "functionCall" in part and part.get("thoughtSignature"):
                    self.signed_calls[_call_key(part["functionCall"])] = part["thoughtSignature"]


class _Handler(FakeHandler[FakeGemini]):
    json_type = "application/json; charset=UTF-8"

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        url = urlsplit(self.path)
        match = STREAM_PATH.match(url.path)
        try:
            body = json.loads(raw, parse_constant=_not_json)
        except (ValueError, RecursionError):
            body = None
        request = RecordedRequest(
            url.path,
            self.lower_case_headers(),
            body if isinstance(body, dict) else {},
            model=match.group(1) if match else "",
            query=parse_qs(url.query),
        )
        self.fake._record(request)
        try:
            self._serve(request, match is not None, isinstance(body, dict))
        except ApiError as error:
            self.send_json(request, error.status, error.body())
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _serve(self, request: RecordedRequest, routed: bool, is_json: bool) -> None:
        if not routed:
            raise ApiError(404, "NOT_FOUND", f"models/{request.path} is not found for API version v1beta")
        key = request.headers.get("x-goog-api-key")
        if not key:
            raise ApiError(
                403,
                "PERMISSION_DENIED",
                "Method doesn't allow unregistered callers (callers without established identity). "
                "Please use API Key or other form of API consumer identity to call this API.",
            )
        if key != self.fake.api_key:
            raise _invalid("API key not valid. Please pass a valid API key.")
        if request.query.get("alt") != ["sse"]:
            raise _invalid("FakeGemini streams server-sent events only: add ?alt=sse")
        if not is_json:
            raise _invalid("Invalid JSON payload received.")
        _validate(request.body, self.fake.signed_calls)
        entry = self.fake._next_entry()
        if entry is None:
            raise ApiError(500, "INTERNAL", "FakeGemini: the script ran out")
        scripted = entry if isinstance(entry, Reply | HttpError) else entry(request)
        if isinstance(scripted, HttpError):
            self.send_json(request, scripted.status, scripted.body, scripted.headers)
            return
        self._stream(request, scripted)

    def _stream(self, request: RecordedRequest, scripted: Reply) -> None:
        if scripted.grounding is not None and not any("google_search" in t for t in request.body.get("tools") or []):
            raise ApiError(500, "INTERNAL", "FakeGemini: the script grounds, but the request offers no google_search")
        self.start_response(request, 200, "text/event-stream", {"transfer-encoding": "chunked"})
        chunks = list(_chunks(scripted, request))
        for position, chunk in enumerate(chunks):
            if position == scripted.drop_after:
                self.drop_connection()
                return
            if position == scripted.error_after:
                self._write(error_body(503, "UNAVAILABLE", "The model is overloaded. Please try again later."))
                break
            self._write(chunk)
        self.fake._remember_signatures(scripted.parts)
        self.end_chunks()

    def _write(self, chunk: JSONObject) -> None:
        raw: list[str] = []
        for candidate in chunk.get("candidates", []):  # each chunk is new; its parts are the script's
            parts = candidate["content"]["parts"]
            raw += [part[RAW_ARGS] for part in parts if RAW_ARGS in part]
            candidate["content"]["parts"] = [{k: v for k, v in part.items() if k != RAW_ARGS} for part in parts]
        text = json.dumps(chunk)
        for args in raw:
            text = text.replace(json.dumps(RAW_ARGS), args, 1)
        self.write_chunk(f"data: {text}\r\n\r\n".encode())


def _chunks(scripted: Reply, request: RecordedRequest) -> Iterator[JSONObject]:
    """The stream's chunks: text `chunk` characters at a time, a call whole, then the finish."""
    prompt = len(json.dumps(request.body)) // 4
    output = sum(len(json.dumps(p)) for p in scripted.parts) // 4 + 1
    usage = {"promptTokenCount": prompt, "candidatesTokenCount": output, "totalTokenCount": prompt + output}
    usage.update(scripted.usage or {})
    pieces: list[JSONObject] = []
    for part in scripted.parts:
        if part.get("text"):
            value = str(part["text"])
            for start in range(0, len(value), scripted.chunk):
                piece: JSONObject = {**part, "text": value[start : start + scripted.chunk]}
                if start + scripted.chunk < len(value):
                    piece.pop("thoughtSignature", None)
                pieces.append(piece)
        else:
            pieces.append(part)
    for piece in pieces:
        yield {
            "candidates": [{"content": {"parts": [piece], "role": "model"}, "index": 0}],
            "modelVersion": request.model,
        }
    if scripted.finish_reason is None:
        return
    final: JSONObject = {"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": scripted.finish_reason}
    if scripted.grounding is not None:
        query, sources = scripted.grounding
        final["groundingMetadata"] = {
            "webSearchQueries": [query],
            "groundingChunks": [{"web": {"uri": uri, "title": title}} for title, uri in sources],
        }
    yield {"candidates": [{**final, "index": 0}], "usageMetadata": usage, "modelVersion": request.model}
