"""Waiting for an event in a test: poll a condition up to a generous ceiling.

The ceiling only bounds how long a broken build takes to fail; nothing is asserted about how
long the wait took, so a busy machine makes a test slower, never red.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

CEILING = 30.0
"""Seconds: far longer than any event here takes on an idle machine, short enough to fail a hang."""


def wait_until(condition: Callable[[], bool], what: str, timeout: float = CEILING) -> None:
    """Return once `condition()` is true; fail with "`what` did not happen" after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout:g} s")
        time.sleep(0.01)


def alive(pid: int) -> bool:
    """Is the process `pid` running (not gone, not a zombie)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
