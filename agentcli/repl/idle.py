"""The REPL's idle notice: once the prompt has waited for the user a while after an answer, the
Notification hooks run with `notification_type: "idle_prompt"`, as in Claude Code.

`IdleWait` holds the decision (a deadline), `IdleWatch` it and one thread that waits for it;
the REPL tells it when a turn ended (`answered`), when the prompt goes up (`waiting`: the wait
starts, if a turn ended since the last prompt; the session's first prompt and one after a
built-in command wait for nothing), when a key is pressed there (`typed`: the wait starts
again), and when the prompt is gone (`busy`). It fires at most once per wait. The threshold is
the `idleNotificationSeconds` setting (Claude Code's is 60 s, fixed); the clock is injectable,
so the decision (`IdleWait.due`) is checked without waiting and without a thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from agentcli.bounds import MAX_SECONDS, Range
from agentcli.setting_keys import setting

IDLE_SETTING = setting("idleNotificationSeconds")
IDLE_SECONDS = Range("seconds", MAX_SECONDS)
DEFAULT_IDLE_SECONDS = 60.0
IDLE_MESSAGE = "agentcli is waiting for your input"
IDLE_TYPE = "idle_prompt"


def idle_threshold(value: object, source: object = "settings") -> float:
    """`idleNotificationSeconds` checked (None: 60). UsageError unless 0 to 86,400 seconds."""
    if value is None:
        return DEFAULT_IDLE_SECONDS
    return float(IDLE_SECONDS.checked(value, f"Setting {IDLE_SETTING} in {source}"))


class IdleWait:
    """The decision alone, with no thread (so a test moves the clock without racing one): when the
    wait for the user started, and whether it has passed its threshold."""

    def __init__(self, threshold: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._threshold = threshold
        self._clock = clock
        self._deadline: float | None = None
        self._answered = False

    def answered(self) -> None:
        """A turn ended (an answer, an error, an interrupt): the next prompt waits for the user."""
        self._answered = True

    def waiting(self) -> bool:
        """The prompt is up: after an answer, the wait starts now (True when it did)."""
        if not self._answered:
            return False
        self._answered = False
        self._deadline = self._clock() + self._threshold
        return True

    def typed(self) -> None:
        """A key was pressed at the prompt: the user is there, the wait starts again."""
        if self._deadline is not None:
            self._deadline = self._clock() + self._threshold

    def busy(self) -> None:
        """The prompt is gone (a message sent, a command run): nothing is waited for."""
        self._deadline = None

    def left(self) -> float | None:
        """Seconds until the wait passes its threshold (0 or less: it has); None: no wait."""
        return None if self._deadline is None else self._deadline - self._clock()

    def due(self) -> bool:
        """Has the wait passed its threshold? If so it is over: it fires once."""
        left = self.left()
        if left is None or left > 0:
            return False
        self._deadline = None
        return True


class IdleWatch:
    """An `IdleWait` and one thread that calls `on_idle` once it is due."""

    def __init__(
        self, threshold: float, on_idle: Callable[[], None], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._wait = IdleWait(threshold, clock)
        self._on_idle = on_idle
        self._closed = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def answered(self) -> None:
        with self._changed:
            self._wait.answered()

    def waiting(self) -> None:
        with self._changed:
            if not self._wait.waiting():
                return
            self._changed.notify()
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="idle-notification", daemon=True)
                self._thread.start()

    def typed(self) -> None:
        with self._changed:
            self._wait.typed()
            self._changed.notify()

    def busy(self) -> None:
        with self._changed:
            self._wait.busy()
            self._changed.notify()

    def close(self) -> None:
        """Stop watching (a hook already running finishes in its thread)."""
        with self._changed:
            self._closed = True
            self._wait.busy()
            self._changed.notify()

    def _watch(self) -> None:
        while True:
            with self._changed:
                if self._closed:
                    return
                left = self._wait.left()
                if left is None or left > 0:
                    self._changed.wait(left)
                    continue
                fire = self._wait.due()
            if fire:
                self._on_idle()
