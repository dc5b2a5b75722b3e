"""What a batch shows while it runs: a live line on a terminal, JSON lines otherwise.

On a terminal (stderr), one line redrawn as tasks start and end: done of total, passed,
failed (every status but passed), running, the batch's spend, and the time left estimated from
the mean time per finished task; each task that does not pass gets a line of its own above it.
Otherwise (a pipe, CI) one JSON object a line on stdout per event: `start`, `finished` (the
task's result line plus the running counts), `retry`, `notice` (what a task's session said, each
text once), `stopping`, and `summary` at the end.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from typing import IO, Any

from agentcli.batch.results import TaskResult


class Progress:
    """The batch's counts and how they are shown."""

    def __init__(self, total: int, already: int, *, live: bool, out: IO[str] | None = None) -> None:
        """`total`: tasks in the batch; `already`: those finished by an earlier run."""
        self.total = total
        self.done = already
        self.running = 0
        self.counts: Counter[str] = Counter()
        self.spent = 0.0
        self._live = live
        self._out = out or (sys.stderr if live else sys.stdout)
        self._started = time.monotonic()
        self._finished_here = 0
        self._noticed: set[str] = set()

    def start(self, workers: str, pending: int) -> None:
        if self._live:
            skipped = f", {self.done} already done" if self.done else ""
            self._line(f"{pending} task(s) to run{skipped}; {workers}.")
        else:
            self._json({"event": "start", "total": self.total, "pending": pending, "workers": workers})

    def task_started(self) -> None:
        self.running += 1
        self._redraw()

    def task_finished(self, result: TaskResult, spent: float) -> None:
        self.running -= 1
        self.done += 1
        self._finished_here += 1
        self.counts[result.status] += 1
        self.spent = spent
        if self._live:
            if result.status != "passed":
                why = f" ({result.error_class})" if result.error_class else ""
                self._line(f"{result.id}: {result.status}{why}")
            self._redraw()
        else:
            from dataclasses import asdict

            self._json({"event": "finished", **asdict(result), **self._figures()})

    def task_retried(self, result: TaskResult, attempt: int) -> None:
        self.running -= 1
        if self._live:
            self._line(f"{result.id}: {result.error_class}, trying again (attempt {attempt})")
            self._redraw()
        else:
            self._json({"event": "retry", "id": result.id, "error_class": result.error_class, "attempt": attempt})

    def notice(self, task: str, text: str) -> None:
        """What a task's session had to say (the sandbox could not start…), once per batch."""
        if text in self._noticed:
            return
        self._noticed.add(text)
        if self._live:
            self._line(f"{task}: {text}")
            self._redraw()
        else:
            self._json({"event": "notice", "id": task, "text": text})

    def stopping(self, why: str) -> None:
        if self._live:
            self._line(why)
            self._redraw()
        else:
            self._json({"event": "stopping", "why": why})

    def summary(self, not_started: int, folder: str) -> None:
        figures = self._figures()
        if not self._live:
            self._json({"event": "summary", **figures, "not_started": not_started, "out": folder})
            return
        counts = ", ".join(f"{count} {status}" for status, count in sorted(self.counts.items()))
        left = f"; {not_started} not started (run the same command again to run them)" if not_started else ""
        self._clear()
        self._out.write(
            f"{self.done}/{self.total} done ({counts or 'none run now'}), ${self.spent:.4f} spent{left}. "
            f"Results: {folder}/results.jsonl\n"
        )
        self._out.flush()

    def _figures(self) -> dict[str, Any]:
        return {
            "done": self.done,
            "total": self.total,
            "passed": self.counts["passed"],
            "failed": self._finished_here - self.counts["passed"],
            "running": self.running,
            "spent_usd": round(self.spent, 6),
            "eta_s": self._eta(),
        }

    def _eta(self) -> float | None:
        if not self._finished_here:
            return None
        per_task = (time.monotonic() - self._started) / self._finished_here
        return round(per_task * (self.total - self.done), 1)

    def _redraw(self) -> None:
        if not self._live:
            return
        figures = self._figures()
        eta = figures["eta_s"]
        left = f" · ~{_duration(eta)} left" if eta is not None else ""
        self._clear()
        self._out.write(
            f"{figures['done']}/{self.total} done · {figures['passed']} passed · {figures['failed']} failed · "
            f"{self.running} running · ${self.spent:.4f}{left}"
        )
        self._out.flush()

    def _line(self, text: str) -> None:
        self._clear()
        self._out.write(text + "\n")
        self._out.flush()

    def _clear(self) -> None:
        self._out.write("\r\x1b[K")

    def _json(self, event: dict[str, Any]) -> None:
        self._out.write(json.dumps(event) + "\n")
        self._out.flush()


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"
