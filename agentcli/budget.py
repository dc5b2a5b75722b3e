"""One run's spending limits, shared by the main agent and every sub-agent it starts.

The session makes one `Budget` per conversation and hands the same object to its agent and to
every sub-agent (`build_agent(budget=...)`, `SubagentRunner`), so that however many agents
spend at once, they draw on one purse: tokens (`--max-budget-tokens`, `tokenBudget`) and
dollars (`--max-budget-usd`, `maxBudgetUsd`). The contract (the running totals are kept under
one lock, so concurrent agents never lose each other's spending):

- `reserve(prices)` before every model request: raises `BudgetExceeded` (`CostBudgetExceeded`
  for dollars) once the run has spent more than a limit; otherwise hands back a `Reservation`.
  No request is sent without one.
- `Reservation.charge(usage)` when its response has arrived: the tokens, and their price at
  the reservation's `prices`, are added to what the run has spent. A request that failed or was
  interrupted is not charged: no usage ever came back for it.
- `check()` after a response: the same verdict without a request (the loop does not run the
  tools of a turn that passed the budget).

The bound: a request is sent only while the budget is not passed, and its cost is known only
when it ends, so the run can pass a limit by at most what the requests already in flight at
that moment cost. That is one request while the main agent works alone, and at most one per
sub-agent running at once (each at most its prompt plus its output limit); after that nothing
more is sent.
"""

from __future__ import annotations

import threading
from typing import Protocol

from agentcli.contracts import Usage
from agentcli.errors import BudgetExceeded, CostBudgetExceeded

DEFAULT_TOKEN_BUDGET = 10_000_000


class Prices(Protocol):
    """What a usage costs (`agentcli.catalog.ModelInfo`)."""

    def cost_usd(self, usage: Usage) -> float: ...


class Budget:
    """What a run may spend, and has spent, in tokens (input, cached or not, plus output) and dollars."""

    def __init__(self, tokens: int = DEFAULT_TOKEN_BUDGET, usd: float | None = None) -> None:
        """`usd` None: no dollar limit."""
        self.tokens = tokens
        self.usd = usd
        self._lock = threading.Lock()
        self._spent_tokens = 0
        self._spent_usd = 0.0

    def reserve(self, prices: Prices | None) -> Reservation:
        """Before a request: raise once a limit is passed, else the reservation to `charge` when
        the response is in; its dollars are counted at `prices` (None: not counted)."""
        self.check()
        return Reservation(self, prices)

    def check(self) -> None:
        """Raise BudgetExceeded (CostBudgetExceeded) when the run has spent more than a limit."""
        with self._lock:
            tokens, usd = self._spent_tokens, self._spent_usd
        if tokens > self.tokens:
            raise BudgetExceeded(
                f"Used {tokens:,} tokens, over this run's budget of {self.tokens:,} "
                "(raise it with --max-budget-tokens)."
            )
        if self.usd is not None and usd > self.usd:
            raise CostBudgetExceeded(
                f"Spent ${usd:.4f}, over this run's budget of ${self.usd:.4f} "
                '(raise it with --max-budget-usd, or "maxBudgetUsd" in settings).'
            )

    def _add(self, usage: Usage, prices: Prices | None) -> None:
        cost = prices.cost_usd(usage) if prices is not None else 0.0
        with self._lock:
            self._spent_tokens += usage.total_input + usage.output_tokens
            self._spent_usd += cost


class Reservation:
    """One request allowed by the budget; `charge` it with what its response used."""

    def __init__(self, budget: Budget, prices: Prices | None) -> None:
        self._budget = budget
        self._prices = prices

    def charge(self, usage: Usage) -> None:
        self._budget._add(usage, self._prices)
