"""A scripted model: the `Model` seam without a network, for tests (like httpx's `MockTransport`).

Each `stream` call takes the next entry of the script and hands back what a provider would,
so the real loop, tools, permission gate and session run as they do against an API::

    model = ScriptedModel(
        reply(text("Let me look."), tool_use("Read", {"file_path": "a.txt"}, id="toolu_1")),
        reply(text("It says hello.")),
        check=validation_error,  # e.g. tests/fake_anthropic.py's: reject what the API would reject
    )
    session = Session(options, cwd, on_event, model=model)
    session.send("what is in a.txt?")
    assert model.requests[1].messages[-1]["content"][0]["tool_use_id"] == "toolu_1"

An entry is a `Reply`, an exception to raise (`TransientModelError` for a fault the loop
retries, `ModelAPIError` for a fatal one, `KeyboardInterrupt` for Ctrl-C mid-stream), or a
function of the request returning either. A request is recorded (a JSON copy: what the
wire would carry) before it is checked; one that `check` rejects fails as the API's 400
does and consumes no entry. Usage not given in a reply is estimated from the sizes of the
request and the reply (about four characters a token), so the context grows as it would.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from agentcli.contracts import JSON, ModelRequest, ModelResponse, StreamListener, Usage
from agentcli.errors import ModelAPIError
from agentcli.providers.anthropic import HINTS
from agentcli.tool_input import parse_tool_input

__all__ = ["Block", "Reply", "ScriptEntry", "ScriptedModel", "reply", "text", "thinking", "tool_use"]

TEXT_CHUNK = 8
"""Characters per text delta, so front ends see an answer arrive in pieces."""


@dataclass(frozen=True)
class Block:
    """One content block of a reply, as the API sends it."""

    content: JSON
    partial: bool = False
    """A tool_use cut off by the output limit: it arrives with input `{}` and is the incomplete block."""
    raw_json: str | None = None
    """A tool_use input as streamed JSON text, for inputs a real model should not send."""


@dataclass(frozen=True)
class Reply:
    """One scripted assistant turn; build it with `reply`."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    usage: Mapping[str, int] = field(default_factory=dict)

    def final_stop_reason(self) -> str:
        """The stop reason given, else `max_tokens` (a call cut off), `tool_use` or `end_turn`."""
        if self.stop_reason is not None:
            return self.stop_reason
        calls = [b for b in self.blocks if b.content["type"] == "tool_use"]
        if any(b.partial for b in calls):
            return "max_tokens"
        return "tool_use" if calls else "end_turn"


ScriptEntry = Reply | BaseException | Callable[[ModelRequest], "Reply | BaseException"]
"""A reply, an exception to raise, or a function of the request returning either."""


def text(value: str) -> Block:
    return Block({"type": "text", "text": value})


def thinking(value: str, signature: str = "sig-scripted") -> Block:
    return Block({"type": "thinking", "thinking": value, "signature": signature})


_ids = itertools.count(1)
_USAGE_FIELDS = {f.name for f in fields(Usage)}


def tool_use(
    name: str, input: JSON, *, id: str | None = None, partial: bool = False, raw_json: str | None = None
) -> Block:
    """A tool call; `id` defaults to a fresh `toolu_scripted_N`. `raw_json` replaces the input's
    JSON text as streamed, e.g. `tool_use("Bash", {}, raw_json="[1, 2]")`."""
    call_id = id or f"toolu_scripted_{next(_ids)}"
    return Block({"type": "tool_use", "id": call_id, "name": name, "input": dict(input)}, partial, raw_json)


def reply(*blocks: Block, stop_reason: str | None = None, usage: Mapping[str, int] | None = None) -> Reply:
    """A turn of `blocks`; `usage` overrides the estimate field by field (`{"input_tokens": 900}`)."""
    unknown = set(usage or {}) - _USAGE_FIELDS
    if unknown:
        raise ValueError(f"unknown usage fields {sorted(unknown)}; use {sorted(_USAGE_FIELDS)}")
    return Reply(tuple(blocks), stop_reason, dict(usage or {}))


class ScriptedModel:
    """A `Model` that answers from a script and records every request it was sent."""

    def __init__(self, *entries: ScriptEntry, check: Callable[[JSON], str | None] | None = None) -> None:
        """`check(body)` returns why the API would reject a request body (None when valid)."""
        self._script: list[ScriptEntry] = list(entries)
        self._check = check
        self._lock = threading.Lock()
        self.requests: list[ModelRequest] = []
        """Every request, in order, as sent (rejected ones included)."""
        self.rejected: list[str] = []
        """Why each rejected request was rejected: empty while the API would have accepted them all."""
        self.closed = 0
        """How often `close` was called (whoever owns the model closes it when done)."""

    def script(self, *entries: ScriptEntry) -> None:
        """Append entries; each accepted request consumes the next one."""
        with self._lock:
            self._script.extend(entries)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        body = _wire_body(request)
        sent = _as_sent(body)
        with self._lock:
            self.requests.append(sent or request)
            problem = "There was an error parsing the body of your request as JSON." if sent is None else None
            problem = problem or (self._check(body) if self._check else None)
            if problem:
                self.rejected.append(problem)
                raise ModelAPIError(f"API error 400: {problem}", status=400, hint=HINTS[400])
            if not self._script:
                raise ModelAPIError("API error 500: ScriptedModel: the script ran out; no reply for this request")
            entry = self._script.pop(0)
        scripted = entry if isinstance(entry, Reply | BaseException) else entry(sent or request)
        if isinstance(scripted, BaseException):
            raise scripted
        return _streamed(scripted, body, listener)

    def close(self) -> None:
        """Counted, nothing more: like a provider's, the model stays usable (a later session may reuse it)."""
        with self._lock:
            self.closed += 1


def _wire_body(request: ModelRequest) -> JSON:
    """The request body as the Anthropic provider sends it (no `tools` when there are none)."""
    body: JSON = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "system": request.system,
        "messages": request.messages,
    }
    if request.tools:
        body["tools"] = request.tools
    return body


def _as_sent(body: JSON) -> ModelRequest | None:
    """A copy of the request as JSON carries it; None when it cannot be encoded (a lone surrogate)."""
    try:
        copy: dict[str, Any] = json.loads(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):
        return None
    return ModelRequest(copy["model"], copy["system"], copy.get("tools", []), copy["messages"], copy["max_tokens"])


def _streamed(scripted: Reply, body: JSON, listener: StreamListener) -> ModelResponse:
    """The response a provider builds from the stream of `scripted`, reported to `listener` as a
    provider reports it: text in pieces (then "" when a block is whole), each tool call as it starts."""
    content: list[JSON] = []
    invalid_inputs: dict[str, str] = {}
    incomplete: int | None = None
    for index, block in enumerate(scripted.blocks):
        part = json.loads(json.dumps(block.content))
        if part["type"] == "text":
            for start in range(0, len(part["text"]), TEXT_CHUNK):
                listener.text(part["text"][start : start + TEXT_CHUNK])
            listener.text("")  # the block is whole
        elif part["type"] == "tool_use":
            listener.tool_call_started(part["name"])
            parsed = _tool_input(block)
            if parsed is None:  # never completed: the provider hands it back with input {} as the cut-off block
                part["input"] = {}
                incomplete = index if incomplete is None else incomplete
            else:
                part["input"], problem = parsed
                if problem is not None:
                    invalid_inputs[part["id"]] = problem
        content.append(part)
    usage = Usage(input_tokens=_tokens(body), output_tokens=max(1, _tokens(content)))
    for name, value in scripted.usage.items():
        setattr(usage, name, value)
    return ModelResponse(content, scripted.final_stop_reason(), usage, incomplete, invalid_inputs)


def _tool_input(block: Block) -> tuple[JSON, str | None] | None:
    """The call's input and why it cannot be used (as `parse_tool_input` says); None when it was cut off."""
    if block.partial:
        return None
    if block.raw_json is None:
        return block.content["input"], None
    try:
        return parse_tool_input(block.raw_json)
    except json.JSONDecodeError:
        return None


def _tokens(value: object) -> int:
    return math.ceil(len(json.dumps(value, ensure_ascii=False, separators=(",", ":"))) / 4)
