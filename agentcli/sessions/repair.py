"""A conversation read back from a damaged transcript, made valid again (in memory; the file is left alone).

A transcript line can be damaged (a disk error, a hand edit, a line replaced by garbage).
Sent as it is, the conversation would be refused by the API on every request, and the
session could never go on. So, after the unreadable lines are skipped:

- a message that is not a readable message (no role, no content, content of the wrong
  type) is dropped, and so is a malformed block inside one; text that is not valid Unicode
  is shown escaped (`safe_text.valid_unicode`);
- tool calls whose results were lost are answered with an error result, as interrupted;
- results whose tool call was lost are dropped; a message left empty is dropped;
- the conversation starts with a user message (assistant messages before one are dropped);
- what a model server got wrong before agentcli mended it at the provider edge
  (`agentcli.providers.call_repair`) is mended here too: a call id that an API refuses or that
  an earlier call holds gets a fresh one, in the call and in its result; a call with an empty
  name is named `invalid_tool_call`; an input holding NaN or Infinity becomes `{}`.

A message that needed nothing is kept as the very same object, so an undamaged transcript
is sent byte for byte as before. Each repair is described with its line in the file.
Tool calls left without results at the very end (a killed run) are not this module's
business: `LoadedTranscript.repairs` answers them and the session records that.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from agentcli.contracts import JSON
from agentcli.conversation import (
    blocks_of,
    is_text,
    is_tool_result,
    is_tool_use,
    result_call_id,
    tool_result_block,
    tool_results,
    tool_use_ids,
    user_message,
)
from agentcli.providers.call_repair import UNUSABLE_NAME, CallIds
from agentcli.safe_text import valid_unicode
from agentcli.tool_input import input_problem

LOST_RESULT = "Interrupted: the result of this call was lost (its transcript line could not be read)."


@dataclass(frozen=True)
class Entry:
    """A message read from the transcript, with the line it came from (1-based)."""

    line: int
    message: JSON


def readable_message(value: object) -> JSON | None:
    """`value` as a message the API accepts in shape (malformed blocks left out), or None."""
    if not isinstance(value, dict) or value.get("role") not in ("user", "assistant"):
        return None
    content = value.get("content")
    if isinstance(content, str):
        if not content:
            return None
        safe = valid_unicode(content)
        return value if safe == content else {**value, "content": safe}
    if not isinstance(content, list):
        return None
    blocks = [fixed for block in content if (fixed := _readable_block(block)) is not None]
    if not blocks:
        return None
    unchanged = len(blocks) == len(content) and all(a is b for a, b in zip(blocks, content, strict=True))
    return value if unchanged else {**value, "content": blocks}


def repair(entries: list[Entry]) -> tuple[list[JSON], list[str]]:
    """The conversation `entries` make, valid as a request prefix, and what had to be repaired."""
    messages: list[JSON] = []
    lines: list[int] = []
    notes: list[str] = []
    ids = CallIds(set, "toolu_")
    renamed: dict[str, deque[str]] = {}
    """The ids the last assistant message's calls now have, by the ids they had (empty: none changed)."""
    for entry in entries:
        message = entry.message
        previous = messages[-1] if messages else None
        if message["role"] == "assistant":
            message, renamed = _with_unique_ids(message, ids)
            if renamed:
                notes.append(f"line {entry.line}: tool call ids that repeat or that an API refuses were replaced")
            if previous is None:
                notes.append(f"line {entry.line}: dropped an assistant message that no user message came before")
                continue
            if previous["role"] == "assistant" and (lost := _tool_use_ids(previous)):
                notes.append(f"line {lines[-1]}: {_calls(len(lost))} without results answered as interrupted")
                messages.append(user_message([_lost(call_id) for call_id in lost]))
                lines.append(entry.line)
        else:
            message, renamed = _with_results_renamed(message, renamed), {}
            expected = _tool_use_ids(previous) if previous is not None and previous["role"] == "assistant" else []
            fixed, missing, orphans = _answering(message, expected)
            if missing:
                notes.append(f"line {lines[-1]}: {_calls(missing)} without results answered as interrupted")
            if orphans:
                notes.append(f"line {entry.line}: dropped {orphans} result(s) of tool calls that were lost")
            if fixed is None:
                continue
            message = fixed
        messages.append(message)
        lines.append(entry.line)
    return messages, notes


def _readable_block(block: object) -> JSON | None:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return None
    if is_text(block):
        text = block.get("text")
        if not isinstance(text, str) or not text:
            return None
        safe = valid_unicode(text)
        return block if safe == text else {**block, "text": safe}
    if is_tool_use(block):
        if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
            return None
        if not block["name"].strip():
            block = {**block, "name": UNUSABLE_NAME}
        return block if input_problem(block.get("input")) is None else {**block, "input": {}}
    if is_tool_result(block):
        content = block.get("content", "")
        if not isinstance(block.get("tool_use_id"), str) or not isinstance(content, str | list):
            return None
        if isinstance(content, str) and valid_unicode(content) != content:
            return {**block, "content": valid_unicode(content)}
    return block


def _with_unique_ids(message: JSON, ids: CallIds) -> tuple[JSON, dict[str, deque[str]]]:
    """`message` with each call's id one no call before it holds and every API accepts (`ids`
    remembers them); when one had to change, the id each call now has by the id it had, in call
    order (for the results that answer them), else nothing."""
    given: dict[str, deque[str]] = {}
    fixed = []
    for block in blocks_of(message):
        if is_tool_use(block):
            call_id = ids.claim(block["id"])
            given.setdefault(block["id"], deque()).append(call_id)
            block = block if call_id == block["id"] else {**block, "id": call_id}
        fixed.append(block)
    if all(old == new for old, news in given.items() for new in news):
        return message, {}
    return {**message, "content": fixed}, given


def _with_results_renamed(message: JSON, given: dict[str, deque[str]]) -> JSON:
    """`message` with its results carrying the ids their calls were given: the k-th result naming
    an id answers the k-th call that had it."""
    if not given:
        return message
    blocks = []
    for block in blocks_of(message):
        old = result_call_id(block) if is_tool_result(block) else None
        if old is not None and given.get(old):
            block = {**block, "tool_use_id": given[old].popleft()}
        blocks.append(block)
    return {**message, "content": blocks}


def _answering(message: JSON, expected: list[str]) -> tuple[JSON | None, int, int]:
    """A user message made to answer exactly the tool calls `expected` (results first, in call
    order): (the message, or None when nothing is left; results made up; results dropped)."""
    blocks = blocks_of(message)
    results = tool_results(blocks)
    ids = [result_call_id(b) for b in results]
    results_first = all(is_tool_result(b) for b in blocks[: len(results)])
    if results_first and len(ids) == len(set(ids)) and set(ids) == set(expected):
        return message, 0, 0
    found: dict[str, JSON] = {}
    for block in results:
        if result_call_id(block) in expected:
            found.setdefault(result_call_id(block), block)
    answered = [found.get(call_id) or _lost(call_id) for call_id in expected]
    others = [b for b in blocks if not is_tool_result(b)]
    missing = len(expected) - len(found)
    orphans = len(results) - len(found)
    rebuilt = [*answered, *others]
    return ({**message, "content": rebuilt} if rebuilt else None), missing, orphans


def _tool_use_ids(message: JSON) -> list[str]:
    return tool_use_ids(blocks_of(message))


def _lost(call_id: str) -> JSON:
    return tool_result_block(call_id, LOST_RESULT, is_error=True)


def _calls(count: int) -> str:
    return f"{count} tool call{'' if count == 1 else 's'}"
