"""`python -m agentcli.batch.worker`: a process of the local pool, running one task at a time.

It speaks JSON lines with the driver (`local_pool.LocalPool`), one object a line:

- on its stdin, a job: `{"task": …, "attempt": N, "scratch": PATH, "cache": PATH, "defaults": …}`,
  and, while the job runs, the answers to its requests for admission: `{"admit": null}` (go)
  or `{"admit": "budget"}` (the batch's budget is spent);
- on the stdout it was started with, `{"acquire": true}` before each model request,
  `{"release": [THROTTLED, RETRY_AFTER]}` after it, `{"spent": USD}` as the task spends, and
  `{"done": …}` (`attempt.Finished`) when the job is over. The process's own stdout is then
  moved to its stderr (the driver's log of it), so nothing else can break the protocol.

Its one argument is a file descriptor, the read end of a pipe whose write end only the driver
holds: when the driver dies, even by `kill -9`, it reads end-of-file and the worker stops the
way SIGTERM stops agentcli (the running command's process group killed), then exits.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import IO, Any

from agentcli.batch.admission import Denial
from agentcli.batch.attempt import Defaults, run_attempt
from agentcli.batch.tasks import task_from_json
from agentcli.signals import handle_termination


class PipeLink:
    """A task's `admission.Link` to the gate in the driver, over this process's pipes."""

    def __init__(self, replies: IO[bytes], messages: IO[str]) -> None:
        self._replies = replies
        self._messages = messages
        self._writing = threading.Lock()
        self._asking = threading.Lock()
        """One question at a time (sub-agents ask from their own threads); the others still tell."""

    def acquire(self) -> Denial | None:
        with self._asking:
            self.send({"acquire": True})
            line = self._replies.readline()
            if not line:
                raise SystemExit(1)  # the driver is gone
            answer: Denial | None = json.loads(line)["admit"]
            return answer

    def release(self, throttled: bool, retry_after: float | None) -> None:
        self.send({"release": [throttled, retry_after]})

    def report_spend(self, usd: float) -> None:
        self.send({"spent": usd})

    def send(self, message: dict[str, Any]) -> None:
        with self._writing:
            self._messages.write(json.dumps(message) + "\n")
            self._messages.flush()


def main() -> int:
    messages = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    _watch_lifeline(int(sys.argv[1]))
    link = PipeLink(sys.stdin.buffer, messages)
    with handle_termination():
        while line := sys.stdin.buffer.readline():
            job = json.loads(line)
            finished = run_attempt(
                task_from_json(job["task"]),
                Defaults.from_json(job["defaults"]),
                Path(job["scratch"]),
                Path(job["cache"]),
                link,
                job["attempt"],
            )
            link.send({"done": finished.to_json()})
    return 0


def _watch_lifeline(fd: int) -> None:
    def watch() -> None:
        try:
            while os.read(fd, 1):
                pass
        except OSError:
            pass
        os.kill(os.getpid(), signal.SIGTERM)  # stop as agentcli stops on SIGTERM
        threading.Event().wait(10)
        os._exit(1)

    threading.Thread(target=watch, name="agentcli-batch-lifeline", daemon=True).start()


if __name__ == "__main__":
    raise SystemExit(main())
