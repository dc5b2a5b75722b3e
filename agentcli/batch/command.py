"""`agentcli batch`: the command line's request, checked, turned into a plan and an engine."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from agentcli.batch.admission import BatchGate
from agentcli.batch.attempt import Defaults
from agentcli.batch.driver import BatchPlan, Engine, EngineFactory, run_batch
from agentcli.batch.tasks import load_tasks
from agentcli.errors import UsageError
from agentcli.output.streams import write_err
from agentcli.session import SessionOptions

DEFAULT_RETRIES = 1
MAX_DEFAULT_WORKERS = 8


@dataclass(frozen=True)
class BatchRequest:
    tasks: Path
    out: Path
    session: SessionOptions
    workers: int | None = None
    ray: str | None = None
    """A Ray cluster's address, `local` for one started here; None: the local pool."""
    budget_usd: float | None = None
    task_budget_usd: float | None = None
    retries: int | None = None


def default_workers() -> tuple[int, str]:
    """Tasks at once on this machine, and why: an agent mostly waits on the model, so two per
    CPU, at most `MAX_DEFAULT_WORKERS` (each session takes ~45 MB)."""
    cpus = os.cpu_count() or 1
    workers = min(2 * cpus, MAX_DEFAULT_WORKERS)
    return workers, f"{workers} local workers ({cpus} CPUs × 2, at most {MAX_DEFAULT_WORKERS}; --workers to change)"


def run_batch_command(request: BatchRequest) -> int:
    try:
        tasks = load_tasks(request.tasks)
        if request.tasks.is_dir():
            from agentcli.batch.harbor import NOTICE

            write_err(sys.stderr, NOTICE)
        defaults = Defaults(
            session=request.session,
            task_budget_usd=request.task_budget_usd,
            batch_budget_usd=request.budget_usd,
            hidden=(str(request.out.resolve()),),
        )
        make_engine, engine_name = _engine(request, defaults)
        plan = BatchPlan(
            tasks=tasks,
            out=request.out.resolve(),
            retries=DEFAULT_RETRIES if request.retries is None else request.retries,
            budget_usd=request.budget_usd,
            engine_name=engine_name,
        )
        return run_batch(plan, make_engine, progress_live=sys.stderr.isatty())
    except UsageError as error:
        write_err(sys.stderr, f"Error: {error}")
        return error.exit_code


def _engine(request: BatchRequest, defaults: Defaults) -> tuple[EngineFactory, str]:
    if request.ray is not None:
        from agentcli.batch.ray_engine import ray_engine

        return ray_engine(request.ray, request.workers, defaults)
    if request.workers is not None:
        workers, name = request.workers, f"{request.workers} local workers"
    else:
        workers, name = default_workers()

    def make(gate: BatchGate, scratch: Path, cache: Path) -> Engine:
        from agentcli.batch.local_pool import LocalPool

        return LocalPool(workers, defaults, gate, scratch, cache)

    return make, name
