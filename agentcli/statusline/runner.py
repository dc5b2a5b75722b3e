"""Running the status line command in the background, and keeping the line it printed.

`refresh(payload)` asks for a run with the session as it is now; it never waits. One thread
runs the command (as a hook runs: `hooks.runner`, in the project folder, without the API keys
in its environment, killed with its process group at `setting.TIMEOUT_S`), at most once every
`MIN_INTERVAL_S`: refreshes asked for meanwhile make one run, with the latest payload. The
first line of what it printed, with its colours and nothing else (`safe_text.colours_only`),
is `line`, and `on_line` is told. A run that fails (exits with another status than 0, is
killed at its timeout, cannot start) leaves the line it showed before; the first failure is
said once, with the last line of its stderr.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path

from agentcli.contracts import JSON
from agentcli.hooks.runner import HookRun, run_hooks
from agentcli.safe_text import colours_only, for_terminal
from agentcli.statusline.setting import StatusLineCommand

MIN_INTERVAL_S = 0.3
"""The command runs at most this often (Claude Code's pace)."""
MAX_LINE_CHARS = 1_000
CLOSE_WAIT_S = 5.0


class StatusLineRunner:
    def __init__(
        self,
        config: StatusLineCommand,
        project: Path,
        passthrough: Collection[str],
        on_line: Callable[[], None],
        notify: Callable[[str], None],
    ) -> None:
        self.config = config
        self.project = project
        self.passthrough = passthrough
        self.on_line = on_line
        self.notify = notify
        self.line = ""
        """What the command printed last time it succeeded: its first line, colours kept; "" until then."""
        self._pending: JSON | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._failed_before = False
        self._group: int | None = None
        self._thread = threading.Thread(target=self._work, name="status-line", daemon=True)
        self._thread.start()

    def refresh(self, payload: JSON) -> None:
        """Run the command with `payload` on its stdin, soon (in the background)."""
        with self._lock:
            self._pending = payload
        self._wake.set()

    def close(self) -> None:
        """Stop: a run under way is killed with its process group."""
        self._closed.set()
        self._wake.set()
        self._kill()
        self._thread.join(CLOSE_WAIT_S)

    def _work(self) -> None:
        last_start = float("-inf")
        while True:
            self._wake.wait()
            if self._closed.wait(max(0.0, last_start + MIN_INTERVAL_S - time.monotonic())):
                return
            with self._lock:
                payload, self._pending = self._pending, None
                self._wake.clear()
            if payload is not None:
                last_start = time.monotonic()
                self._run(payload)

    def _run(self, payload: JSON) -> None:
        [run] = run_hooks([self.config.command], payload, self.project, self.passthrough, on_start=self._started)
        with self._lock:
            self._group = None
        if self._closed.is_set():
            return
        failure = _failure(run)
        if failure:
            if not self._failed_before:
                self._failed_before = True
                self.notify(
                    f"The status line command ({for_terminal(self.config.command.command)}) {failure}; "
                    "the status line keeps what it showed before. (Said once.)"
                )
            return
        first = run.stdout.split("\n", 1)[0][:MAX_LINE_CHARS]
        shown = colours_only(first)
        self.line = " " * self.config.padding + shown if shown else ""
        self.on_line()

    def _started(self, group: int) -> None:
        with self._lock:
            self._group = group
        if self._closed.is_set():
            self._kill()

    def _kill(self) -> None:
        with self._lock:
            group = self._group
        if group is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)


def _failure(run: HookRun) -> str:
    """What went wrong, for the notice ("" when nothing did)."""
    if run.failed_to_start:
        return f"could not start: {run.failed_to_start}"
    if run.timed_out:
        return f"was stopped after {run.hook.timeout:g} s"
    if run.exit_code != 0:
        lines = run.stderr.strip().splitlines()
        said = f": {for_terminal(lines[-1].strip())}" if lines else ""
        return f"failed (exit status {run.exit_code}){said}"
    return ""
