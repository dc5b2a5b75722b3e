"""SIGTERM and SIGHUP end agentcli the way Ctrl-C does.

Their default action kills the process on the spot, leaving a running Bash command (in its
own process group, so the signal never reaches it) orphaned, and a tool call unanswered.
Instead, `handle_termination()` makes them raise `Terminated` in the main thread, a
KeyboardInterrupt that every interrupt path already turns into a clean stop; the process
then exits with 128 + the signal's number (143, 129), whatever path it took out.

`interrupts_deferred()` holds Ctrl-C, SIGTERM and SIGHUP back for the moment a child process
is started and not yet in the hands of the code that would kill it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from agentcli.errors import Terminated

TERMINATING = (signal.SIGTERM, signal.SIGHUP)
INTERRUPTING = (signal.SIGINT, *TERMINATING)

Handler = Callable[[int, FrameType | None], Any] | int | None
"""What `signal.signal` returns: the handler it replaced."""

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
        _restore(previous)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP that arrive within take effect as it ends (where the caller's
    `except` around the block catches them). Outside the main thread, which alone handles
    signals, it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    previous = {signum: signal.signal(signum, lambda number, frame: arrived.append(number)) for signum in INTERRUPTING}
    try:
        yield
    finally:
        _restore(previous)
        for number in dict.fromkeys(arrived):
            signal.raise_signal(number)


def _restore(previous: dict[signal.Signals, Handler]) -> None:
    for signum, handler in previous.items():
        if handler is not None:  # None: set outside Python, cannot be put back
            signal.signal(signum, handler)


def _raise(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise Terminated(signum, signal.Signals(signum).name)
