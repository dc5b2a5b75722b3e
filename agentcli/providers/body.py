"""Request bodies from JSON encoded once per value: a conversation's messages are not re-encoded,
nor their encodings joined again, every turn.

Messages never change once they join a conversation (earlier messages are never rewritten),
so the JSON of a message sent with one request is its JSON for the next. `JsonFragments`
keeps the encoding of each value it was given, by identity: a marked copy (a cache
breakpoint) is a new object and is encoded afresh. Only the values of the latest two
requests are kept, so a compacted conversation's old messages are let go.

It also keeps, for each array it encoded, the encoding of its leading items that had been sent
before (a `_Run`: all but the newest messages and the marked copies), as a few large pieces. The
next array that starts with those very objects (checked one by one, by identity) reuses the
pieces, so a request costs its new messages and one copy of the body into its bytes, not a
lookup and a join for every message of the conversation (at 3,000 messages, 1.7 MB, that and the
copies took 3.2-3.6 ms of CPU a request, against 0.45-0.6 ms now: more than all the rest of a
step). Messages inside a run are not looked up one by one, so a conversation whose start was
replaced (a compaction clearing old tool results) has its later messages encoded once more.
"""

from __future__ import annotations

import json
import operator
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentcli.contracts import JSON

MAX_PIECES = 32
"""A run's pieces are joined into one when there are more (a copy every 32 requests, not every one)."""


def encode(value: object) -> str:
    """Compact JSON, ASCII only (a lone surrogate in a tool's output cannot break the encoding)."""
    return json.dumps(value, separators=(",", ":"))


def json_object(fields: Sequence[tuple[str, str | Sequence[bytes]]]) -> bytes:
    """`{"name":value,...}`: each value either encoded JSON or the pieces of an array (`JsonFragments.array`)."""
    parts = [b"{"]
    for index, (name, value) in enumerate(fields):
        parts.append((("," if index else "") + json.dumps(name) + ":").encode())
        if isinstance(value, str):
            parts.append(value.encode())
        else:
            parts.extend(value)
    parts.append(b"}")
    return b"".join(parts)


@dataclass
class _Run:
    """The leading items of an array that was sent, and their encoding, comma-joined, in pieces
    (each but the first starts with its comma)."""

    items: list[JSON] = field(default_factory=list)
    pieces: list[bytes] = field(default_factory=list)

    def prefix_of(self, items: Sequence[JSON]) -> bool:
        """`items` starts with these very objects."""
        return len(items) >= len(self.items) and all(map(operator.is_, items, self.items))

    def extended(self, items: Sequence[JSON], fragments: Sequence[bytes]) -> _Run:
        """This run followed by `items`, encoded as `fragments` (the pieces are shared, not copied)."""
        if not items:
            return self
        pieces = [*self.pieces, (b"," if self.pieces else b"") + b",".join(fragments)]
        if len(pieces) > MAX_PIECES:
            pieces = [b"".join(pieces)]
        return _Run([*self.items, *items], pieces)


class JsonFragments:
    """Encodes lists of JSON objects, each object once for as long as requests keep sending it."""

    def __init__(self) -> None:
        self._previous: dict[int, tuple[JSON, bytes]] = {}
        self._current: dict[int, tuple[JSON, bytes]] = {}
        self._previous_runs: dict[int, _Run] = {}
        self._current_runs: dict[int, _Run] = {}
        """By the id of their first item."""
        self._lock = threading.Lock()  # two agents (a sub-agent, a compaction) may share one model

    def array(self, items: Sequence[JSON]) -> list[bytes]:
        """`items` as a JSON array, in pieces to be joined (`json_object`)."""
        with self._lock:
            run = self._run_starting(items)
            rest = items[len(run.items) :]
            fragments: list[bytes] = []
            known = 0
            """How many of `rest`, from its start, were sent before (and so are likely to be again)."""
            for item in rest:
                fragment, seen = self._fragment(item)
                if seen and known == len(fragments):
                    known += 1
                fragments.append(fragment)
            if run.items or known:
                self._current_runs[id(items[0])] = run.extended(rest[:known], fragments[:known])
            middle = [b",".join(fragments)] if fragments else []
            comma = [b","] if run.items and fragments else []
            return [b"[", *run.pieces, *comma, *middle, b"]"]

    def next_request(self) -> None:
        """Forget what the request before the one just built sent and this one did not."""
        with self._lock:
            self._previous, self._current = self._current, {}
            self._previous_runs, self._current_runs = self._current_runs, {}

    def _run_starting(self, items: Sequence[JSON]) -> _Run:
        if not items:
            return _Run()
        key = id(items[0])  # unique while the run holds the object itself
        run = self._current_runs.get(key) or self._previous_runs.get(key)
        return run if run is not None and run.prefix_of(items) else _Run()

    def _fragment(self, item: JSON) -> tuple[bytes, bool]:
        """The encoding of `item`, and whether it was sent before."""
        key = id(item)  # unique while the entry holds the object itself
        kept = self._current.get(key) or self._previous.get(key)
        seen = kept is not None and kept[0] is item
        if kept is None or not seen:
            kept = (item, encode(item).encode())
        self._current[key] = kept
        return kept[1], seen
