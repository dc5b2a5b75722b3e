"""The one conversation representation, and the only module that knows its blocks.

The harness builds and reads blocks only through these functions: the loop, the executor,
the context (system prompt, reminders, prompts), sub-agents, compaction, transcript repair
and the session store, usage stats, and the front ends (REPL builtins and view, sub-agent
progress). What speaks another format translates at its edge and keeps that knowledge to
itself: each provider (`agentcli.providers`: anthropic, openai, gemini, text_tools and the
scripted test model), the prompt cache's breakpoints (`agentcli.cache`) and MCP content
(`agentcli.mcp`). It is the Messages API's shape, as plain JSON objects:

- a message is `{"role": "user" | "assistant", "content": [block, ...]}`;
- `{"type": "text", "text": ...}`: what the user or the model wrote;
- `{"type": "tool_use", "id", "name", "input"}`: a tool call in an assistant message
  (`ToolCall` is its typed value);
- `{"type": "tool_result", "tool_use_id", "content", "is_error"?}`: its answer, in the very
  next user message, results first and in call order;
- anything else a provider sends (thinking and its signature, images, server-tool blocks) is
  carried verbatim and only the provider that made it reads it.

Blocks are built and read through these functions, never by poking at the dicts elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentcli.contracts import JSON, ModelResponse, ToolCall

__all__ = [
    "ToolCall",
    "assistant_message",
    "block_text",
    "blocks_of",
    "is_error_result",
    "is_text",
    "is_tool_result",
    "is_tool_use",
    "response_calls",
    "result_call_id",
    "result_text",
    "text_block",
    "text_of",
    "tool_call",
    "tool_calls",
    "tool_result_block",
    "tool_results",
    "tool_use_block",
    "tool_use_ids",
    "user_message",
    "with_result_content",
]


def text_block(text: str) -> JSON:
    return {"type": "text", "text": text}


def tool_use_block(call: ToolCall) -> JSON:
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}


def tool_result_block(call_id: str, content: str, *, is_error: bool = False) -> JSON:
    block: JSON = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def user_message(content: Sequence[JSON]) -> JSON:
    return {"role": "user", "content": list(content)}


def assistant_message(content: Sequence[JSON]) -> JSON:
    return {"role": "assistant", "content": list(content)}


def is_text(block: JSON) -> bool:
    return block.get("type") == "text"


def is_tool_use(block: JSON) -> bool:
    return block.get("type") == "tool_use"


def is_tool_result(block: JSON) -> bool:
    return block.get("type") == "tool_result"


def tool_call(block: JSON) -> ToolCall:
    """The typed value of a tool_use block."""
    return ToolCall(str(block.get("id", "")), str(block.get("name", "")), block.get("input"))


def tool_calls(content: Iterable[JSON]) -> list[ToolCall]:
    """The tool calls among `content`'s blocks, in order."""
    return [tool_call(block) for block in content if is_tool_use(block)]


def response_calls(response: ModelResponse) -> list[ToolCall]:
    """The complete tool calls of a response, in order (a block the output limit cut off mid-way is not one)."""
    end = len(response.content) if response.incomplete_block is None else response.incomplete_block
    return tool_calls(response.content[:end])


def block_text(block: JSON) -> str:
    """The text of a text block ("" for any other)."""
    return str(block.get("text", "")) if is_text(block) else ""


def text_of(content: Iterable[JSON]) -> str:
    """The text of `content`'s text blocks, joined."""
    return "".join(str(block.get("text", "")) for block in content if is_text(block))


def tool_results(content: Iterable[JSON]) -> list[JSON]:
    """The tool_result blocks among `content`'s blocks, in order."""
    return [block for block in content if is_tool_result(block)]


def tool_use_ids(content: Iterable[JSON]) -> list[str]:
    """The ids of the tool calls among `content`'s blocks, in order."""
    return [call.id for call in tool_calls(content)]


def result_call_id(block: JSON) -> str:
    """The id of the tool call a tool_result block answers."""
    return str(block.get("tool_use_id", ""))


def is_error_result(block: JSON) -> bool:
    return bool(block.get("is_error"))


def result_text(block: JSON) -> str:
    """A tool_result's content as text: its text blocks, one per line, and `[image]` for any other."""
    inner = block.get("content")
    if isinstance(inner, str):
        return inner
    if isinstance(inner, list):
        return "\n".join(str(b.get("text", "[image]")) if is_text(b) else "[image]" for b in inner)
    return ""


def with_result_content(block: JSON, content: str | list[JSON]) -> JSON:
    """A copy of tool_result `block` whose content is `content`."""
    return {**block, "content": content}


def blocks_of(message: JSON) -> list[JSON]:
    """A message's content as blocks (a plain string content is one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [text_block(content)] if content else []
    return [block for block in content or [] if isinstance(block, dict)]
