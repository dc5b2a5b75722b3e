"""The local engine: a pool of worker processes on this machine (`agentcli.batch.worker`).

Each of the `workers` slots is a thread of the driver that owns one worker process, hands it
one job at a time, answers its requests for admission from the batch's gate and puts what
came of the job on the driver's queue of completions. A worker that dies (a crash, a kill)
takes down only its own task, which comes back as `error` with `error_class` `crashed`
(retried like any failure of the infrastructure); the slot starts a new worker for its next
job. Workers are started in a session of their own, so a Ctrl-C at the terminal reaches the
driver alone, which decides what the workers do (`interrupt`).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from agentcli.batch.admission import BatchGate
from agentcli.batch.attempt import Defaults, Finished
from agentcli.batch.results import TaskResult
from agentcli.batch.tasks import Task, task_json

LOG_TAIL = 2000
"""Characters of a dead worker's log quoted in its task's error."""


@dataclass(frozen=True)
class Job:
    task: Task
    attempt: int


@dataclass(frozen=True)
class Completion:
    """What came of a job: `finished` None when the batch was interrupted (no result to write)."""

    job: Job
    finished: Finished | None


class LocalPool:
    """`workers` worker processes; jobs go in with `submit`, completions come out on `completions`."""

    def __init__(self, workers: int, defaults: Defaults, gate: BatchGate, scratch: Path, cache: Path) -> None:
        self.capacity = workers
        self.completions: queue.Queue[Completion] = queue.Queue()
        # what the slots read:
        self.defaults = defaults.to_json()
        self.gate = gate
        self.scratch = scratch
        self.cache = cache
        self.jobs: queue.Queue[Job | None] = queue.Queue()
        self.interrupted = threading.Event()
        self._slots = [_Slot(self, number) for number in range(workers)]
        for slot in self._slots:
            slot.thread.start()

    def submit(self, task: Task, attempt: int) -> None:
        self.jobs.put(Job(task, attempt))

    def interrupt(self) -> None:
        """Stop the running tasks now (each worker stops as agentcli does on SIGTERM); they come
        back with no result."""
        self.interrupted.set()
        for slot in self._slots:
            slot.stop()

    def close(self) -> None:
        """End the workers once their jobs are done (the driver submits no more)."""
        for _ in self._slots:
            self.jobs.put(None)
        for slot in self._slots:
            slot.thread.join()


class _Slot:
    def __init__(self, pool: LocalPool, number: int) -> None:
        self.pool = pool
        self.number = number
        self.thread = threading.Thread(target=self._serve, name=f"agentcli-batch-slot-{number}", daemon=True)
        self._process: subprocess.Popen[bytes] | None = None
        self._lifeline: int | None = None
        self._writing = threading.Lock()
        self.log = pool.scratch / f"worker-{number}.log"

    def _serve(self) -> None:
        while (job := self.pool.jobs.get()) is not None:
            self.pool.completions.put(Completion(job, self._run(job)))
        self._end()

    def _run(self, job: Job) -> Finished | None:
        if self.pool.interrupted.is_set():
            return None
        process = self._worker()
        assert process.stdin is not None and process.stdout is not None
        scratch = self.pool.scratch / f"{job.task.id}.{job.attempt}"
        try:
            self._send(
                {
                    "task": task_json(job.task),
                    "attempt": job.attempt,
                    "scratch": str(scratch),
                    "cache": str(self.pool.cache),
                    "defaults": self.pool.defaults,
                }
            )
            finished = self._converse(job, process.stdout)
        except (OSError, ValueError):
            finished = None
        if finished is not None:
            return finished
        death = self._death()
        shutil.rmtree(scratch, ignore_errors=True)
        if self.pool.interrupted.is_set():
            return None
        return Finished(TaskResult(job.task.id, "error", error_class="crashed", error=death, attempts=job.attempt))

    def _converse(self, job: Job, replies: IO[bytes]) -> Finished | None:
        gate = self.pool.gate
        try:
            while line := replies.readline():
                message: dict[str, Any] = json.loads(line)
                if "acquire" in message:
                    threading.Thread(target=self._admit, args=(job.task.id,), daemon=True).start()
                elif "release" in message:
                    throttled, retry_after = message["release"]
                    gate.release(job.task.id, bool(throttled), retry_after)
                elif "spent" in message:
                    gate.report_spend(job.task.id, float(message["spent"]))
                elif "done" in message:
                    return Finished.from_json(message["done"])
        except (ValueError, KeyError, TypeError):
            pass  # not our protocol: the worker is broken, handled as a crash
        return None

    def _admit(self, task: str) -> None:
        """Answer a request for admission once the gate lets it go (outside the reading thread,
        which must go on hearing this worker's other requests end)."""
        denial = self.pool.gate.acquire(task)
        try:
            self._send({"admit": denial})
        except (OSError, ValueError, AssertionError):  # the worker is gone: its place is given back
            if denial is None:
                self.pool.gate.release(task, False, None)

    def _send(self, message: dict[str, Any]) -> None:
        with self._writing:
            process = self._process
            assert process is not None and process.stdin is not None
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()

    def _worker(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._end()
        read_end, write_end = os.pipe()
        try:
            with self.log.open("ab") as log:
                self._process = subprocess.Popen(
                    [sys.executable, "-m", "agentcli.batch.worker", str(read_end)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    start_new_session=True,
                    pass_fds=(read_end,),
                )
        finally:
            os.close(read_end)
        self._lifeline = write_end
        return self._process

    def stop(self) -> None:
        process = self._process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)

    def _end(self) -> None:
        """Close the worker (it exits at the end of its input) and wait for it."""
        process, self._process = self._process, None
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None
        if process is None:
            return
        with contextlib.suppress(OSError, ValueError):
            assert process.stdin is not None
            process.stdin.close()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def _death(self) -> str:
        """Why the worker's job came to nothing (it is waited for and closed first)."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()  # alive but speaking nonsense
        self._end()
        code = process.returncode if process is not None else None
        try:
            tail = self.log.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL:].strip()
        except OSError:
            tail = ""
        said = f" (exit code {code})" if code is not None else ""
        return f"The worker running the task died{said}. The end of its log ({self.log}):\n{tail}"
