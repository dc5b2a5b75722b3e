"""SIGTERM and SIGHUP end agentcli the way Ctrl-C does.

Their default action kills the process on the spot, leaving a running Bash command (in its
own process group, so the signal never reaches it) orphaned, and a tool call unanswered.
Instead, `handle_termination()` makes them raise `Terminated` in the main thread, a
KeyboardInterrupt that every interrupt path already turns into a clean stop; the process
then exits with 128 + the signal's number (143, 129), whatever path it took out.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from agentcli.errors import Terminated

TERMINATING = (signal.SIGTERM, signal.SIGHUP)

_received: list[int] = []


@contextmanager
def handle_termination() -> Iterator[None]:
    """Within: SIGTERM and SIGHUP raise `Terminated`; once one has arrived, whatever leaves the
    block (an exit, an error while stopping) becomes exit 128 + its number, without a traceback."""
    previous = {signum: signal.signal(signum, _raise) for signum in TERMINATING}
    try:
        yield
    except BaseException:  # after a signal, also a Terminated nothing caught, or an error while stopping
        if _received:  # (writing to a terminal that hung up fails, say)
            raise SystemExit(128 + _received[0]) from None
        raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _raise(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise Terminated(signum, signal.Signals(signum).name)
