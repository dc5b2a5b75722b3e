"""OpenAI-compatible Chat Completions behind the `Model` seam (OpenAI, OpenRouter, Ollama, vLLM,
llama.cpp, LM Studio, Groq…): `POST {base}/chat/completions`, `stream: true`, over agentcli's
own HTTP layer (`agentcli.providers.http`).

- **Where and who.** `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), or the base the
  resolver hands over (`ollama:`); `Authorization: Bearer OPENAI_API_KEY` when a key is set (a
  server of your own may need none; OpenAI's own does).
- **The request**, translated from the conversation (`agentcli.conversation`): the system
  prompt as one `system` message; an assistant message's text as `content` and its tool calls
  as `tool_calls` (arguments as a JSON string); each tool_result as its own `role: "tool"`
  message with `tool_call_id`, in call order, before the rest of that user message (reminders,
  the user's text, images as `image_url` parts) as a `user` message. Thinking blocks (streamed
  reasoning) are not sent back. Each message is translated and encoded once
  (`agentcli.providers.body`). Tools as `{"type": "function", "function": {...}}`;
  `stream_options.include_usage` for the usage. A request offering the web search server tool
  (`conversation.web_search_tool`: WebSearch's) gets `web_search_options` instead: OpenAI's
  search models (`gpt-5-search-api`) search on their own; their `url_citation` annotations
  become a `web_search_tool_result` block, and the request counts as one search.
- **The answer.** Text deltas are streamed to the listener; `reasoning_content` / `reasoning`
  deltas are streamed to it as reasoning (shown dimmed) and become a thinking block; tool-call
  deltas are assembled by `index`, or by `id` when a server sends parallel calls all at index 0
  (arguments sent as an object rather than its JSON text are taken as they are).
  Arguments that are not valid JSON, or hold what JSON cannot carry (`NaN`, `Infinity`), become
  an invalid input (`ModelResponse.invalid_inputs`): that call gets an error result, the run goes
  on. A call without a usable name is named `invalid_tool_call` and answered the same way; an id
  that is missing, unusable or already in the conversation (a server numbering its calls
  `call_0` every turn) is replaced by a fresh one (`agentcli.providers.call_repair`).
  `finish_reason` maps to our stop reasons (`FINISH_REASONS`); a call cut off by `length` is
  marked incomplete, so it is never run.
- **Usage.** `prompt_tokens` includes `prompt_tokens_details.cached_tokens`: those are counted
  as cache reads, the rest as input, so nothing is counted twice.
- **Errors** are OpenAI's `{"error": {"message", "type", "code"}}` with a status, turned into
  ours by the HTTP layer (429 and 5xx retried, with `retry-after`), with `HINTS`; an error
  object inside the stream is retried when it looks transient.
"""

from __future__ import annotations

import json
import operator
import os
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentcli import __version__
from agentcli.bounds import token_count
from agentcli.contracts import JSON, ModelRequest, ModelResponse, StreamListener, Usage
from agentcli.conversation import (
    blocks_of,
    is_text,
    is_tool_result,
    is_tool_use,
    text_block,
    tool_call,
    web_search_result_block,
    web_search_wanted,
)
from agentcli.errors import ModelAPIError, TransientModelError
from agentcli.providers.body import JsonFragments, encode, json_object
from agentcli.providers.call_repair import CallIds, ConversationIds, checked_name
from agentcli.providers.http import Endpoint, LazyHttpClient
from agentcli.providers.timeouts import Timeouts
from agentcli.tool_input import parse_tool_input

DEFAULT_BASE_URL = "https://api.openai.com/v1"
COMPLETIONS_PATH = "/chat/completions"
MISSING_KEY = "No API key for OpenAI: set OPENAI_API_KEY (or OPENAI_BASE_URL for a server that needs none)."
HINTS = {
    400: "The server rejected the request as malformed. Re-run with --verbose for details.",
    401: "Check OPENAI_API_KEY: the server did not accept it.",
    403: "Your API key is not allowed to do this (model access or project permissions).",
    404: "Check the model name (--model) and OPENAI_BASE_URL.",
    413: "The request is too large: start a new conversation or trim what you attached.",
    429: "Rate limited (or out of quota): wait a minute and try again, or check your plan's limits.",
}
FINISH_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
STREAM_FAULTS = {
    "server_error": "server error",
    "rate_limit_exceeded": "rate limited",
    "overloaded": "overloaded",
    "timeout": "timed out",
}


class OpenAIModel:
    """Streams turns from an OpenAI-compatible Chat Completions server."""

    def __init__(self, *, timeouts: Timeouts | None = None, base_url: str | None = None, api_key: str | None = None):
        self._timeouts = timeouts or Timeouts()
        self._base_url = base_url
        self._api_key = api_key
        self._http = LazyHttpClient(self._endpoint, self._timeouts)
        self._translator = Translator()
        self._ids = ConversationIds()

    def _endpoint(self) -> Endpoint:
        key = self._api_key or os.environ.get("OPENAI_API_KEY") or None
        configured = self._base_url or os.environ.get("OPENAI_BASE_URL")
        if key is None and not configured:
            raise ModelAPIError(MISSING_KEY)
        headers = {"user-agent": f"agentcli/{__version__}", "accept": "text/event-stream"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        return Endpoint(
            base_url=(configured or DEFAULT_BASE_URL).rstrip("/"),
            headers=headers,
            base_url_variable="OPENAI_BASE_URL",
            hints=HINTS,
            request_id_headers=("x-request-id", "request-id"),
        )

    def close(self) -> None:
        """Close the HTTP connections (new ones are made if the model is used again)."""
        self._http.close()

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        client = self._http.get()
        body = self._translator.body(request, official=client.endpoint.base_url == DEFAULT_BASE_URL)
        assembler = _ChunkAssembler(listener, request, CallIds(lambda: self._ids.taken(request.messages), "call_"))
        with client.stream(COMPLETIONS_PATH, body, listener.cancel) as events:
            for chunk in events.json_chunks(STREAM_FAULTS, done="[DONE]"):
                assembler.feed(chunk)
        return assembler.finish()


class Translator:
    """The conversation as Chat Completions messages, each message translated and encoded once.

    The translation of the messages sent last time is kept as a whole too, and reused while the
    conversation starts with those very messages, so a request translates only its new ones (and
    the same system message object goes first, so `JsonFragments` reuses their joined encoding)."""

    def __init__(self) -> None:
        self._fragments = JsonFragments()
        self._previous: dict[int, tuple[JSON, list[JSON]]] = {}
        self._current: dict[int, tuple[JSON, list[JSON]]] = {}
        self._system: JSON = {"role": "system", "content": ""}
        self._sent: list[JSON] = []
        """The conversation's messages the last request carried, and (`_sent_as`) their translation."""
        self._sent_as: list[JSON] = []
        self._lock = threading.Lock()

    def body(self, request: ModelRequest, *, official: bool) -> bytes:
        with self._lock:
            messages: list[JSON] = []
            if system := "\n\n".join(str(b.get("text", "")) for b in request.system if is_text(b)):
                if self._system["content"] != system:
                    self._system = {"role": "system", "content": system}
                messages.append(self._system)
            messages += self._conversation(request.messages)
            self._previous, self._current = self._current, {}
        limit = "max_completion_tokens" if official else "max_tokens"  # OpenAI's reasoning models refuse max_tokens
        fields: list[tuple[str, str | list[bytes]]] = [
            ("model", encode(request.model)),
            (limit, encode(request.max_tokens)),
            ("messages", self._fragments.array(messages)),
        ]
        functions = [tool for tool in request.tools if tool is not web_search_wanted(request.tools)]
        if functions:
            fields.append(("tools", encode([function_tool(tool) for tool in functions])))
        if web_search_wanted(request.tools) is not None:  # OpenAI's search models search on their own
            fields.append(("web_search_options", "{}"))
        fields += [("stream", "true"), ("stream_options", '{"include_usage":true}')]
        self._fragments.next_request()
        return json_object(fields)

    def _conversation(self, source: Sequence[JSON]) -> list[JSON]:
        """`source` translated, the messages sent last time taken as they were translated then."""
        reused = len(source) >= len(self._sent) and all(map(operator.is_, source, self._sent))
        translated = list(self._sent_as) if reused else []
        for message in source[len(self._sent) if reused else 0 :]:
            translated += self._translated(message)
        self._sent, self._sent_as = list(source), translated
        return translated

    def _translated(self, message: JSON) -> list[JSON]:
        kept = self._current.get(id(message)) or self._previous.get(id(message))
        if kept is None or kept[0] is not message:
            kept = (message, translate_message(message))
        self._current[id(message)] = kept
        return kept[1]


def function_tool(tool: JSON) -> JSON:
    """A tool of ours as a Chat Completions function tool."""
    return {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": tool.get("description", ""),
            "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
        },
    }


def translate_message(message: JSON) -> list[JSON]:
    """One conversation message as the Chat Completions messages that say the same."""
    blocks = blocks_of(message)
    if message.get("role") == "assistant":
        text = "".join(str(b.get("text", "")) for b in blocks if is_text(b))
        calls = [tool_call(b) for b in blocks if is_tool_use(b)]
        out: JSON = {"role": "assistant", "content": text or None}
        if calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": encode(c.input)}}
                for c in calls
            ]
        elif not text:
            out["content"] = ""
        return [out]
    results = [
        {"role": "tool", "tool_call_id": str(b.get("tool_use_id", "")), "content": _result_text(b)}
        for b in blocks
        if is_tool_result(b)
    ]
    rest = [b for b in blocks if not is_tool_result(b)]
    parts = [part for b in rest if (part := _user_part(b)) is not None]
    if not parts:
        return results
    if all(part["type"] == "text" for part in parts):
        return [*results, {"role": "user", "content": "\n\n".join(part["text"] for part in parts)}]
    return [*results, {"role": "user", "content": parts}]


def _result_text(block: JSON) -> str:
    content = block.get("content")
    if isinstance(content, list):
        pieces = [str(b.get("text", "")) if is_text(b) else "[image omitted]" for b in content if isinstance(b, dict)]
        content = "\n".join(pieces)
    text = str(content or "")
    return f"Error: {text}" if block.get("is_error") else text


def _user_part(block: JSON) -> JSON | None:
    if is_text(block):
        return {"type": "text", "text": str(block.get("text", ""))}
    source = block.get("source")
    if block.get("type") == "image" and isinstance(source, dict):
        if source.get("type") == "base64":
            url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
        else:
            url = str(source.get("url", ""))
        return {"type": "image_url", "image_url": {"url": url}}
    return None  # thinking and other provider-specific blocks are not sent back


@dataclass
class _Call:
    id: str | None
    """As the server sent it (None until it sends one); `finish` gives the call the id it goes by."""
    name_parts: list[str] = field(default_factory=list)
    odd_name: object = None
    """A name that was not a string, as sent."""
    argument_parts: list[str] = field(default_factory=list)
    """The arguments' pieces as they arrive (joined once, at the end: a long stream stays linear)."""

    @property
    def sent_name(self) -> object:
        """The name as the server sent it: text, something else, or None."""
        return self.odd_name if self.odd_name is not None else "".join(self.name_parts) or None


@dataclass
class _ChunkAssembler:
    """Rebuilds the assistant turn from streamed chunks (the first choice's)."""

    listener: StreamListener
    request: ModelRequest
    ids: CallIds
    text: list[str] = field(default_factory=list)
    """The answer's pieces as they arrive (joined once, in `finish`: a long answer stays linear)."""
    reasoning: list[str] = field(default_factory=list)
    calls: list[_Call] = field(default_factory=list)
    by_index: dict[object, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    cited: dict[str, str] = field(default_factory=dict)
    """url → title of the `url_citation` annotations (a search model's sources)."""

    def feed(self, chunk: JSON) -> None:
        try:
            if isinstance(chunk.get("usage"), dict):
                self._take_usage(chunk["usage"])
            for choice in chunk.get("choices") or []:
                if choice.get("index", 0) != 0:
                    continue
                self._apply(choice.get("delta") or {})
                if choice.get("finish_reason"):
                    self.finish_reason = str(choice["finish_reason"])
        except (KeyError, TypeError, AttributeError, ValueError) as error:
            raise TransientModelError(
                f"the stream sent a malformed chunk ({error!r})", fault="malformed stream"
            ) from error

    def _apply(self, delta: JSON) -> None:
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self.reasoning.append(reasoning)
            self.listener.reasoning(reasoning)
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.text.append(content)
            self.listener.text(content)
        for part in delta.get("tool_calls") or []:
            self._tool_call_delta(part)
        for note in delta.get("annotations") or []:
            citation = note.get("url_citation") if isinstance(note, dict) else None
            if isinstance(citation, dict) and isinstance(citation.get("url"), str):
                self.cited.setdefault(citation["url"], str(citation.get("title") or citation["url"]))

    def _tool_call_delta(self, part: JSON) -> None:
        """A piece of a call: a new call at a new index, or at index 0 under a new id (servers that
        send parallel calls that way); without an index, the call holding its id, if any."""
        index = part.get("index")
        key = len(self.calls) if index is None else index  # without an index, each piece may be a call of its own
        call_id = _server_id(part.get("id"))
        known = self.by_index.get(key)
        if call_id is not None and (known is None or known.id not in (None, call_id)):
            new_index = index is not None and known is None
            by_id = None if new_index else next((c for c in self.calls if c.id == call_id), None)
            known = by_id or self._start(call_id)
            self.by_index[key] = known
        elif known is None:
            known = self._start(None)
            self.by_index[key] = known
        elif call_id is not None:
            known.id = call_id
        function = part.get("function") or {}
        name = function.get("name")
        if isinstance(name, str) and name:
            started = not known.name_parts
            known.name_parts.append(name)
            if started:
                if self.text:
                    self.listener.text("")  # the text block before the calls is whole
                self.listener.tool_call_started(name)
        elif name is not None and not isinstance(name, str):
            known.odd_name = name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # some servers send the object itself
            known.argument_parts.append(encode(arguments))
        elif arguments is not None:
            known.argument_parts.append(str(arguments))

    def _start(self, call_id: str | None) -> _Call:
        call = _Call(call_id)
        self.calls.append(call)
        return call

    def _take_usage(self, usage: JSON) -> None:
        details = usage.get("prompt_tokens_details")
        cached = token_count(details.get("cached_tokens") if isinstance(details, dict) else 0)
        self.usage = Usage(
            input_tokens=max(0, token_count(usage.get("prompt_tokens")) - cached),
            output_tokens=token_count(usage.get("completion_tokens")),
            cache_read_input_tokens=cached,
        )

    def finish(self) -> ModelResponse:
        if self.finish_reason is None:
            raise TransientModelError("the stream ended before the answer was complete", fault="stream cut short")
        content: list[JSON] = []
        if self.reasoning:
            content.append({"type": "thinking", "thinking": "".join(self.reasoning)})
        if self.text:
            content.append(text_block("".join(self.text)))
            if not self.calls:
                self.listener.text("")
        if web_search_wanted(self.request.tools) is not None:
            self.usage.web_search_requests = 1  # a search model's request searches once, cited or not
            hits = [(title, url) for url, title in self.cited.items()]
            content.append(web_search_result_block(f"openai_search_{uuid.uuid4().hex}", hits))
        stop = FINISH_REASONS.get(self.finish_reason, "end_turn")
        if self.calls and stop == "end_turn":
            stop = "tool_use"  # some servers (Ollama) finish a turn of tool calls with "stop"
        cut = self.calls[-1] if self.calls and stop == "max_tokens" else None
        incomplete = len(content) + len(self.calls) - 1 if cut is not None else None
        invalid: dict[str, str] = {}
        for call in self.calls:
            call_id = self.ids.claim(call.id)
            name, problem = checked_name(call.sent_name, self.request.tools)
            try:
                tool_input, input_problem = parse_tool_input("".join(call.argument_parts))
            except json.JSONDecodeError as error:
                tool_input = {}
                input_problem = f"the arguments are not valid JSON ({error.msg} at character {error.pos})"
            why = problem or input_problem
            if why is not None and call is not cut:
                invalid[call_id] = why
            content.append({"type": "tool_use", "id": call_id, "name": name, "input": tool_input})
        return ModelResponse(content, stop, self.usage, incomplete, invalid)


def _server_id(value: object) -> str | None:
    """A call id as the server sent it: text (a number some servers send read as text), or None."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value) or None
