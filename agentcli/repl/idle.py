"""The REPL's idle notice: once the prompt has waited for the user a while after an answer, the
Notification hooks run with `notification_type: "idle_prompt"`, as in Claude Code.

`IdleWatch` holds a deadline and one thread that waits for it; the REPL tells it when a turn
ended (`answered`), when the prompt goes up (`waiting`: the wait starts, if a turn ended since
the last prompt; the session's first prompt and one after a built-in command wait for nothing),
when a key is pressed there (`typed`: the wait starts again), and when the prompt is gone
(`busy`). It fires at most once per wait. The threshold is
the `idleNotificationSeconds` setting (Claude Code's is 60 s, fixed); the clock is injectable,
so the decision (`due`) is checked without waiting.
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


class IdleWatch:
    """Calls `on_idle` (in its own thread) once the user has been waited for `threshold` seconds."""

    def __init__(
        self, threshold: float, on_idle: Callable[[], None], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._threshold = threshold
        self._on_idle = on_idle
        self._clock = clock
        self._deadline: float | None = None
        self._answered = False
        self._closed = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def answered(self) -> None:
        """A turn ended (an answer, an error, an interrupt): the next prompt waits for the user."""
        with self._changed:
            self._answered = True

    def waiting(self) -> None:
        """The prompt is up: after an answer, the wait starts now."""
        with self._changed:
            if not self._answered:
                return
            self._answered = False
            self._deadline = self._clock() + self._threshold
            self._changed.notify()
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="idle-notification", daemon=True)
                self._thread.start()

    def typed(self) -> None:
        """A key was pressed at the prompt: the user is there, the wait starts again."""
        with self._changed:
            if self._deadline is not None:
                self._deadline = self._clock() + self._threshold
                self._changed.notify()

    def busy(self) -> None:
        """The prompt is gone (a message sent, a command run): nothing is waited for."""
        with self._changed:
            self._deadline = None
            self._changed.notify()

    def due(self) -> bool:
        """Has the wait passed its threshold? If so it is over: it fires once."""
        with self._changed:
            if self._deadline is None or self._clock() < self._deadline:
                return False
            self._deadline = None
            return True

    def close(self) -> None:
        """Stop watching (a hook already running finishes in its thread)."""
        with self._changed:
            self._closed = True
            self._deadline = None
            self._changed.notify()

    def _watch(self) -> None:
        while True:
            with self._changed:
                if self._closed:
                    return
                if self._deadline is None:
                    self._changed.wait()
                    continue
                left = self._deadline - self._clock()
                if left > 0:
                    self._changed.wait(left)
                    continue
            if self.due():
                self._on_idle()
