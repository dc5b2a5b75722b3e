"""Typed exceptions: how control leaves the loop, each carrying its user-facing message."""

from __future__ import annotations


class AgentcliError(Exception):
    """Base class; `str(error)` is what the user sees."""

    exit_code = 1


class UsageError(AgentcliError):
    """Bad flag, unknown /command, malformed settings: the user must change the invocation."""

    exit_code = 2


class ModelAPIError(AgentcliError):
    """The API refused the request for good (400/401/403/404…), or retries ran out."""

    def __init__(self, message: str, *, status: int | None = None, hint: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.hint = hint

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base}\n{self.hint}" if self.hint else base


class TransientModelError(AgentcliError):
    """A fault worth retrying the turn for: an overloaded or rate-limited server, an error event
    inside a stream, a dropped stream (which ones: `agentcli.providers.retry`)."""

    def __init__(
        self,
        message: str,
        *,
        fault: str = "stream fault",
        retry_after: float | None = None,
        status: int | None = None,
        hint: str = "",
    ) -> None:
        super().__init__(message)
        self.fault = fault
        """A few words for the retry line: `overloaded`, `connection dropped`…"""
        self.retry_after = retry_after
        """Seconds the server asked us to wait, if it said."""
        self.status = status
        self.hint = hint
        """What to do next, should the retries run out."""


class StopRun(AgentcliError):
    """The loop stopped before a natural end; `subtype` goes into json output."""

    subtype = "error_during_execution"


class MaxTurnsReached(StopRun):
    subtype = "error_max_turns"


class BudgetExceeded(StopRun):
    subtype = "error_max_budget"


class NoProgress(StopRun):
    pass


class ModelStopped(StopRun):
    """The model ended in a way we cannot continue from (refusal, context window full)."""
