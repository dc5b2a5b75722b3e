"""The batch's driver: which task runs next, on which engine, and the one writer of `DIR`.

`run_batch` opens the output folder (`results.ResultLog`: locked, what is finished read back),
and hands every task without a result to an engine (`local_pool.LocalPool`, or
`ray_engine.RayEngine`), at most `capacity` at a time. As each attempt comes back it writes
the task's files to `DIR/tasks/ID/` and then appends its line to `results.jsonl` (so a result
line always has its files; files without a line are from a task that will run again), or,
for a failure of the infrastructure (`attempt.RETRYABLE`) with retries left, queues it again.

It stops starting tasks once the batch's budget is spent (`admission.BatchGate`): a task
whose next request the spent budget stopped gets no result line (it runs again when the
command is run with a larger budget; what it had spent is not counted then), and on the
first Ctrl-C; a second Ctrl-C (or SIGTERM) stops the running tasks too, whose results are not
written: they run again next time. Either way the folder is left ready to resume.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import shutil
import stat
import tempfile
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from agentcli.batch.admission import BatchGate
from agentcli.batch.attempt import BATCH_BUDGET, RETRYABLE, Finished
from agentcli.batch.local_pool import Completion
from agentcli.batch.progress import Progress
from agentcli.batch.results import ResultLog
from agentcli.batch.tasks import Task
from agentcli.errors import UsageError

EXIT_ALL_PASSED, EXIT_NOT_ALL_PASSED, EXIT_INTERRUPTED = 0, 1, 130
TASKS_FOLDER = "tasks"
CACHE = ".cache"
WAIT_S = 0.2
"""How often the driver's wait for a completion wakes (Ctrl-C is seen at once regardless)."""


class Engine(Protocol):
    """Where the tasks run: `submit` a task, its `Completion` arrives on `completions`."""

    capacity: int
    completions: queue.Queue[Completion]

    def submit(self, task: Task, attempt: int) -> None: ...
    def interrupt(self) -> None: ...
    def close(self) -> None: ...


EngineFactory = Callable[[BatchGate, Path, Path], Engine]
"""Makes the engine from the gate, a scratch folder and a cache folder of this machine."""


@dataclass(frozen=True)
class BatchPlan:
    tasks: list[Task]
    out: Path
    retries: int = 0
    budget_usd: float | None = None
    engine_name: str = ""
    """What runs the tasks, as the user is told (`4 local workers (2 CPUs × 2)`)."""


def scratch_folder(out: Path) -> Path:
    """Where the batch at `out` makes its tasks' workspaces and its workers' logs: in the
    machine's temporary folder (each task's sandbox hides the others', `attempt.run_attempt`)."""
    return own_temporary_folder(f"agentcli-batch-{hashlib.sha256(str(out).encode()).hexdigest()[:16]}")


def own_temporary_folder(name: str) -> Path:
    """The folder `name` in the machine's temporary folder, made private (0700) if missing. One
    that is there and is not a folder of this user's (a link, or another user's on a shared
    machine, who could read or swap the tasks' files) is a UsageError."""
    path = Path(tempfile.gettempdir()) / name
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise UsageError(f"{path} is not a private folder of yours; remove it (or set TMPDIR) and run again.")
    return path


def _empty(folder: Path) -> None:
    """Remove what `folder` holds (it stays, private)."""
    for item in folder.iterdir():
        if item.is_dir() and not item.is_symlink():
            shutil.rmtree(item, ignore_errors=True)
        else:
            item.unlink(missing_ok=True)


def run_batch(plan: BatchPlan, make_engine: EngineFactory, progress_live: bool) -> int:
    """Run what is left of the batch; the exit code: 0 when every task has passed, 130 when
    interrupted, 1 otherwise (a task did not pass, or some were not started)."""
    with ResultLog.open(plan.out) as log:
        pending = deque((task, 1) for task in plan.tasks if task.id not in log.finished)
        progress = Progress(len(plan.tasks), len(plan.tasks) - len(pending), live=progress_live)
        progress.spent = log.spent
        scratch_root = scratch_folder(plan.out)
        _empty(scratch_root)  # what a killed driver's workers left
        scratch = scratch_root / uuid.uuid4().hex[:12]  # this run's own, whatever such workers still do
        scratch.mkdir()
        gate = BatchGate(budget_usd=plan.budget_usd, spent_before=log.spent)
        progress.start(plan.engine_name, len(pending))
        interrupted = False
        if pending:
            interrupted = _drive(plan, make_engine(gate, scratch, plan.out / CACHE), gate, log, pending, progress)
        _empty(scratch_root)
        not_started = sum(1 for task in plan.tasks if task.id not in log.finished)
        progress.summary(not_started, str(plan.out))
        if interrupted:
            return EXIT_INTERRUPTED
        all_passed = not_started == 0 and all(status == "passed" for status in log.finished.values())
        return EXIT_ALL_PASSED if all_passed else EXIT_NOT_ALL_PASSED


def _drive(
    plan: BatchPlan,
    engine: Engine,
    gate: BatchGate,
    log: ResultLog,
    pending: deque[tuple[Task, int]],
    progress: Progress,
) -> bool:
    """Run `pending` on `engine`; True when interrupted."""
    running = 0
    stopping = False
    interrupts = 0
    try:
        while True:
            try:
                while pending and running < engine.capacity and not stopping:
                    if gate.budget_spent():
                        stopping = True
                        progress.stopping(
                            f"The batch's budget of ${plan.budget_usd:.4f} is spent: no more tasks are started."
                        )
                        break
                    task, attempt = pending.popleft()
                    engine.submit(task, attempt)
                    running += 1
                    progress.task_started()
                if running == 0:
                    break
                try:
                    completion = engine.completions.get(timeout=WAIT_S)
                except queue.Empty:
                    continue
                running -= 1
                _completed(plan, completion, gate, log, pending, progress, stopping)
            except KeyboardInterrupt:
                interrupts += 1
                stopping = True
                if interrupts == 1:
                    progress.stopping(
                        "Stopping: no more tasks are started; the running ones finish "
                        "(Ctrl-C again stops them; their results are not kept)."
                    )
                else:
                    progress.stopping("Stopping the running tasks.")
                    engine.interrupt()
    finally:
        engine.close()
    return interrupts > 0


def _completed(
    plan: BatchPlan,
    completion: Completion,
    gate: BatchGate,
    log: ResultLog,
    pending: deque[tuple[Task, int]],
    progress: Progress,
    stopping: bool,
) -> None:
    task, attempt = completion.job.task, completion.job.attempt
    finished = completion.finished
    if finished is None:  # interrupted: no result, it runs again next time
        gate.finish(task.id, 0.0)
        progress.running -= 1
        return
    for text in finished.notices:
        progress.notice(task.id, text)
    result = finished.result
    gate.finish(task.id, result.cost_usd)
    if result.error_class == BATCH_BUDGET or (stopping and result.error_class == "crashed"):
        # cut short by the spent budget, or by the interrupt itself (a Ray worker the terminal's
        # Ctrl-C reached): no result, it runs again next time
        progress.running -= 1
        return
    if result.error_class in RETRYABLE and attempt <= plan.retries and not stopping:
        pending.appendleft((task, attempt + 1))
        progress.task_retried(result, attempt + 1)
        return
    _write_files(plan.out / TASKS_FOLDER / task.id, finished)
    log.append(result)
    progress.task_finished(result, gate.spent())


def _write_files(folder: Path, finished: Finished) -> None:
    """The task's files, replacing what an earlier, unfinished attempt left."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, text in finished.files.items():
        relative = PurePosixPath(name)
        if relative.is_absolute() or ".." in relative.parts:
            continue  # a worker names files inside the task's folder only
        path = folder.joinpath(*relative.parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
