"""Prompt-cache breakpoints, at most 4 per request (the API's limit).

The prompt is cached as a prefix in the order tools → system → messages. Breakpoints:

1. the first system block (the core instructions): tools + core are the same for every
   session and project, so a new session reads them from the cache;
2. the last system block: tools + the whole system prompt of this session;
3. the newest content block (moves forward every turn): everything so far is written,
   and the next request reads it back;
4. the last block of the previous user message, where the previous request's breakpoint
   was: the cache only looks back about 20 blocks from a breakpoint, and one turn with
   many parallel tool calls adds more than that.

Marks go on copies: stored messages are never rewritten.
"""

from __future__ import annotations

from dataclasses import replace

from agentcli.contracts import JSON, ModelRequest

EPHEMERAL: JSON = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
_UNMARKABLE = {"thinking", "redacted_thinking"}


def with_cache_breakpoints(request: ModelRequest) -> ModelRequest:
    system = [_unmarked(block) for block in request.system]
    tools = [_unmarked(tool) for tool in request.tools]
    if system:
        for index in sorted({0, len(system) - 1}):
            system[index] = _marked(system[index])
    elif tools:
        tools[-1] = _marked(tools[-1])
    messages = list(request.messages)
    for index in _message_breakpoints(messages):
        messages[index] = _mark_last_block(messages[index])
    return replace(request, system=system, tools=tools, messages=messages)


def count_breakpoints(request: ModelRequest) -> int:
    """How many blocks of `request` carry cache_control (tool_result contents included)."""
    blocks = [*request.tools, *request.system]
    for message in request.messages:
        content = message["content"]
        if isinstance(content, list):
            for block in content:
                blocks.append(block)
                inner = block.get("content")
                if block.get("type") == "tool_result" and isinstance(inner, list):
                    blocks.extend(inner)
    return sum(1 for block in blocks if isinstance(block, dict) and block.get("cache_control"))


def _message_breakpoints(messages: list[JSON]) -> list[int]:
    """The newest message, and the latest user message before it."""
    if not messages:
        return []
    found = [len(messages) - 1]
    for index in range(len(messages) - 2, -1, -1):
        if messages[index]["role"] == "user":
            found.append(index)
            break
    return found


def _mark_last_block(message: JSON) -> JSON:
    content = message["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}] if content else []
    for index in range(len(content) - 1, -1, -1):
        if content[index].get("type") not in _UNMARKABLE:
            marked = [*content[:index], _marked(content[index]), *content[index + 1 :]]
            return {**message, "content": marked}
    return message


def _marked(block: JSON) -> JSON:
    return {**block, "cache_control": EPHEMERAL}


def _unmarked(block: JSON) -> JSON:
    """A caller's own cache_control marks are dropped, so the total stays within the limit."""
    if "cache_control" not in block:
        return block
    return {k: v for k, v in block.items() if k != "cache_control"}
