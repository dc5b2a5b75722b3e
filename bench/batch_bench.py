"""`agentcli batch`: wall time by number of workers, the driver's cost per task, Ray beside the pool.

A batch of N five-step tasks (four Write calls, then the answer: five requests each) runs against
the fake Anthropic server, which is served from a child process so that this process is the
driver alone: its CPU time (`time.process_time`: the driver's threads, not the worker processes)
divided by the tasks is the driver's overhead per task. Reported:

- wall time of the batch with 1, 2 and 4 local workers, side by side in one run;
- the driver's CPU per task, and its peak memory (max RSS) over a bare import of the driver;
- the driver's memory for 10,000 queued tasks against 100 (Python's allocations at their
  peak, `tracemalloc`): the task list read, the resume check against a results.jsonl of as
  many lines, the queue;
- with `--ray` (Ray installed): the same batch on a local Ray cluster of 2 CPUs beside 2 local
  workers (the cluster's start apart), as a ratio of wall time per task.

Usage: .venv/bin/python bench/batch_bench.py [--tasks N] [--ray] [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

STEPS = 5


def serve(port_out: Any) -> None:
    """The fake server, in a child process, answering any number of five-step tasks."""
    from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, reply, text, tool_use

    def answer(request: RecordedRequest) -> Reply:
        turns = sum(1 for message in request.body["messages"] if message["role"] == "assistant")
        if turns < STEPS - 1:
            return reply(tool_use("Write", {"file_path": f"step{turns}.txt", "content": "x\n"}))
        return reply(text("done"))

    api = FakeAnthropic().start()
    api.script(*[answer] * 1_000_000)
    port_out.send(api.url)
    threading_event = __import__("threading").Event()
    threading_event.wait()


def tasks_file(folder: Path, count: int) -> Path:
    (folder / "src").mkdir(exist_ok=True)
    lines = [
        json.dumps({"id": f"t{n}", "prompt": "five steps", "workdir": "src", "check": "test -f step3.txt"})
        for n in range(count)
    ]
    path = folder / f"tasks-{count}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def run(tasks: Path, out: Path, engine: str, workers: int, options: Any = None) -> dict[str, float]:
    """The batch of `tasks` into `out` (`options`: the batch's `SessionOptions`, by default Write allowed)."""
    from agentcli.batch.admission import BatchGate
    from agentcli.batch.attempt import Defaults
    from agentcli.batch.command import BatchRequest, _engine
    from agentcli.batch.driver import BatchPlan, Engine, run_batch
    from agentcli.batch.tasks import load_tasks
    from agentcli.session import SessionOptions

    options = options or SessionOptions(allowed_tools=["Write"])
    request = BatchRequest(tasks, out, options, workers=workers, ray="local" if engine == "ray" else None)
    make, name = _engine(request, Defaults(session=options))
    plan = BatchPlan(load_tasks(tasks), out, engine_name=name)
    engine_start: list[float] = []

    def timed_make(gate: BatchGate, scratch: Path, cache: Path) -> Engine:
        started = time.perf_counter()
        made = make(gate, scratch, cache)
        engine_start.append(time.perf_counter() - started)
        return made

    started_cpu, started = time.process_time(), time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # the progress lines
        code = run_batch(plan, timed_make, progress_live=False)
    wall, cpu = time.perf_counter() - started - engine_start[0], time.process_time() - started_cpu
    assert code == 0, f"the batch did not pass ({engine}, {workers}): see {out}"
    return {
        "wall_s": round(wall, 2),
        "engine_start_s": round(engine_start[0], 2),
        "driver_cpu_ms_per_task": round(1000 * cpu / len(plan.tasks), 2),
    }


def queued_memory_mb(folder: Path, count: int) -> float:
    """The driver's memory for `count` queued tasks: read, checked against as many results, queued."""
    import subprocess

    script = f"""
import sys, tracemalloc
sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
from collections import deque
from pathlib import Path
from agentcli.batch.driver import run_batch
from agentcli.batch.results import ResultLog
from agentcli.batch.tasks import load_tasks
tracemalloc.start()
tasks = load_tasks(Path({str(tasks_file(folder, count))!r}))
with ResultLog.open(Path({str(folder / f"queued-{count}")!r})) as log:
    pending = deque((task, 1) for task in tasks if task.id not in log.finished)
    print(tracemalloc.get_traced_memory()[1] / 2**20)
"""
    out = folder / f"queued-{count}"
    out.mkdir()
    (out / "results.jsonl").write_text(
        "".join(json.dumps({"id": f"done{n}", "status": "passed", "cost_usd": 0.01}) + "\n" for n in range(count))
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return round(float(done.stdout.strip()), 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--ray", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import os

    server, url = start_server(serve)
    os.environ.update({"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "bench-key"})
    figures: dict[str, Any] = {"tasks": args.tasks, "steps": STEPS}
    with tempfile.TemporaryDirectory(prefix="agentcli-batch-bench-") as temp:
        folder = Path(temp)
        os.environ["AGENTCLI_HOME"] = str(folder / "home")
        tasks = tasks_file(folder, args.tasks)
        import agentcli.batch.driver  # noqa: F401  (the driver's own imports before the baseline)

        base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        for workers in (1, 2, 4):
            figures[f"local.{workers}"] = run(tasks, folder / f"local-{workers}", "local", workers)
        figures["driver_peak_rss_mb_over_import"] = round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base_rss, 1
        )
        if args.ray:
            figures["ray.2"] = run(tasks, folder / "ray-2", "ray", 2)
            figures["ray_over_local.2"] = round(figures["ray.2"]["wall_s"] / figures["local.2"]["wall_s"], 2)
        for count in (100, 10_000):
            figures[f"queued.{count}.mb"] = queued_memory_mb(folder, count)
    server.terminate()
    report(figures, args.json)


def start_server(serve_in_child: Callable[..., None], *args: Any) -> tuple[multiprocessing.Process, str]:
    """`serve_in_child(pipe, *args)` in a child process, and the URL it sends back on the pipe."""
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.Process(target=serve_in_child, args=(child, *args), daemon=True)
    server.start()
    return server, parent.recv()


def report(figures: dict[str, Any], path: Path | None) -> None:
    """The figures on stdout, and in `path` (`--json`) when given."""
    print(json.dumps(figures, indent=2))
    if path:
        path.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
