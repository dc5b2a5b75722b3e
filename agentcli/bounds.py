"""Numbers from outside agentcli, and the range each kind may take.

Settings files, flags, environment variables, model servers and transcripts all hand us numbers
that nothing downstream expects: 1e308, Infinity and NaN (Python's `json` reads all three),
whole numbers of any size, `true` (a bool is an int in Python). Past some point each fails far
from where it was read, as an `OverflowError` or a silent wrong answer: a timeout over about
24 days overflows the operating system's wait, a price of 1e308 makes every cost infinite, a
count of 10**400 tokens cannot be priced at all, a budget of NaN is never passed. So each kind
of number has one `Range`, checked where the number comes in:

- a value the user wrote (a setting, a flag, an environment variable) outside its range is a
  `UsageError` naming where it came from and what it may be (`Range.checked`), raised before
  anything is sent;
- a count of tokens a server or a transcript reports is clamped into `TOKEN_COUNTS` (`token_count`):
  a garbled usage figure is no reason to lose the answer that came with it.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass

from agentcli.errors import UsageError

MAX_SECONDS = 86_400
"""The longest timeout: a day (the operating system's own waits overflow past about 24 days)."""
MAX_TOKENS = 10**12
"""The largest count of tokens: far beyond any model's, small enough to price exactly as a float."""
MAX_USD = 1_000_000
"""The largest amount of dollars: a budget, or a price per million tokens."""
MAX_TURNS_LIMIT = 1_000_000
"""The largest turn limit (`--max-turns`)."""
JSON_DIGITS = sys.get_int_max_str_digits()
"""Python reads no whole number of more digits (4,300): `json.loads` (and YAML) raise a plain
ValueError for one, not the JSONDecodeError (YAMLError) that their readers catch."""


@dataclass(frozen=True)
class Range:
    """The numbers one kind of value may take: from `low` to `high`; with `positive`, above 0 instead."""

    unit: str
    high: int
    low: int = 0
    whole: bool = False
    """Only whole numbers (JSON integers: `32768`, not `32768.0`)."""
    positive: bool = False

    def holds(self, value: object) -> bool:
        """Is `value` a number (not a bool) of this range? NaN and the infinities never are."""
        if isinstance(value, bool) or not isinstance(value, int if self.whole else int | float):
            return False
        above_low = value > 0 if self.positive else value >= self.low
        return above_low and value <= self.high  # every comparison with NaN is false

    def describe(self) -> str:
        """`a positive number of seconds, at most 86,400`, `a whole number of tokens from 1 to 1,000,000,000,000`."""
        if self.positive:
            return f"a positive number of {self.unit}, at most {self.high:,}"
        return f"{'a whole number' if self.whole else 'a number'} of {self.unit} from {self.low:,} to {self.high:,}"

    def checked(self, value: object, what: str) -> float:
        """`value` when this range holds it; else a UsageError: `{what} must be …, not …`."""
        if not self.holds(value):
            raise UsageError(f"{what} must be {self.describe()}, not {shown(value)}.")
        assert isinstance(value, int | float)
        return value


SECONDS = Range("seconds", MAX_SECONDS, positive=True)
MILLISECONDS = Range("milliseconds", MAX_SECONDS * 1000, low=1, whole=True)
TOKENS = Range("tokens", MAX_TOKENS, low=1, whole=True)
TOKEN_COUNTS = Range("tokens", MAX_TOKENS, whole=True)
DOLLARS = Range("dollars", MAX_USD, positive=True)
"""A budget: more than nothing."""
PRICES = Range("dollars", MAX_USD)
"""A price per million tokens: free is a price too."""


def token_count(value: object) -> int:
    """A count of tokens someone else reported, clamped into `TOKEN_COUNTS`: a negative one, NaN
    and anything not a number count as 0, a larger one (Infinity, 1e308) as `MAX_TOKENS`, and a
    fraction is rounded down. Never raises."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return 0
    return MAX_TOKENS if value >= MAX_TOKENS else int(value)


def shown(value: object, limit: int = 60) -> str:
    """`repr(value)` for a message, cut to `limit` characters (a 5,000-digit number has no repr at all)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return "a number too large to show"
    if isinstance(value, float) and not math.isfinite(value):
        return json.dumps(value)  # as JSON spells it: Infinity, -Infinity, NaN
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
