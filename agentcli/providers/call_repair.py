"""A tool call as a model server sent it, given a name and an id the conversation can carry.

A server (most often a local one in front of an open model) can send a call without a name, with
an empty one, or with one no API takes back (`{"a": 1}`, `read file`); and it can number its
calls `call_0` on every turn, so two calls of one conversation share an id. Kept as sent, either
makes every later request invalid (each API refuses an empty name or a repeated id, and the
conversation may go on with another provider) and the session is stuck. So each provider, as it
rebuilds a turn:

- keeps a name that is one of the request's tools or that every API accepts (`NAME`), and
  otherwise names the call `UNUSABLE_NAME` and says why (`ModelResponse.invalid_inputs`): the
  executor answers it with an error result naming the tools, and the model calls again;
- keeps an id that every API accepts (`ID`) and that no other call of the conversation holds
  (`ConversationIds` reads them), and otherwise gives the call a fresh one (`CallIds`). Its
  result is made from the call's block, so the call and its result carry the same new id.

A call whose server id was replaced goes back to that server under the new id, which is as good
as its own: an id only pairs a call with its result.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from agentcli.contracts import JSON
from agentcli.conversation import blocks_of, tool_use_ids

__all__ = ["ID", "NAME", "UNUSABLE_NAME", "CallIds", "ConversationIds", "checked_name"]

UNUSABLE_NAME = "invalid_tool_call"
"""The name a call gets when the one it came with cannot be sent back (it follows every API's rules)."""
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
"""A tool name every provider accepts back in a call (Gemini's rules are the narrowest)."""
ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A call id every provider accepts back (Anthropic's pattern, within OpenAI's length)."""
_SHOWN_NAME = 60
"""Characters of a refused name quoted back to the model."""


def checked_name(name: object, tools: Sequence[JSON]) -> tuple[str, str | None]:
    """`(name, None)` when the call's `name` can stay, else `(UNUSABLE_NAME, why, for the model)`."""
    offered = [str(tool.get("name")) for tool in tools]
    if isinstance(name, str) and (name in offered or NAME.fullmatch(name)):
        return name, None
    if name is None:
        said = "named no tool"
    elif not isinstance(name, str):
        said = f"named its tool with a {type(name).__name__}, not a string"
    elif not name.strip():
        said = "named no tool (its name was empty)"
    else:
        shown = name if len(name) <= _SHOWN_NAME else name[:_SHOWN_NAME] + "…"
        said = f"named a tool no API accepts ({shown!r})"
    return UNUSABLE_NAME, f"the call {said}. Call one of the tools by its exact name: {', '.join(offered)}"


class CallIds:
    """The ids of one turn's calls: each server id kept when it is usable and no other call of the
    conversation (`taken()`, read on the first call: most turns make none) or of the turn holds
    it, else a fresh `{prefix}…` one."""

    def __init__(self, taken: Callable[[], AbstractSet[str]], prefix: str) -> None:
        self._read_taken = taken
        self._prefix = prefix
        self._conversation: AbstractSet[str] | None = None
        self._given: set[str] = set()

    def claim(self, proposed: object) -> str:
        """The id the call that the server numbered `proposed` (anything, or None) goes by."""
        if self._conversation is None:
            self._conversation = self._read_taken()
        call_id = proposed if isinstance(proposed, str) and ID.fullmatch(proposed) else ""
        while not call_id or call_id in self._given or call_id in self._conversation:
            call_id = f"{self._prefix}{uuid.uuid4().hex[:24]}"
        self._given.add(call_id)
        return call_id


@dataclass
class _Read:
    count: int
    last: JSON | None
    """The last message read: a list of that id holding another one there is another conversation."""
    ids: set[str]


class ConversationIds:
    """The call ids in the conversations one model is sent, each message read once: a conversation
    only grows (earlier messages are never rewritten; compaction makes a new list), so a request
    reads only the messages added since the one before. Shared by the agents that share the model."""

    KEPT = 8
    """Conversations remembered (a session's own, its compactions', its sub-agents')."""

    def __init__(self) -> None:
        self._read: dict[int, _Read] = {}
        self._lock = threading.Lock()

    def taken(self, messages: Sequence[JSON]) -> AbstractSet[str]:
        """The ids of the calls in `messages` (read it, never change it)."""
        with self._lock:
            read = self._read.pop(id(messages), None)
            if read is None or read.count > len(messages) or (read.count and messages[read.count - 1] is not read.last):
                read = _Read(0, None, set())  # another conversation (the list it was is gone)
            for message in messages[read.count :]:
                if message.get("role") == "assistant":
                    read.ids.update(tool_use_ids(blocks_of(message)))
            read.count, read.last = len(messages), messages[-1] if messages else None
            self._read[id(messages)] = read  # the latest last
            while len(self._read) > self.KEPT:
                del self._read[next(iter(self._read))]
            return read.ids
