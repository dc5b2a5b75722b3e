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
- keeps an id that every API accepts (`ID`) and that no other call of the conversation holds,
  and otherwise gives the call a fresh one (`CallIds`). Its result is made from the call's
  block, so the call and its result carry the same new id.

A call whose server id was replaced goes back to that server under the new id, which is as good
as its own: an id only pairs a call with its result.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence

from agentcli.contracts import JSON
from agentcli.conversation import blocks_of, tool_use_ids

__all__ = ["ID", "NAME", "UNUSABLE_NAME", "CallIds", "checked_name"]

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
    conversation (`messages`, and the turn so far) holds it, else a fresh `{prefix}…` one."""

    def __init__(self, messages: Sequence[JSON], prefix: str) -> None:
        self._messages = messages
        self._prefix = prefix
        self._taken: set[str] | None = None

    def claim(self, proposed: object) -> str:
        """The id the call that the server numbered `proposed` (anything, or None) goes by."""
        if self._taken is None:  # read on the first call: most turns make none
            self._taken = {
                call_id
                for message in self._messages
                if message.get("role") == "assistant"
                for call_id in tool_use_ids(blocks_of(message))
            }
        call_id = proposed if isinstance(proposed, str) and ID.fullmatch(proposed) else ""
        while not call_id or call_id in self._taken:
            call_id = f"{self._prefix}{uuid.uuid4().hex[:24]}"
        self._taken.add(call_id)
        return call_id
