"""WebFetch's memory of what it fetched: 15 minutes per URL, within one agentcli process.

A second call for the same URL within `ttl_s` reuses the page (or the redirect) without going
to the network; a different prompt is answered from the same page. The entries' text is held
up to `max_chars` in all, the least recently used let go first.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

TTL_S = 15 * 60
Value = TypeVar("Value")


@dataclass(frozen=True)
class _Entry(Generic[Value]):
    value: Value
    size: int
    stored: float


class UrlCache(Generic[Value]):
    """Values by URL, each for `ttl_s` seconds after it was stored (`clock` tells the time)."""

    def __init__(
        self, ttl_s: float = TTL_S, max_chars: int = 50_000_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl_s = ttl_s
        self.max_chars = max_chars
        self._clock = clock
        self._entries: OrderedDict[str, _Entry[Value]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()  # concurrent WebFetch calls share it

    def get(self, url: str) -> Value | None:
        with self._lock:
            entry = self._entries.get(url)
            if entry is None:
                return None
            if self._clock() - entry.stored >= self.ttl_s:
                self._drop(url)
                return None
            self._entries.move_to_end(url)
            return entry.value

    def put(self, url: str, value: Value, size: int) -> None:
        """Keep `value` (about `size` characters) for `url`; one larger than the whole cache is not kept."""
        if size > self.max_chars:
            return
        with self._lock:
            if url in self._entries:
                self._drop(url)
            self._entries[url] = _Entry(value, size, self._clock())
            self._held += size
            while self._held > self.max_chars:
                self._drop(next(iter(self._entries)))

    def _drop(self, url: str) -> None:
        self._held -= self._entries.pop(url).size
