"""Auto-compaction: before a request, compact a conversation that has outgrown its threshold.

A subscriber to the agent's events. On `TurnStarting` (synchronously, before the request is
built) it compares the conversation's size with the threshold (`autoCompactPercent` of the
model's context window, 80 by default) and compacts. At most once per model response: a
compaction that leaves the conversation above the threshold is not tried again until the
model has answered (a `MessageAdded` of an assistant message), so a conversation that cannot
shrink does not cost a summary request before every request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from agentcli.errors import UsageError
from agentcli.events import Event, MessageAdded, TurnStarting
from agentcli.sessions.compact import Compacted
from agentcli.setting_keys import setting
from agentcli.settings import Settings

AUTO_COMPACT_SETTING = setting("autoCompactPercent")
DEFAULT_AUTO_COMPACT_PERCENT = 80


def auto_compact_percent(settings: Settings) -> float | None:
    """The `autoCompactPercent` setting (default 80); None when auto-compaction is off (false or 0)."""
    value = settings.get(AUTO_COMPACT_SETTING, DEFAULT_AUTO_COMPACT_PERCENT)
    if value is False or value == 0:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 100:
        raise UsageError(
            f"Setting autoCompactPercent must be a number from 1 to 100 (or false to turn auto-compaction off), "
            f"not {value!r}."
        )
    return float(value)


class Compactable(Protocol):
    """What auto-compaction needs of a session."""

    def auto_compact_threshold(self) -> int | None:
        """Tokens above which to compact; None when auto-compaction is off."""
        ...

    def context_size(self) -> int:
        """Tokens the conversation occupies now."""
        ...

    def compact(self, instructions: str = "", *, auto: bool = False) -> Compacted: ...


class AutoCompaction:
    """Compacts `conversation` when it passes its threshold; subscribe it to the conversation's agent."""

    def __init__(self, conversation: Compactable, on_notice: Callable[[str], None]) -> None:
        self.conversation = conversation
        self.on_notice = on_notice
        self._armed = True
        """Cleared by a compaction, set again by the next model response."""

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnStarting):
            self._before_request()
        elif isinstance(event, MessageAdded) and event.message["role"] == "assistant":
            self._armed = True

    def _before_request(self) -> None:
        threshold = self.conversation.auto_compact_threshold()
        if threshold is None or not self._armed or self.conversation.context_size() <= threshold:
            return
        self._armed = False
        self.on_notice(self.conversation.compact(auto=True).describe(auto=True))
