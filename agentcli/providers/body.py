"""Request bodies from JSON encoded once per value: a conversation's messages are not re-encoded every turn.

Messages never change once they join a conversation (earlier messages are never rewritten),
so the JSON of a message sent with one request is its JSON for the next. `JsonFragments`
keeps the encoding of each value it was given, by identity: a marked copy (a cache
breakpoint) is a new object and is encoded afresh. Only the values of the latest two
requests are kept, so a compacted conversation's old messages are let go.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence

from agentcli.contracts import JSON


def encode(value: object) -> str:
    """Compact JSON, ASCII only (a lone surrogate in a tool's output cannot break the encoding)."""
    return json.dumps(value, separators=(",", ":"))


class JsonFragments:
    """Encodes lists of JSON objects, each object once for as long as requests keep sending it."""

    def __init__(self) -> None:
        self._previous: dict[int, tuple[JSON, str]] = {}
        self._current: dict[int, tuple[JSON, str]] = {}
        self._lock = threading.Lock()  # two agents (a sub-agent, a compaction) may share one model

    def array(self, items: Sequence[JSON]) -> str:
        """`items` as a JSON array."""
        with self._lock:
            return "[" + ",".join(self._fragment(item) for item in items) + "]"

    def next_request(self) -> None:
        """Forget what the request before the one just built sent and this one did not."""
        with self._lock:
            self._previous, self._current = self._current, {}

    def _fragment(self, item: JSON) -> str:
        key = id(item)  # unique while the entry holds the object itself
        kept = self._current.get(key) or self._previous.get(key)
        if kept is None or kept[0] is not item:
            kept = (item, encode(item))
        self._current[key] = kept
        return kept[1]
