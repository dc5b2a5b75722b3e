"""Typed exceptions: how control leaves the loop, each carrying its user-facing message."""

from __future__ import annotations


class AgentcliError(Exception):
    """Base class; `str(error)` is what the user sees."""

    exit_code = 1


class UsageError(AgentcliError):
    """Bad flag, unknown /command, malformed settings: the user must change the invocation."""

    exit_code = 2


def _note_request_id(error: Exception, request_id: str | None) -> None:
    """A note shows in a traceback (`--verbose`) but not in `str(error)`, the line every user sees."""
    if request_id:
        error.add_note(f"Request id: {request_id} (quote it when you report this to the API's provider)")


class ModelAPIError(AgentcliError):
    """The API refused the request for good (400/401/403/404…), or retries ran out."""

    def __init__(
        self, message: str, *, status: int | None = None, hint: str = "", request_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.hint = hint
        self.request_id = request_id
        """The server's id for the failed response, when it sent one."""
        _note_request_id(self, request_id)

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
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.fault = fault
        """A few words for the retry line: `overloaded`, `connection dropped`…"""
        self.retry_after = retry_after
        """Seconds the server asked us to wait, if it said."""
        self.status = status
        self.hint = hint
        """What to do next, should the retries run out."""
        self.request_id = request_id
        """The server's id for the failed response, when it sent one."""
        _note_request_id(self, request_id)


class StopRun(AgentcliError):
    """The loop stopped before a natural end; `subtype` goes into json output."""

    subtype = "error_during_execution"


class MaxTurnsReached(StopRun):
    subtype = "error_max_turns"


class BudgetExceeded(StopRun):
    subtype = "error_max_budget"


class CostBudgetExceeded(BudgetExceeded):
    """The dollar budget (`--max-budget-usd`) rather than the token budget."""


class NoProgress(StopRun):
    pass


class ModelStopped(StopRun):
    """The model ended in a way we cannot continue from (refusal, context window full)."""


class StoppedByHook(StopRun):
    """A hook said `continue: false` (or blocked the prompt): the turn ends with its reason."""


class Halt(KeyboardInterrupt):
    """A stop that is not Ctrl-C but must end the run the way Ctrl-C does.

    A KeyboardInterrupt on purpose: every path that stops cleanly on Ctrl-C (a running
    command's process group killed, each tool call answered, the transcript left valid)
    handles these too. Front ends tell them apart by `exit_code`; `str(halt)` is what the
    user sees. Code that swallows Ctrl-C (a question answered "no") must let a Halt through.
    """

    exit_code = 130


class Cancelled(KeyboardInterrupt):
    """The agent's cancel event was set from outside its thread (the user interrupted the agent that
    started it): it stops as on Ctrl-C. Not a Halt: only the turn ends, not the program."""


class Terminated(Halt):
    """SIGTERM (exit 143) or SIGHUP (exit 129) arrived: a CI timeout, `kill`, a closed terminal."""

    def __init__(self, signum: int, name: str) -> None:
        super().__init__(f"Stopped by {name}.")
        self.signum = signum
        self.exit_code = 128 + signum


class OutputClosed(Halt):
    """Standard output cannot be written. The reader went away (`| head -1`, EPIPE): `quiet`,
    exit 141 as for a program killed by SIGPIPE. Anything else (`> /dev/full`, an I/O error):
    one line on stderr, exit 1."""

    def __init__(self, error: OSError) -> None:
        super().__init__(f"Could not write to standard output: {error.strerror or error}.")
        self.quiet = isinstance(error, BrokenPipeError)
        self.exit_code = 141 if self.quiet else 1
