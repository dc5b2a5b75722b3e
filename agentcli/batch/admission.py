"""One gate for every model request of a batch: a shared backoff for overloads and rate limits,
and the batch's budget.

Fifty tasks that each retry a 429 on their own keep hammering the server that asked them to
stop. Here every request of every task waits on one `BatchGate` (in the driver, or in a Ray
actor: `agentcli.batch.ray_engine`), which works like TCP's congestion control:

- each request holds a place while it runs; at most `window` run at once (no limit at first);
- a request that comes back overloaded or rate limited (529, 429, or the same fault inside a
  stream) halves the window (never below 1) and closes the gate for everyone: for what the
  server asked (`retry-after`), else for a backoff that doubles with each such answer in a row
  (`base_delay`, up to `max_delay`);
- each request that succeeds opens the window by one again, and ends the streak.

The task's own loop still retries the request (`agentcli.loop`); its next attempt, like every
other task's next request, waits here first. The gate also holds the batch's budget
(`--max-budget-usd`): tasks report what they have spent as they go (`report_spend`), and once
the batch as a whole has spent its budget no further request is let through (`acquire` says
`budget`), so the batch overshoots by at most the requests already under way then: one per
request in flight, each at most one answer's cost.

`BatchAdmission` is the task's side (`providers.admission.Admission`): it holds a `Link` to
the gate, a direct one in the same process or one across a pipe or to a Ray actor.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Literal, Protocol

from agentcli.errors import CostBudgetExceeded, TransientModelError

THROTTLED_FAULTS = ("overloaded", "rate limited")
"""`TransientModelError.fault` of an answer that asks every client to slow down."""
Denial = Literal["budget"]


class BatchGate:
    """The batch's shared gate; thread-safe (many tasks' requests wait in it at once)."""

    def __init__(
        self,
        *,
        budget_usd: float | None = None,
        spent_before: float = 0.0,
        base_delay: float = 1.0,
        max_delay: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`spent_before`: what earlier runs of this batch spent (its results' costs)."""
        self._budget = budget_usd
        self._finished_spend = spent_before
        self._running_spend: dict[str, float] = {}
        self._base_delay = base_delay
        self._max_delay = max_delay
        self._clock = clock
        self._changed = threading.Condition()
        self._window = math.inf
        self._in_flight = 0
        self._held: Counter[str] = Counter()
        """Places each task holds: a task that dies within a request gives its back at `finish`."""
        self._paused_until = 0.0
        self._streak = 0
        self.throttled = 0
        """How many answers were overloaded or rate limited (for the display and tests)."""
        self.admitted = 0
        """How many requests were let through."""

    def acquire(self, task: str) -> Denial | None:
        """Wait until a request of `task` may be sent and take a place (None), or say why it may
        not be sent at all (`budget`: the batch's budget is spent)."""
        with self._changed:
            while True:
                if self._budget is not None and self._spent() >= self._budget:
                    return "budget"
                wait = self._paused_until - self._clock()
                if wait <= 0 and self._in_flight < self._window:
                    self._in_flight += 1
                    self._held[task] += 1
                    self.admitted += 1
                    return None
                self._changed.wait(wait if wait > 0 else None)

    def release(self, task: str, throttled: bool, retry_after: float | None = None) -> None:
        """A request of `task` let through has ended; `throttled`: the server was overloaded or
        limiting the rate, `retry_after` the wait it asked for (if it said)."""
        with self._changed:
            if self._held[task] > 0:
                self._held[task] -= 1
                self._in_flight -= 1
            if throttled:
                self.throttled += 1
                self._streak += 1
                self._window = max(1.0, min(self._window, self._in_flight + 1) / 2)
                backoff = min(self._base_delay * 2.0 ** (self._streak - 1), self._max_delay)
                delay = min(retry_after, self._max_delay) if retry_after is not None else backoff
                self._paused_until = max(self._paused_until, self._clock() + delay)
            else:
                self._streak = 0
                self._window += 1
            self._changed.notify_all()

    def report_spend(self, task: str, usd: float) -> None:
        """`task` has spent `usd` so far (its running total)."""
        with self._changed:
            self._running_spend[task] = usd

    def finish(self, task: str, usd: float) -> None:
        """`task` has ended having spent `usd` (this attempt), which now counts as spent for good."""
        with self._changed:
            self._running_spend.pop(task, None)
            self._finished_spend += usd
            self._in_flight -= self._held.pop(task, 0)
            self._changed.notify_all()

    @property
    def budget_usd(self) -> float | None:
        return self._budget

    def spent(self) -> float:
        """Dollars the batch has spent: finished tasks (earlier runs included) and running ones so far."""
        with self._changed:
            return self._spent()

    def budget_spent(self) -> bool:
        with self._changed:
            return self._budget is not None and self._spent() >= self._budget

    def _spent(self) -> float:
        return self._finished_spend + sum(self._running_spend.values())


class Link(Protocol):
    """A task's line to the batch's gate."""

    def acquire(self) -> Denial | None: ...
    def release(self, throttled: bool, retry_after: float | None) -> None: ...
    def report_spend(self, usd: float) -> None: ...


class GateLink:
    """A `Link` to a gate in the same process."""

    def __init__(self, gate: BatchGate, task: str) -> None:
        self._gate = gate
        self._task = task

    def acquire(self) -> Denial | None:
        return self._gate.acquire(self._task)

    def release(self, throttled: bool, retry_after: float | None) -> None:
        self._gate.release(self._task, throttled, retry_after)

    def report_spend(self, usd: float) -> None:
        self._gate.report_spend(self._task, usd)


class BatchAdmission:
    """A task's requests through the batch's gate (an `Admission`)."""

    def __init__(self, link: Link, budget_usd: float | None, spending: Callable[[], float]) -> None:
        """`spending`: what the task has spent so far, reported to the gate before each request."""
        self._link = link
        self._budget = budget_usd
        self._spending = spending

    @contextlib.contextmanager
    def admit(self) -> Iterator[None]:
        self._link.report_spend(self._spending())
        if self._link.acquire() == "budget":
            raise BatchBudgetSpent(
                f"The batch's budget of ${self._budget or 0:.4f} is spent: no further request was sent "
                "(raise --max-budget-usd and run the batch again to run what is left)."
            )
        try:
            yield
        except TransientModelError as error:
            self._link.release(error.fault in THROTTLED_FAULTS, error.retry_after)
            raise
        except BaseException:
            self._link.release(False, None)
            raise
        self._link.release(False, None)


class BatchBudgetSpent(CostBudgetExceeded):
    """The batch's budget (not the task's own) is spent."""
