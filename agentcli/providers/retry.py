"""When a failed model request is tried again, and how long to wait first: one policy for
every provider and HTTP layer (nothing here knows a wire format or imports a client).

- **Which failures.** HTTP 408 (request timeout), 409 (lock conflict), 429 (rate limited) and
  every 5xx (529 overloaded included), unless the server says otherwise in `x-should-retry`.
  Providers also raise faults inside a stream (an error event, a connection dropped or gone
  silent, an event that does not parse) as `TransientModelError`, and those are retried too.
  A server that cannot be reached at all (connection refused, unknown host, connect timeout)
  is not retried: the user hears of it at once, in one line.
- **How long.** What the server asks for, `retry-after-ms` or `retry-after` (seconds or an
  HTTP date), capped at `MAX_RETRY_AFTER` (a wait that is not a finite number, or a date the
  calendar cannot hold, counts as none). Otherwise exponential backoff from `base_delay`
  (1 s, 2 s, 4 s…, never more than `max_delay`), each wait shortened at random by up to
  `jitter` of it, so that many clients turned away together do not all come back together.
- **How often.** `max_retries` times; then the last error ends the turn.

The loop does the waiting and reports each wait as a `Retrying` event, so every retry is on
screen: nothing retries silently underneath (the SDK's own retries are off).
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

MAX_RETRY_AFTER = 60.0
"""The longest wait a server's `retry-after` gets; beyond it the server is asking too much of a
user watching a spinner, so the wait is cut to this."""

_FAULTS = {408: "request timed out", 409: "conflict", 429: "rate limited", 529: "overloaded"}


def should_retry(status: int, headers: Mapping[str, str] | None = None) -> bool:
    """Is an HTTP error response with this status (and headers) worth asking again?"""
    verdict = (_header(headers, "x-should-retry") or "").lower()
    if verdict in ("true", "false"):
        return verdict == "true"
    return status in (408, 409, 429) or status >= 500


def status_fault(status: int) -> str:
    """A few words for the failure, for the retry line: `overloaded`, `rate limited`…"""
    return _FAULTS.get(status) or (f"server error {status}" if status >= 500 else f"HTTP {status}")


def retry_after(headers: Mapping[str, str] | None, now: Callable[[], float] = time.time) -> float | None:
    """The wait the server asks for, in seconds (never negative), or None when it names none."""
    milliseconds = _number(_header(headers, "retry-after-ms"))
    if milliseconds is not None:
        return max(0.0, milliseconds / 1000)
    value = _header(headers, "retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return max(0.0, seconds)
    date = email.utils.parsedate_tz(value)
    if date is None:
        return None
    try:
        return max(0.0, email.utils.mktime_tz(date) - now())
    except (ValueError, OverflowError):  # a year the calendar cannot hold (99999): as if it named none
        return None


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = 0.25
    """The largest share of a backoff wait that is taken off at random."""
    draw: Callable[[], float] = field(default=random.random, compare=False)
    """Where the jitter comes from: a number in [0, 1) (tests pin it)."""

    def delay(self, attempt: int, server_asks: float | None = None) -> float:
        """Seconds to wait before retry number `attempt` (1 for the first retry)."""
        if server_asks is not None:
            return min(server_asks, MAX_RETRY_AFTER)
        backoff = min(self.base_delay * 2.0 ** (attempt - 1), self.max_delay)
        return backoff * (1 - self.jitter * self.draw())


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    if not headers:
        return None
    value = headers.get(name)
    if value is None:  # a plain dict is not case-insensitive as HTTP headers are
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return value.strip() if isinstance(value, str) else None


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None
