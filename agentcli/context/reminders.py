"""<system-reminder> blocks for user messages, re-sent only when what they say has changed.

Each source renders its current text on demand. The first user message carries every
non-empty one; a later user message carries a source again only when its text differs
from what was last sent. Earlier messages are never touched: a refresh is a new block in
the newest message (rewriting history would break the prompt cache and the transcript).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentcli.contracts import JSON
from agentcli.conversation import text_block


@dataclass(frozen=True)
class ReminderSource:
    key: str
    render: Callable[[], str]
    """The reminder's current body, "" when there is nothing to say."""
    changed: str
    """Said before the new body when it changed during the session ("" for nothing)."""
    removed: str
    """Said instead when it became empty during the session."""
    on_sent: Callable[[bool], None] | None = None
    """Told each time its body is sent: True when whole for the first time (in a conversation, or
    after a compaction dropped it), False when as a change."""


def system_reminder(body: str) -> JSON:
    return text_block(f"<system-reminder>\n{body}\n</system-reminder>")


class ReminderTracker:
    def __init__(self, sources: Sequence[ReminderSource]) -> None:
        self.sources = list(sources)
        self._sent: dict[str, str] = {}
        """Source key → digest of the body last sent ("" digest for nothing sent)."""
        self._once: list[str] = []

    def add_once(self, body: str) -> None:
        """Send `body` with the next user message only (what a SessionStart hook said)."""
        self._once.append(body)

    def next_blocks(self) -> list[JSON]:
        """Reminder blocks for the next user message; records them as sent."""
        blocks: list[JSON] = [system_reminder(body) for body in self._once]
        self._once.clear()
        for source in self.sources:
            body = source.render()
            digest = _digest(body)
            previous = self._sent.get(source.key)
            self._sent[source.key] = digest
            if previous == digest:
                continue
            if previous is None or previous == _digest(""):
                if body:
                    blocks.append(system_reminder(body))
                    _tell(source, fresh=True)
            elif body:
                blocks.append(system_reminder("\n\n".join(part for part in (source.changed, body) if part)))
                _tell(source, fresh=False)
            else:
                blocks.append(system_reminder(source.removed))
        return blocks

    def mark_sent(self, key: str) -> None:
        """Record `key`'s current body as known to the model without sending it (the model wrote it)."""
        source = next(s for s in self.sources if s.key == key)
        self._sent[key] = _digest(source.render())

    def snapshot(self) -> dict[str, str]:
        """What was sent so far (digests), for a resumed session to carry on without repeating."""
        return dict(self._sent)

    def restore(self, sent: dict[str, str]) -> None:
        self._sent = dict(sent)


def _tell(source: ReminderSource, *, fresh: bool) -> None:
    if source.on_sent is not None:
        source.on_sent(fresh)


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()
