"""The text tool protocol: tool calls as tags in plain text, for a model that cannot make them
through its API's own field (or a server that mangles them). `TextToolModel` wraps any `Model`,
so it works on every provider; the conversation keeps its one representation (tool_use and
tool_result blocks), and only what goes over the wire changes:

- **The request** carries no `tools`. The system prompt gets one more block describing each tool
  (its description and JSON schema) and the calling format, the Hermes one open models are
  trained on: `<tool_call>{"name": "Read", "arguments": {"file_path": "a.txt"}}</tool_call>`.
- **The conversation** is sent as text: each tool_use block becomes such a tag in the assistant
  message, and each tool_result a `<tool_response>{"name": ..., "content": "...", "is_error":
  false}</tool_response>` in the user message, in call order, before anything else it holds.
  Their JSON writes every `</` as `<\\/` (the same string to a JSON reader), so what a result or
  an argument holds can never end its tag early and stand outside it as if agentcli wrote it.
  The same conversation always reads the same, so the prompt cache still hits.
- **The answer**: the model's own tags are parsed out of each text block into tool_use blocks
  (ids of our own), several per answer, and the stop reason becomes `tool_use`; what is left is
  the prose. A tag the answer quotes in code (a fence, an indented line, a code span, quoting
  markup) is prose: `agentcli.providers.tool_tags` tells them apart. While the answer streams,
  the listener is given the prose only (the model's own tags are held back), and
  `tool_call_started` once a tag names its tool.
- **A malformed tag** (not JSON, JSON no request can carry back (`NaN`, nested too deep: see
  `agentcli.tool_input`), no name, an unknown tool, arguments that are not an object, never
  closed) becomes a call whose input the provider could not use (`invalid_inputs`): the
  executor answers it with an error result explaining the expected form, with an example, and
  the loop stops as no-progress after `MALFORMED_ANSWER_LIMIT` such answers in a row
  (`agentcli.progress`). A tag cut off by the output limit is the answer's incomplete block:
  never run, as for a native call.

`with_tool_protocol(inner, "native" | "xml" | "auto", native_tools)`: `xml` always uses the
protocol; `auto` uses it for a model `native_tools(name)` says cannot call tools natively, and
for a model that answered a native request with tool-call tags of its own (outside code) and no
native call (from then on).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Literal

from agentcli.contracts import JSON, Cancellation, Model, ModelRequest, ModelResponse, StreamListener
from agentcli.providers.call_repair import NAME, UNUSABLE_NAME
from agentcli.providers.tool_tags import CALL_CLOSE, CALL_OPEN, Piece, Tag, TagScanner, pieces
from agentcli.tool_input import parse_tool_input

__all__ = ["TOOL_PROTOCOLS", "TextToolModel", "ToolProtocol", "with_tool_protocol"]

ToolProtocol = Literal["native", "xml", "auto"]
TOOL_PROTOCOLS: tuple[ToolProtocol, ...] = ("native", "xml", "auto")

RESPONSE_OPEN, RESPONSE_CLOSE = "<tool_response>", "</tool_response>"
_NAME_SO_FAR = re.compile(r'"name"\s*:\s*"([^"\\]{1,64})"')


def with_tool_protocol(inner: Model, protocol: ToolProtocol, native_tools: Callable[[str], bool]) -> Model:
    """`inner` as the protocol says: itself for `native`, wrapped otherwise."""
    if protocol == "native":
        return inner
    return TextToolModel(inner, always=protocol == "xml", native_tools=native_tools)


class TextToolModel:
    """A `Model` that speaks the text tool protocol to `inner` (see the module's docstring)."""

    def __init__(self, inner: Model, *, always: bool, native_tools: Callable[[str], bool]) -> None:
        """`always`: every request uses the protocol; otherwise only those for a model that
        `native_tools(name)` says cannot call tools natively, or that answered with tags."""
        self.inner = inner
        self._always = always
        self._native_tools = native_tools
        self._tagging_models: set[str] = set()
        """Models seen answering a native request with tags instead of calls."""
        self._lock = threading.Lock()

    def uses_text(self, model: str) -> bool:
        with self._lock:
            tagging = model in self._tagging_models
        return self._always or tagging or not self._native_tools(model)

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        if self.uses_text(request.model):
            response = self.inner.stream(as_text_request(request), _ProseOnly(listener))
            return parsed_response(response, request.tools)
        response = self.inner.stream(request, _ProseOnly(listener))
        if any(block.get("type") == "tool_use" for block in response.content) or not _has_tag(response):
            return response
        with self._lock:  # it wrote the calls as text: from now on it is asked for text
            self._tagging_models.add(request.model)
        return parsed_response(response, request.tools)

    def close(self) -> None:
        self.inner.close()


# ------------------------------------------------------------------ the request


def as_text_request(request: ModelRequest) -> ModelRequest:
    """`request` in the text protocol: the tools described in the system prompt, none sent,
    and the conversation's tool blocks written as tags."""
    system = list(request.system)
    if request.tools:
        block: JSON = {"type": "text", "text": tools_prompt(request.tools)}
        if system and "cache_control" in system[-1]:  # the breakpoint moves to the end of the prompt
            *rest, last = system
            system = [*rest, {k: v for k, v in last.items() if k != "cache_control"}]
            block["cache_control"] = last["cache_control"]
        system.append(block)
    return replace(request, system=system, tools=[], messages=as_text_messages(request.messages))


def tools_prompt(tools: Sequence[JSON]) -> str:
    """The system prompt's description of `tools` and of how to call them."""
    described = "\n\n".join(
        f"## {tool.get('name')}\n{tool.get('description', '').strip()}\n"
        f"Arguments (JSON Schema): {json.dumps(tool.get('input_schema', {}), ensure_ascii=False, sort_keys=True)}"
        for tool in tools
    )
    return (
        "# Tools\n\n"
        "You can use the tools below. Their results are the only way to see files, run commands or "
        "change anything. To call a tool, write a tag holding a JSON object with the tool's name and "
        "its arguments (which must follow the tool's schema), for example:\n\n"
        f"{_example(tools)}\n\n"
        "Write one tag per call; several tags make several calls, run in order. After your last tag, "
        "stop and wait: the results come back in the next message, one "
        f'{RESPONSE_OPEN}{{"name": ..., "content": ..., "is_error": false}}{RESPONSE_CLOSE} per call, '
        f"in the order of the calls. Never write a {RESPONSE_OPEN} yourself. When you need no tool, "
        "answer in plain text without tags.\n\n" + described
    )


def _example(tools: Sequence[JSON]) -> str:
    """A well-formed call of the first tool, with its first required argument."""
    tool: JSON = tools[0] if tools else {"name": "Read", "input_schema": {"required": ["file_path"]}}
    schema: JSON = tool.get("input_schema") or {}
    required = schema.get("required") or list(schema.get("properties") or {})[:1]
    arguments = {str(name): "..." for name in required[:1]}
    return _call_tag(str(tool.get("name")), arguments)


def _call_tag(name: str, arguments: object) -> str:
    return f"{CALL_OPEN}{_tag_json({'name': name, 'arguments': arguments})}{CALL_CLOSE}"


def _tag_json(value: object) -> str:
    """`value` as the JSON inside a tag, which its content can never end: every `</` is written
    `<\\/` (the same text to a JSON reader), so no `</tool_response>` or `</tool_call>`, in any
    case or spacing, stands in it."""
    return json.dumps(value, ensure_ascii=False).replace("</", "<\\/")


def as_text_messages(messages: Sequence[JSON]) -> list[JSON]:
    """The conversation with tool_use and tool_result blocks written as tags (new messages; the
    stored ones are not touched). Adjacent text becomes one block, so the tags read as written."""
    names: dict[str, str] = {}
    converted: list[JSON] = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            converted.append(message)
            continue
        blocks: list[JSON] = []
        for block in content:
            kind = block.get("type")
            if kind == "tool_use":
                names[str(block.get("id"))] = str(block.get("name"))
                _add_text(blocks, _call_tag(str(block.get("name")), block.get("input", {})), block)
            elif kind == "tool_result":
                _add_text(blocks, _response_tag(block, names.get(str(block.get("tool_use_id")), "")), block)
            elif kind == "text":
                _add_text(blocks, str(block.get("text", "")), block)
            else:
                blocks.append(block)
        converted.append({**message, "content": blocks})
    return converted


def _add_text(blocks: list[JSON], text: str, source: JSON) -> None:
    """Append `text` to the last block if it is text, else as a new one; a cache mark is kept."""
    if blocks and blocks[-1].get("type") == "text":
        last = blocks[-1]
        blocks[-1] = {**last, "text": f"{last['text']}\n{text}" if last["text"] else text}
    else:
        blocks.append({"type": "text", "text": text})
    if "cache_control" in source:
        blocks[-1]["cache_control"] = source["cache_control"]


def _response_tag(result: JSON, name: str) -> str:
    body = {"name": name, "content": _result_text(result.get("content", "")), "is_error": bool(result.get("is_error"))}
    return f"{RESPONSE_OPEN}{_tag_json(body)}{RESPONSE_CLOSE}"


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            kind = block.get("type") if isinstance(block, dict) else "content"
            parts.append(f"[{kind} omitted: tool results reach you as text only]")
    return "\n".join(parts)


# ------------------------------------------------------------------ the answer


def _has_tag(response: ModelResponse) -> bool:
    """Does a text block of `response` hold a call tag of the model's own (outside code)?"""
    return any(_tags_in(block) is not None for block in response.content)


def _tags_in(block: JSON) -> list[Piece] | None:
    """A text block's prose and tags, or None when it holds no call tag outside code."""
    text = str(block.get("text", "")) if block.get("type") == "text" else ""
    if CALL_OPEN not in text:
        return None
    found = pieces(text)
    return found if any(isinstance(piece, Tag) for piece in found) else None


def parsed_response(response: ModelResponse, tools: Sequence[JSON]) -> ModelResponse:
    """`response` with the tags of its text blocks parsed into tool_use blocks (in order, the
    prose around them kept as text), and stop reason `tool_use` when it made calls."""
    content: list[JSON] = []
    invalid = dict(response.invalid_inputs)
    moved: dict[int, int] = {}
    """Where each block of `response` begins in `content`."""
    cut_tag: int | None = None
    for index, block in enumerate(response.content):
        moved[index] = len(content)
        found = _tags_in(block)
        if found is None:
            content.append(block)
            continue
        for piece in found:
            if isinstance(piece, str):
                if piece.strip():
                    content.append({**block, "text": piece.strip()})
            elif piece.closed or response.stop_reason != "max_tokens":
                call, problem = _call(piece, tools)
                content.append(call)
                if problem:
                    invalid[call["id"]] = problem
            else:  # cut off by the output limit: the incomplete block, never run
                cut_tag = len(content) if cut_tag is None else cut_tag
                content.append({"type": "text", "text": CALL_OPEN + piece.body})
    cut = [moved[response.incomplete_block]] if response.incomplete_block is not None else []
    incomplete = min([*cut, *([cut_tag] if cut_tag is not None else [])], default=None)
    calls = any(block.get("type") == "tool_use" for block in content)
    stop = "tool_use" if calls and response.stop_reason in ("end_turn", "stop_sequence") else response.stop_reason
    return ModelResponse(content, stop, response.usage, incomplete, invalid)


def _call(tag: Tag, tools: Sequence[JSON]) -> tuple[JSON, str | None]:
    """The tool_use block for `tag`, and what is wrong with it (None when it can run)."""
    call_id = f"toolu_text_{uuid.uuid4().hex[:24]}"
    name, arguments, problem = _read_tag(tag, [str(tool.get("name")) for tool in tools])
    usable = name if name is not None and NAME.fullmatch(name) else UNUSABLE_NAME
    block: JSON = {"type": "tool_use", "id": call_id, "name": usable, "input": arguments if problem is None else {}}
    if problem is not None:
        problem = f"{problem}. {_expected_form(tools)}"
    return block, problem


def _read_tag(tag: Tag, tool_names: Sequence[str]) -> tuple[str | None, JSON, str | None]:
    if not tag.closed:
        return None, {}, f"the tool call tag was never closed with {CALL_CLOSE}"
    try:
        value, problem = parse_tool_input(_unfenced(tag.body))
    except json.JSONDecodeError as error:
        return None, {}, f"the tool call is not valid JSON ({error.msg} at character {error.pos})"
    if problem is not None:
        return None, {}, problem.replace("the input", "the tool call", 1)
    name = value.get("name")
    if not isinstance(name, str) or not name:
        return None, {}, 'the tool call has no "name"'
    if name not in tool_names:
        return name, {}, f"there is no tool named {name!r}; the tools are {', '.join(tool_names)}"
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):  # some models encode the arguments twice
        with contextlib.suppress(json.JSONDecodeError):
            arguments, problem = parse_tool_input(arguments)
            if problem is not None:
                return name, {}, problem.replace("the input", '"arguments"', 1)
    if not isinstance(arguments, dict):
        return name, {}, f'"arguments" must be a JSON object, not {type(arguments).__name__}'
    return name, arguments, None


def _unfenced(body: str) -> str:
    """The tag's JSON without a Markdown code fence around it (some models add one)."""
    text = body.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.removesuffix("```").strip()
    return text


def _expected_form(tools: Sequence[JSON]) -> str:
    return (
        f'Write each call as {CALL_OPEN}, a JSON object with "name" (one of the tools) and "arguments" '
        f"(an object following the tool's schema), then {CALL_CLOSE}; for example: {_example(tools)}"
    )


class _ProseOnly:
    """The listener the inner model reports to: prose passes through (tags the model quotes in
    code included), its own tags are held back, and `tool_call_started` is reported once a tag
    names its tool. The tags are told apart as the answer's parse tells them (`TagScanner`)."""

    def __init__(self, listener: StreamListener) -> None:
        self._listener = listener
        self._scanner = TagScanner()
        self._announced = False
        """The open tag's tool was reported."""

    @property
    def cancel(self) -> Cancellation | None:
        return self._listener.cancel

    def text(self, delta: str) -> None:
        if not delta:  # the block ended: what was held back is settled
            self._show(self._scanner.finish())
            self._listener.text("")
            return
        self._show(self._scanner.feed(delta))
        if not self._announced:
            self._announce(self._scanner.open_tag)

    def _show(self, settled: list[Piece]) -> None:
        for piece in settled:
            if isinstance(piece, str):
                self._listener.text(piece)
            else:
                self._announce(piece.body)
                self._announced = False

    def _announce(self, body: str | None) -> None:
        if body is not None and not self._announced and (found := _NAME_SO_FAR.search(body)):
            self._announced = True
            self._listener.tool_call_started(found.group(1))

    def tool_call_started(self, name: str) -> None:
        self._listener.tool_call_started(name)

    def reasoning(self, delta: str) -> None:
        self._listener.reasoning(delta)
