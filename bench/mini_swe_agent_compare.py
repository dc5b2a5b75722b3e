"""`agentcli batch` beside mini-swe-agent on the same five-step tasks, against the same fake server.

mini-swe-agent's batch mode proper (`mini-extra swebench`) needs SWE-bench's instances and a
Docker (or Singularity) image per task; this machine has neither. What this runs of it is what
that batch mode runs per instance: its `DefaultAgent` with its `LocalEnvironment` and its text
model (`LitellmTextbasedModel`, the `mini_textbased.yaml` configuration: one ```mswea_bash_command
block an answer, ending with `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`), one agent per task in a
thread pool of 1, 2 and 4 workers, as its batch mode runs instances in threads.

Both talk to one fake OpenAI-compatible server (`tests/fake_openai.py`, in a child process): each
task is four commands (`echo x > stepN.txt`) and then the end (agentcli: four Bash tool calls and
a final answer; mini-swe-agent: four command blocks and its submit command), five requests each.
agentcli runs `agentcli batch` (this process as the driver, its local pool of worker processes)
with `--provider openai --allowed-tools Bash`; each of its tasks also gets what mini-swe-agent's
loop does not do: a copy of `src/` with a git baseline, the check `test -f step3.txt`, the final
diff, a transcript and a result line (`agentcli.bookkeeping_cpu_ms_per_task`: the copy, git and
the check alone). mini-swe-agent's tasks get a copy of `src/` each.

Reported for each, with 1, 2 and 4 workers: wall time of the 200 tasks and harness CPU per task
(every process of the harness and the commands they ran: agentcli's driver, its workers and
their start-up; mini-swe-agent's process, with and without its start-up, the import of litellm;
never the server's).

mini-swe-agent is never a dependency of agentcli: it lives in a virtual environment of its own,
the one `bench/run` compares with (`bench/peers.py`: made under bench/.peers/mini-swe-agent from
PyPI when missing; `AGENTCLI_BENCH_MINI=/path/to/mini` uses another), or `--mini-python PATH`.

Usage: .venv/bin/python bench/mini_swe_agent_compare.py [--tasks N] [--mini-python PATH] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.batch_bench import report, start_server, tasks_file
from bench.batch_bench import run as run_agentcli_batch
from bench.peers import mini_swe_agent_python

STEPS = 5
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"

MINI_RUNNER = r"""
import json, os, resource, shutil, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

url, count, workers, src, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), Path(sys.argv[5])
import yaml
from minisweagent.agents.default import DefaultAgent
from minisweagent.config import get_config_path
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel

config = yaml.safe_load(get_config_path("mini_textbased").read_text())
model_config = {**config["model"], "model_name": "openai/bench-model", "cost_tracking": "ignore_errors"}
model_config["model_kwargs"] = {**model_config.get("model_kwargs", {}), "api_base": url, "api_key": "bench-key"}

def one(n):
    folder = work / f"t{n}"
    shutil.copytree(src, folder)
    agent = DefaultAgent(
        LitellmTextbasedModel(**model_config),
        LocalEnvironment(**{**config["environment"], "cwd": str(folder)}),
        **config["agent"],
    )
    result = agent.run("five steps")
    return result.get("exit_status") == "Submitted" and (folder / "step3.txt").exists()

def cpu():
    mine, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime

started_cpu, started = cpu(), time.perf_counter()
with ThreadPoolExecutor(workers) as pool:
    passed = sum(pool.map(one, range(count)))
wall, spent = time.perf_counter() - started, cpu() - started_cpu
print(json.dumps({"wall_s": wall, "cpu_s": spent, "passed": passed, "total_cpu_s": cpu()}))
"""
"""One batch of mini-swe-agent's agents in a thread pool, run by mini-swe-agent's own interpreter."""


def serve(port_out: Any, requests: int) -> None:
    """The fake server, in a child process: agentcli's requests (with tools) get tool calls,
    mini-swe-agent's (without) command blocks, four steps and then the end."""
    import threading

    from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, call, reply

    def answer(request: RecordedRequest) -> Reply:
        step = sum(1 for message in request.body["messages"] if message["role"] == "assistant")
        command = f"echo x > step{step}.txt"
        if request.body.get("tools"):
            if step < STEPS - 1:
                return reply(calls=[call("Bash", {"command": command}, id=f"call_{step}")])
            return reply("done")
        block = command if step < STEPS - 1 else SUBMIT
        return reply(f"THOUGHT: step {step}.\n\n```mswea_bash_command\n{block}\n```")

    api = FakeOpenAI().start()
    api.script(*[answer] * requests)
    port_out.send(api.url)
    threading.Event().wait()


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def agentcli_batch(tasks: Path, out: Path, workers: int, count: int) -> dict[str, float]:
    from agentcli.session import SessionOptions

    before = children_cpu()
    figures = run_agentcli_batch(
        tasks, out, "local", workers, SessionOptions(provider="openai", model="gpt-5", allowed_tools=["Bash"])
    )
    workers_cpu = children_cpu() - before  # the workers, reaped as the pool closes, and their commands
    driver_ms = figures["driver_cpu_ms_per_task"]
    return {
        "wall_s": figures["wall_s"],
        "harness_cpu_ms_per_task": round(driver_ms + 1000 * workers_cpu / count, 1),
        "driver_cpu_ms_per_task": driver_ms,
    }


def bookkeeping_ms_per_task(folder: Path, runs: int = 20) -> float:
    """CPU of what agentcli's batch does per task that mini-swe-agent's loop does not: the copy of
    `src/`, the git baseline, the final diff and the check (a shell), here and in git."""
    import shutil

    from agentcli.batch.tasks import load_tasks
    from agentcli.batch.workspaces import baseline, final_diff, make_workspace, run_shell, shell

    task = load_tasks(tasks_file(folder, 1))[0]
    before = time.process_time() + children_cpu()
    for n in range(runs):
        scratch = folder / f"bookkeeping-{n}"
        scratch.mkdir()
        workspace = make_workspace(task, scratch / "workspace", folder / "cache")
        baseline(workspace, scratch / "baseline.git")
        run_shell(shell("test -f step3.txt"), workspace, scratch / "check.log", 60)
        final_diff(workspace, scratch / "baseline.git")
        shutil.rmtree(scratch)
    return round(1000 * (time.process_time() + children_cpu() - before) / runs, 1)


def mini_batch(python: Path, url: str, folder: Path, workers: int, count: int) -> dict[str, float]:
    work = folder / f"mini-{workers}"
    work.mkdir()
    env = {**os.environ, "MSWEA_SILENT_STARTUP": "1", "MSWEA_GLOBAL_CONFIG_DIR": str(folder / "mini-config")}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # litellm would fetch its price list from the internet
    before, started = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [str(python), "-c", MINI_RUNNER, url, str(count), str(workers), str(folder / "src"), str(work)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    whole_wall, whole_cpu = time.perf_counter() - started, children_cpu() - before
    if done.returncode != 0:
        raise SystemExit(f"mini-swe-agent's run failed:\n{done.stderr[-3000:]}")
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said["passed"] == count, f"mini-swe-agent finished {said['passed']} of {count} tasks"
    return {
        "wall_s": round(said["wall_s"], 2),
        "harness_cpu_ms_per_task": round(1000 * said["cpu_s"] / count, 1),
        "wall_with_start_up_s": round(whole_wall, 2),
        "harness_cpu_ms_per_task_with_start_up": round(1000 * whole_cpu / count, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--mini-python", type=Path, help="mini-swe-agent's venv's python (default: bench/peers.py's)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.mini_python is None:
        found, status = mini_swe_agent_python(install=True)
        if found is None:
            raise SystemExit(f"mini-swe-agent: {status}")
        args.mini_python = Path(found)
    version = subprocess.run(
        [str(args.mini_python), "-c", "import importlib.metadata as m; print(m.version('mini-swe-agent'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    server, url = start_server(serve, 2 * 3 * STEPS * args.tasks + 100)  # two harnesses, three pool sizes
    os.environ.update({"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "bench-key"})
    figures: dict[str, Any] = {"tasks": args.tasks, "steps": STEPS, "mini_swe_agent": version}
    with tempfile.TemporaryDirectory(prefix="agentcli-mini-compare-") as temp:
        folder = Path(temp)
        os.environ["AGENTCLI_HOME"] = str(folder / "home")
        tasks = tasks_file(folder, args.tasks)
        for workers in (1, 2, 4):  # side by side, each pair close in time
            figures[f"agentcli.{workers}"] = agentcli_batch(tasks, folder / f"agentcli-{workers}", workers, args.tasks)
            figures[f"mini.{workers}"] = mini_batch(args.mini_python, url, folder, workers, args.tasks)
            ours, theirs = figures[f"agentcli.{workers}"], figures[f"mini.{workers}"]
            figures[f"agentcli_over_mini.{workers}"] = {
                "wall": round(ours["wall_s"] / theirs["wall_s"], 2),
                "wall_with_its_start_up": round(ours["wall_s"] / theirs["wall_with_start_up_s"], 2),
                "cpu": round(ours["harness_cpu_ms_per_task"] / theirs["harness_cpu_ms_per_task"], 2),
                "cpu_with_its_start_up": round(
                    ours["harness_cpu_ms_per_task"] / theirs["harness_cpu_ms_per_task_with_start_up"], 2
                ),
            }
            print(json.dumps({key: figures[key] for key in figures if key.endswith(f".{workers}")}), flush=True)
        figures["agentcli.bookkeeping_cpu_ms_per_task"] = bookkeeping_ms_per_task(folder)
    server.terminate()
    report(figures, args.json)


if __name__ == "__main__":
    main()
