"""`--ray [ADDRESS]`: the batch's tasks as Ray tasks on a Ray cluster (the optional `ray` extra).

Ray is imported here only, and only with `--ray`: `ray_engine` says plainly what to install
when it is missing. `--ray` alone starts a cluster on this machine (`ray.init(num_cpus=N)`,
its workers given this process's environment); `--ray ADDRESS` joins a running one (`auto`,
`host:port`, `ray://host:port`), whose nodes need agentcli installed and the provider's
credentials in their own environment (the driver sends no API key across the cluster).

Each task is one Ray task (`num_cpus=1`, not retried by Ray: the driver retries failures of
the infrastructure itself) that runs `attempt.run_attempt` in a scratch folder of the node's
temporary folder and returns the `Finished` result; the driver alone writes `DIR`. A task
whose workspace is a git URL runs on any node; a local `workdir` or `repo` path must be on a
filesystem every node shares. The batch's gate (`admission.BatchGate`: shared backoff, the
batch's budget) runs in one threaded actor that every task's requests wait on; the driver's
own gate counts the finished tasks' spend to decide whether to start more.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import tempfile
import threading
from pathlib import Path
from typing import Any

from agentcli.batch.admission import BatchGate, Denial
from agentcli.batch.attempt import Defaults, Finished, run_attempt
from agentcli.batch.driver import Engine, EngineFactory, own_temporary_folder
from agentcli.batch.local_pool import Completion, Job
from agentcli.batch.results import TaskResult
from agentcli.batch.tasks import Task, task_from_json, task_json
from agentcli.cli.options import RAY_LOCAL
from agentcli.errors import UsageError

NOT_INSTALLED = (
    "--ray needs Ray, which is not installed here: pip install 'agentcli[ray]' (or pip install ray) "
    "and run again, or leave out --ray to run the tasks on this machine's local pool."
)
CONNECT_TIMEOUT_S = 10.0
"""How long `--ray HOST:PORT` waits for the cluster's head to answer before saying it does not."""
WAIT_S = 0.5
"""How long the collecting thread waits on Ray before looking for new tasks and the end."""


def ray_engine(address: str, workers: int | None, defaults: Defaults) -> tuple[EngineFactory, str]:
    """The factory of the Ray engine and its name for the user; UsageError when Ray is missing."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:  # the extra; imported only once the engine is made
        raise UsageError(NOT_INSTALLED)
    if address != RAY_LOCAL:
        _check_reachable(address)
    if address == RAY_LOCAL:
        from agentcli.batch.command import default_workers

        cpus = workers or default_workers()[0]
        name = f"a local Ray cluster of {cpus} CPUs"
    else:
        cpus = None
        name = f"the Ray cluster at {address}"

    def make(gate: BatchGate, scratch: Path, cache: Path) -> Engine:
        return RayEngine(address, cpus, workers, defaults, gate)

    return make, name


def _check_reachable(address: str) -> None:
    """UsageError when nothing answers at a `host:port` address (Ray itself would wait for ever)."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # `auto`, or a form Ray reads itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as error:
        raise UsageError(
            f"Nothing answers at the Ray cluster's address {address} ({error}): start its head there "
            "(ray start --head), give its right address, or use --ray alone for a cluster on this machine."
        ) from None


class RayEngine:
    """Tasks submitted as Ray tasks; a thread collects them as they end."""

    def __init__(
        self, address: str, cpus: int | None, workers: int | None, defaults: Defaults, gate: BatchGate
    ) -> None:
        import ray

        self._ray: Any = ray  # typed loosely: the checks pass with Ray installed or not
        self._started_here = address == RAY_LOCAL
        try:
            self._ray.init(
                address=None if self._started_here else address,
                num_cpus=cpus,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=True,
                logging_level=logging.WARNING,
            )
        except (ConnectionError, ValueError, RuntimeError) as error:
            raise UsageError(f"Cannot reach the Ray cluster at {address}: {error}") from None
        cluster_cpus = int(self._ray.cluster_resources().get("CPU", 1))
        self.capacity = workers or cluster_cpus
        self.completions: queue.Queue[Completion] = queue.Queue()
        self._defaults = defaults.to_json()
        actor = self._ray.remote(max_concurrency=1000, num_cpus=0)(GateActor)
        self._gate = actor.remote(gate.budget_usd, gate.spent())
        self._remote = self._ray.remote(num_cpus=1, max_retries=0)(run_remote)
        self._running: dict[Any, Job] = {}
        self._lock = threading.Lock()
        self._interrupted = threading.Event()
        self._closed = threading.Event()
        self._collector = threading.Thread(target=self._collect, name="agentcli-batch-ray", daemon=True)
        self._collector.start()

    def submit(self, task: Task, attempt: int) -> None:
        ref = self._remote.remote(task_json(task), attempt, self._defaults, self._gate)
        with self._lock:
            self._running[ref] = Job(task, attempt)

    def interrupt(self) -> None:
        self._interrupted.set()
        with self._lock:
            refs = list(self._running)
        for ref in refs:
            with contextlib.suppress(Exception):
                self._ray.cancel(ref, force=True)

    def close(self) -> None:
        self._closed.set()
        self._collector.join()
        if self._started_here:
            self._ray.shutdown()

    def _collect(self) -> None:
        while not self._closed.is_set():
            with self._lock:
                refs = list(self._running)
            if not refs:
                self._closed.wait(WAIT_S / 10)
                continue
            done, _ = self._ray.wait(refs, num_returns=1, timeout=WAIT_S)
            for ref in done:
                with self._lock:
                    job = self._running.pop(ref)
                self.completions.put(Completion(job, self._finished(job, ref)))

    def _finished(self, job: Job, ref: Any) -> Finished | None:
        try:
            return Finished.from_json(self._ray.get(ref))
        except Exception as error:  # the task's worker died, or the task was cancelled
            self._gate.finish.remote(job.task.id, 0.0)  # the places its requests held, if any
            if self._interrupted.is_set():
                return None
            message = f"The Ray task running it failed: {type(error).__name__}: {error}"
            return Finished(
                TaskResult(job.task.id, "error", error_class="crashed", error=message, attempts=job.attempt)
            )


class GateActor:
    """The batch's `BatchGate` as a Ray actor (threaded: many tasks' requests wait in it at once)."""

    def __init__(self, budget_usd: float | None, spent_before: float) -> None:
        self._gate = BatchGate(budget_usd=budget_usd, spent_before=spent_before)

    def acquire(self, task: str) -> Denial | None:
        return self._gate.acquire(task)

    def release(self, task: str, throttled: bool, retry_after: float | None) -> None:
        self._gate.release(task, throttled, retry_after)

    def report_spend(self, task: str, usd: float) -> None:
        self._gate.report_spend(task, usd)

    def finish(self, task: str, usd: float) -> None:
        self._gate.finish(task, usd)


class ActorLink:
    """A task's `admission.Link` to the gate actor."""

    def __init__(self, gate: Any, task: str) -> None:
        import ray

        self._ray: Any = ray
        self._gate = gate
        self._task = task

    def acquire(self) -> Denial | None:
        denial: Denial | None = self._ray.get(self._gate.acquire.remote(self._task))
        return denial

    def release(self, throttled: bool, retry_after: float | None) -> None:
        self._gate.release.remote(self._task, throttled, retry_after)

    def report_spend(self, usd: float) -> None:
        self._gate.report_spend.remote(self._task, usd)


def run_remote(raw_task: dict[str, Any], attempt: int, raw_defaults: dict[str, Any], gate: Any) -> dict[str, Any]:
    """One attempt, in a Ray worker: a scratch folder of the node's own (beside the node's other
    attempts', all hidden from each task's sandbox), the result sent back."""
    task = task_from_json(raw_task)
    root = Path(tempfile.gettempdir())
    scratch = Path(tempfile.mkdtemp(prefix=f"{task.id}-", dir=own_temporary_folder("agentcli-batch-attempts")))
    scratch.rmdir()  # run_attempt makes it
    finished = run_attempt(
        task,
        Defaults.from_json(raw_defaults),
        scratch,
        root / "agentcli-batch-cache",
        ActorLink(gate, task.id),
        attempt,
    )
    gate.finish.remote(task.id, finished.result.cost_usd)
    return finished.to_json()
