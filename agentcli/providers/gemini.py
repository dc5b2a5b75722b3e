"""Google's Gemini API behind the `Model` seam: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`,
over agentcli's own HTTP layer (`agentcli.providers.http`).

The conversation the loop hands over is Anthropic-shaped (`agentcli.contracts`); it is
translated here, at the edge, both ways.

- **Where and who.** `GEMINI_BASE_URL` (default `https://generativelanguage.googleapis.com`);
  the key, GEMINI_API_KEY else GOOGLE_API_KEY, in `x-goog-api-key`.
- **The request.** The system blocks become `systemInstruction`; the tools one
  `functionDeclarations` list; messages `contents`, `assistant` as role `model`, consecutive
  messages of one role merged into one turn (Gemini wants the roles to alternate). A `tool_use`
  block is a `functionCall` part; each `tool_result` a `functionResponse` part, named after
  the call it answers, with `{"output": text}` (or `{"error": text}`), in call order; images a
  tool returned follow those parts. `max_tokens` is `generationConfig.maxOutputTokens`. A
  request offering the web search server tool (`conversation.web_search_tool`: WebSearch's)
  gets the `google_search` tool: Gemini grounds its answer with Google Search, and the sources
  (`groundingMetadata.groundingChunks`) become a `web_search_tool_result` block; a grounded
  answer counts as one search (Gemini bills per grounded prompt).
- **Tool schemas** are cut down to the OpenAPI subset Gemini accepts (`gemini_schema`): kept
  are `type` (upper-cased; `["string", "null"]` becomes `nullable`), `description`, `title`,
  `format`, `nullable`, string `enum`s (`const` becomes a one-value enum), `properties`,
  `required` (only names that are properties), `items`, `anyOf` (`oneOf` taken as it),
  `minItems`, `maxItems`, `minLength`, `maxLength`, `pattern`, `minimum`, `maximum`,
  `minProperties`, `maxProperties`. Dropped: everything else — `$schema`, `$id`, `$ref` and
  `$defs`, `additionalProperties`, `default`, `examples`, `allOf`, `not`, `exclusiveMinimum`
  and `exclusiveMaximum`, `enum`s of numbers. A tool without parameters sends none.
- **The answer** is rebuilt as Anthropic-shaped blocks: consecutive text parts make one text
  block; a `functionCall` part a `tool_use` block with an id of our own (`gemini_call_…`, unique,
  kept in the conversation): one without a usable name is named `invalid_tool_call`, and one
  whose `args` Gemini could not take back (`NaN`, `Infinity`, not an object) gets `{}`, each
  answered with an error result (`agentcli.providers.call_repair`, `agentcli.tool_input`); thought
  parts (`thought: true`) a `thinking` block. A part's `thoughtSignature` is kept on its block
  (`thought_signature`) and sent back, verbatim, on the same part. A text part with a signature
  ends its block, so each signature returns with the text it came after; an empty signed part
  joins the text block before it.
- **Stop reasons.** `STOP` → `end_turn` (`tool_use` when the turn calls tools), `MAX_TOKENS` →
  `max_tokens` (a call ending the turn is then taken as cut off, never run: Gemini cannot say
  whether its arguments were complete), the safety family (`SAFETY`, `RECITATION`, `BLOCKLIST`,
  `PROHIBITED_CONTENT`, `SPII`, `IMAGE_SAFETY`, `LANGUAGE`, and a prompt blocked outright) →
  `refusal`, `MALFORMED_FUNCTION_CALL` a retryable fault; anything else ends the turn.
- **Usage.** `promptTokenCount` includes `cachedContentTokenCount`: those count as cache reads
  only. Output is `candidatesTokenCount` plus `thoughtsTokenCount`.
- **Errors.** Gemini's `{"error": {"code", "message", "status"}}` becomes our errors with a hint;
  429 (RESOURCE_EXHAUSTED) and 5xx are retried by the loop (with `retry-after` when sent), as
  are an error inside the stream of those kinds, a dropped or silent stream, and a stream that
  ends before a `finishReason`.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from agentcli import __version__
from agentcli.bounds import MAX_TOKENS, token_count
from agentcli.contracts import JSON, ModelRequest, ModelResponse, StreamListener, Usage
from agentcli.conversation import web_search_result_block, web_search_wanted
from agentcli.errors import ModelAPIError, TransientModelError
from agentcli.providers import MISSING_GEMINI_KEY
from agentcli.providers.body import encode
from agentcli.providers.call_repair import checked_name
from agentcli.providers.http import Endpoint, LazyHttpClient
from agentcli.providers.timeouts import Timeouts
from agentcli.tool_input import input_problem

__all__ = ["DEFAULT_BASE_URL", "MISSING_GEMINI_KEY", "EncodedTurns", "GeminiModel", "gemini_schema", "request_body"]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
HINTS = {
    400: "Gemini rejected the request (INVALID_ARGUMENT). If it says the API key is not valid, check "
    "GEMINI_API_KEY; otherwise re-run with --verbose for details.",
    401: "Check GEMINI_API_KEY (or GOOGLE_API_KEY): the server did not accept it.",
    403: "Check GEMINI_API_KEY (or GOOGLE_API_KEY): the key was refused or may not use this model.",
    404: "Check the model name (--model / AGENTCLI_MODEL) and GEMINI_BASE_URL.",
    429: "Rate limited or out of quota (RESOURCE_EXHAUSTED): wait a minute, or check your plan's limits.",
}
STREAM_FAULTS = {
    "RESOURCE_EXHAUSTED": "rate limited",
    "UNAVAILABLE": "overloaded",
    "INTERNAL": "server error",
    "DEADLINE_EXCEEDED": "timed out",
}
"""Error statuses inside a stream that are retried, and the words the retry line uses for them."""
REFUSALS = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"})
_SCHEMA_KEYS = frozenset(
    {
        "description",
        "title",
        "format",
        "nullable",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
    }
)
"""Keys of a JSON Schema kept as they are (the rest are converted or dropped: `gemini_schema`)."""


class GeminiModel:
    """Streams turns from the Gemini API (or a server speaking it at GEMINI_BASE_URL)."""

    def __init__(
        self, *, api_key: str | None = None, base_url: str | None = None, timeouts: Timeouts | None = None
    ) -> None:
        self._api_key = api_key
        self._base_url = base_url
        self._timeouts = timeouts or Timeouts()
        self._http = LazyHttpClient(self._endpoint, self._timeouts)
        self._turns = EncodedTurns()

    def _endpoint(self) -> Endpoint:
        key = self._api_key or next((value for name in KEY_VARIABLES if (value := os.environ.get(name))), None)
        if not key:
            raise ModelAPIError(MISSING_GEMINI_KEY)
        return Endpoint(
            base_url=(self._base_url or os.environ.get("GEMINI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/"),
            headers={"user-agent": f"agentcli/{__version__}", "accept": "text/event-stream", "x-goog-api-key": key},
            base_url_variable="GEMINI_BASE_URL",
            hints=HINTS,
        )

    def close(self) -> None:
        """Close the HTTP connections (new ones are made if the model is used again)."""
        self._http.close()

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        model = request.model.removeprefix("models/")
        path = f"/v1beta/models/{quote(model, safe='')}:streamGenerateContent?alt=sse"
        assembler = _ResponseAssembler(listener, request.tools)
        with self._http.get().stream(path, request_body(request, self._turns), listener.cancel) as stream:
            for chunk in stream.json_chunks(STREAM_FAULTS):
                assembler.feed(chunk)
        return assembler.finish()


# ----------------------------------------------------------------------------- the request


def request_body(request: ModelRequest, turns: EncodedTurns | None = None) -> bytes:
    """The request as Gemini's JSON; `turns` keeps the messages' encodings from one request to the next."""
    fields = [f'"contents":{(turns or EncodedTurns()).contents(request.messages)}']
    system = [{"text": block["text"]} for block in request.system if block.get("type") == "text" and block["text"]]
    if system:
        fields.append(f'"systemInstruction":{encode({"parts": system})}')
    search = web_search_wanted(request.tools)
    functions = [_declaration(tool) for tool in request.tools if tool is not search]
    tools: list[JSON] = [{"functionDeclarations": functions}] if functions else []
    if search is not None:  # Google Search grounding: Gemini searches on its own
        tools.append({"google_search": {}})
    if tools:
        fields.append(f'"tools":{encode(tools)}')
    fields.append(f'"generationConfig":{encode({"maxOutputTokens": request.max_tokens})}')
    return ("{" + ",".join(fields) + "}").encode()


def _declaration(tool: JSON) -> JSON:
    declaration: JSON = {"name": tool["name"], "description": tool.get("description", "")}
    parameters = gemini_schema(tool.get("input_schema") or {})
    if parameters.get("properties"):
        declaration["parameters"] = parameters
    return declaration


def gemini_schema(schema: Mapping[str, Any]) -> JSON:
    """`schema` (JSON Schema) cut down to the subset Gemini accepts; see the module docstring."""
    converted: JSON = {key: value for key, value in schema.items() if key in _SCHEMA_KEYS}
    kind = schema.get("type")
    if isinstance(kind, list):
        named = [k for k in kind if k != "null"]
        if len(named) < len(kind):
            converted["nullable"] = True
        kind = named[0] if named else None
    if isinstance(kind, str):
        converted["type"] = kind.upper()
    values = [schema["const"]] if "const" in schema else schema.get("enum")
    if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
        converted["enum"] = values
        converted.setdefault("type", "STRING")
    properties = schema.get("properties")
    if isinstance(properties, dict) and properties:
        converted["properties"] = {
            name: gemini_schema(sub) for name, sub in properties.items() if isinstance(sub, dict)
        }
        required = schema.get("required")
        if isinstance(required, list):
            kept = [name for name in required if name in converted["properties"]]
            if kept:
                converted["required"] = kept
    items = schema.get("items")
    if isinstance(items, dict):
        converted["items"] = gemini_schema(items)
    alternatives = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(alternatives, list):
        converted["anyOf"] = [gemini_schema(sub) for sub in alternatives if isinstance(sub, dict)]
    return converted


class EncodedTurns:
    """The conversation as Gemini `contents` (roles `user` and `model`, alternating), each message
    translated and encoded once for as long as requests keep sending it, as `JsonFragments` does
    for the Anthropic body: messages never change once they join a conversation."""

    def __init__(self) -> None:
        self._previous: dict[int, _Encoded] = {}
        self._current: dict[int, _Encoded] = {}
        self._lock = threading.Lock()  # two agents (a sub-agent, a compaction) may share one model

    def contents(self, messages: list[JSON]) -> str:
        """`messages` as the JSON array of `contents`, consecutive messages of one role in one turn."""
        with self._lock:
            call_names: dict[str, str] = {}
            turns: list[tuple[str, list[str]]] = []
            for message in messages:
                encoded = self._encoded(message, call_names)
                call_names.update(encoded.calls)
                if not encoded.parts:
                    continue
                if turns and turns[-1][0] == encoded.role:
                    turns[-1][1].extend(encoded.parts)
                else:
                    turns.append((encoded.role, list(encoded.parts)))
            self._previous, self._current = self._current, {}
        return "[" + ",".join(f'{{"role":"{role}","parts":[{",".join(parts)}]}}' for role, parts in turns) + "]"

    def _encoded(self, message: JSON, call_names: Mapping[str, str]) -> _Encoded:
        key = id(message)  # unique while the entry holds the message itself
        kept = self._current.get(key) or self._previous.get(key)
        if kept is None or kept.message is not message:
            role = "model" if message["role"] == "assistant" else "user"
            content = message["content"]
            calls = (
                {str(b["id"]): str(b["name"]) for b in content if b.get("type") == "tool_use"}
                if isinstance(content, list)
                else {}
            )
            parts = [encode(part) for part in _parts(content, {**call_names, **calls})]
            kept = _Encoded(message, role, parts, calls)
        self._current[key] = kept
        return kept


@dataclass(frozen=True)
class _Encoded:
    message: JSON
    role: str
    parts: list[str]
    """Each part's JSON."""
    calls: dict[str, str]
    """The tool_use ids of the message → the tools they call (for the results that answer them)."""


def _parts(content: str | list[JSON], call_names: Mapping[str, str]) -> list[JSON]:
    """The parts of one message; `call_names` maps each tool_use id so far to its tool's name."""
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[JSON] = []
    attachments: list[JSON] = []
    for block in content:
        kind = block.get("type")
        if kind == "text" and (block.get("text") or block.get("thought_signature")):
            parts.append(_signed({"text": block["text"]}, block))
        elif kind == "thinking":
            parts.append(_signed({"text": block.get("thinking", ""), "thought": True}, block))
        elif kind == "tool_use":
            parts.append(_signed({"functionCall": {"name": block["name"], "args": block.get("input") or {}}}, block))
        elif kind == "tool_result":
            parts.append(_function_response(block, call_names, attachments))
        elif kind == "image":
            parts.append(_image(block))
    return parts + attachments


def _signed(part: JSON, block: JSON) -> JSON:
    signature = block.get("thought_signature")
    return {**part, "thoughtSignature": signature} if signature else part


def _function_response(block: JSON, call_names: Mapping[str, str], attachments: list[JSON]) -> JSON:
    """A tool_result as a `functionResponse` part; the images it holds go to `attachments`."""
    content = block.get("content", "")
    if isinstance(content, list):
        texts = [str(item.get("text", "")) for item in content if item.get("type") == "text"]
        attachments.extend(_image(item) for item in content if item.get("type") == "image")
        content = "\n".join(texts)
    call_id = str(block.get("tool_use_id"))
    name = call_names.get(call_id)
    if name is None:  # no call to answer (a damaged history): the model still sees what happened
        return {"text": f"Result of tool call {call_id}:\n{content}"}
    answer = {"error": content} if block.get("is_error") else {"output": content}
    return {"functionResponse": {"name": name, "response": answer}}


def _image(block: JSON) -> JSON:
    source = block.get("source") or {}
    if source.get("type") == "base64":
        return {"inlineData": {"mimeType": source.get("media_type", ""), "data": source.get("data", "")}}
    return {"text": f"[image at {source.get('url', 'an unknown place')}]"}


# ----------------------------------------------------------------------------- the answer


class _ResponseAssembler:
    """Rebuilds the assistant message, Anthropic-shaped, from Gemini's chunks.

    A chunk that does not fit (a field of the wrong type) is a stream fault: `TransientModelError`,
    and the loop asks again, as for a dropped connection.
    """

    def __init__(self, listener: StreamListener, tools: Sequence[JSON]) -> None:
        self.listener = listener
        self.tools = tools
        self.blocks: list[JSON] = []
        self.open_text: JSON | None = None
        """The text (or thinking) block later text parts join, if any."""
        self._open_parts: list[str] = []
        """Its text so far, in pieces: joined once, when it ends (a long answer stays linear)."""
        self.invalid_inputs: dict[str, str] = {}
        self.usage = Usage()
        self.finish_reason: str | None = None
        self.grounded: dict[str, str] = {}
        """url → title of the Google Search results the answer is grounded on."""
        self.searched = False

    def feed(self, chunk: JSON) -> None:
        try:
            self._feed(chunk)
        except (KeyError, TypeError, AttributeError, ValueError) as error:
            raise TransientModelError(
                f"the stream sent a malformed chunk ({error!r})", fault="malformed stream"
            ) from error

    def _feed(self, chunk: JSON) -> None:
        if (metadata := chunk.get("usageMetadata")) is not None:
            self._take_usage(metadata)
        if reason := (chunk.get("promptFeedback") or {}).get("blockReason"):
            self.finish_reason = "SAFETY" if reason == "BLOCK_REASON_UNSPECIFIED" else str(reason)
        candidates = chunk.get("candidates") or []
        if not candidates:
            return
        candidate = candidates[0]
        for part in (candidate.get("content") or {}).get("parts") or []:
            self._take_part(part)
        if grounding := candidate.get("groundingMetadata"):
            self._take_grounding(grounding)
        if reason := candidate.get("finishReason"):
            self.finish_reason = str(reason)

    def _take_part(self, part: JSON) -> None:
        signature = part.get("thoughtSignature")
        if "functionCall" in part:
            self._end_text()
            call = part["functionCall"]
            name, problem = checked_name(call.get("name"), self.tools)
            args = call.get("args") or {}
            block: JSON = {"type": "tool_use", "id": f"gemini_call_{uuid.uuid4().hex}", "name": name, "input": args}
            if (unusable := input_problem(args)) is not None:
                block["input"] = {}
            if (problem := problem or unusable) is not None:
                self.invalid_inputs[block["id"]] = problem
            self._append(block, signature)
            self.listener.tool_call_started(name)
        elif "text" in part:
            self._take_text(str(part["text"]), bool(part.get("thought")), signature)

    def _take_text(self, text: str, thought: bool, signature: object) -> None:
        if not text and not signature:
            return
        kind, field = ("thinking", "thinking") if thought else ("text", "text")
        block = self.open_text
        if block is not None and block["type"] != kind:
            self._end_text()
            block = None
        if block is None:
            last = self.blocks[-1] if self.blocks else None
            if (
                not text
                and signature
                and last is not None
                and last["type"] == kind
                and not last.get("thought_signature")
            ):
                last["thought_signature"] = signature  # an empty signed part: the signature of what came before
                return
            block = {"type": kind, field: ""}
            self._append(block, None)
            self.open_text = block
        self._open_parts.append(text)
        if kind == "text" and text:
            self.listener.text(text)
        if signature:
            block["thought_signature"] = signature
            self._end_text()

    def _append(self, block: JSON, signature: object) -> None:
        if signature:
            block["thought_signature"] = signature
        self.blocks.append(block)

    def _end_text(self) -> None:
        block, self.open_text = self.open_text, None
        if block is None:
            return
        block["thinking" if block["type"] == "thinking" else "text"] = "".join(self._open_parts)
        self._open_parts = []
        if block["type"] == "text":
            self.listener.text("")  # the block is whole: a front end can show all of it now

    def _take_grounding(self, grounding: JSON) -> None:
        self.searched = self.searched or bool(grounding.get("webSearchQueries"))
        for chunk in grounding.get("groundingChunks") or []:
            web = chunk.get("web") if isinstance(chunk, dict) else None
            if isinstance(web, dict) and isinstance(web.get("uri"), str):
                self.grounded.setdefault(web["uri"], str(web.get("title") or web["uri"]))

    def _take_usage(self, metadata: JSON) -> None:
        prompt = token_count(metadata.get("promptTokenCount"))
        cached = token_count(metadata.get("cachedContentTokenCount"))
        output = token_count(metadata.get("candidatesTokenCount")) + token_count(metadata.get("thoughtsTokenCount"))
        self.usage = Usage(
            input_tokens=max(prompt - cached, 0),
            output_tokens=min(output, MAX_TOKENS),
            cache_read_input_tokens=cached,
        )

    def finish(self) -> ModelResponse:
        self._end_text()
        reason = self.finish_reason
        if reason is None:
            raise TransientModelError("the stream ended before the answer was complete", fault="stream cut short")
        if reason == "MALFORMED_FUNCTION_CALL":
            raise TransientModelError("Gemini wrote a malformed function call", fault="malformed function call")
        blocks = [b for b in self.blocks if b["type"] != "text" or b["text"] or b.get("thought_signature")]
        if self.grounded or self.searched:
            self.usage.web_search_requests = 1  # billed per grounded prompt
            hits = [(title, url) for url, title in self.grounded.items()]
            blocks.insert(0, web_search_result_block(f"gemini_search_{uuid.uuid4().hex}", hits))
        calls = any(block["type"] == "tool_use" for block in blocks)
        incomplete = None
        if reason == "MAX_TOKENS":
            stop = "max_tokens"
            if blocks and blocks[-1]["type"] == "tool_use":
                incomplete = len(blocks) - 1
        elif reason in REFUSALS:
            stop = "refusal"
        else:
            stop = "tool_use" if calls else "end_turn"
        return ModelResponse(blocks, stop, self.usage, incomplete, self.invalid_inputs)
