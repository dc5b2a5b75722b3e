"""The fast path, measured as a user runs agentcli: the installed command against the test fake
server on 127.0.0.1, which answers at once (zero latency), so what is timed is agentcli itself.

- `--version` against a bare `python -c pass`;
- `run "hi"`: launch to the first request arriving at the server, and the run's CPU time;
- CPU of sessions of 10, 50, 100 and 200 steps (each step: a Read, then the next request),
  fitted to a + b·n + c·n², giving the cost of one step at step 10 and at step 200;
- peak memory (max RSS) of a 50-step run;
- 20 runs of 5 steps started together on this machine's cores;
- the REPL (in tmux): launch to the prompt on screen, and Enter (typed at first paint) to the request;
- Claude Code's launch to first request, found or installed as `bench/run` does (bench/peers.py).

The workspace, the fake server's rig, the child processes and the interleaving are bench/run's
(bench/common.py, bench/suite.py); this script keeps its own figures and its JSON keys.
Comparisons are interleaved (A B A B …) and reported as medians with min–max. Timings are
never asserted anywhere; this script only prints them.

Usage: .venv/bin/python bench/fast_path.py [--runs N] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import AGENTCLI, Figure, Finished, fit_quadratic, interleaved, run_child
from bench.peers import agentcli, claude_code
from bench.suite import Rig, first_request, install_tmux, parallel_runs, reads, repl_once, scripted


def session(rig: Rig, steps: int) -> Finished:
    """A run of `steps` model turns (steps - 1 Reads, then the answer), checked to have made
    every one: a run cut short would make its figure meaningless."""
    rig.respond = scripted(rig.harness, rig.workspace.project, reads(steps - 1), "done")
    seen = len(rig.api.requests)
    done = run_child(rig.argv("read notes.txt many times"), rig.workspace.project, rig.workspace.env)
    made = len(rig.main_requests(seen))
    if made != steps:
        raise RuntimeError(f"the {steps}-step run made {made} requests")
    return done


def summary(samples: list[float], scale: float = 1000.0, unit: str = "ms") -> str:
    return f"{Figure.of(samples, scale).text(f' {unit}'):>28}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="fewer runs and shorter sessions")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    figures: dict[str, Any] = {"runs": runs, "cpus": os.cpu_count(), "load": os.getloadavg()[0]}
    ours = Rig(agentcli())
    claude = claude_code(install=True)
    peer = Rig(claude) if claude.ok else None  # its own server: Claude Code's side requests stay apart
    try:
        w = ours.workspace
        python = [sys.executable, "-c", "pass"]
        timed = interleaved(
            runs,
            {
                "version": lambda: run_child([AGENTCLI, "--version"], w.project, w.env).wall,
                "python": lambda: run_child(python, w.project, w.env).wall,
            },
        )
        figures["version_ms"] = statistics.median(timed["version"]) * 1000
        figures["python_ms"] = statistics.median(timed["python"]) * 1000
        ratio = figures["version_ms"] / figures["python_ms"]
        print(f"--version              {summary(timed['version'])}  ({ratio:.2f} x python -c pass)")
        print(f"python -c pass         {summary(timed['python'])}")

        launches: dict[str, Callable[[], float]] = {"agentcli": partial(first_request, ours)}
        if peer is not None:
            launches["Claude Code"] = partial(first_request, peer)
        firsts = interleaved(runs, launches)
        figures["first_request_ms"] = statistics.median(firsts["agentcli"]) * 1000
        print(f"run hi → first request {summary(firsts['agentcli'])}")
        if peer is not None:
            figures["claude_first_request_ms"] = statistics.median(firsts["Claude Code"]) * 1000
            ratio = figures["first_request_ms"] / figures["claude_first_request_ms"]
            print(f"claude -p hi → request {summary(firsts['Claude Code'])}  (agentcli {ratio:.2f} x Claude Code)")
        else:
            print(f"claude -p hi           not measured: Claude Code {claude.status}")

        cpu_hi = [session(ours, 1).cpu for _ in range(runs)]
        figures["run_hi_cpu_ms"] = statistics.median(cpu_hi) * 1000
        print(f"run hi, CPU            {summary(cpu_hi)}")

        lengths = (10, 25, 50) if args.quick else (10, 50, 100, 200)
        points: list[tuple[int, float]] = []
        for n in lengths:
            runs_of_n = [session(ours, n) for _ in range(1 if args.quick else 3)]
            if n == 50:
                figures["rss_50_steps_mb"] = statistics.median(r.max_rss_kb for r in runs_of_n) / 1024
            cpu = statistics.median(r.cpu for r in runs_of_n)
            points.append((n, cpu))
            print(f"{n:3d} steps, CPU         {cpu * 1000:8.1f} ms")
        a, b, c = fit_quadratic(points)
        figures["step_cpu_ms_at_10"] = (b + 2 * c * 10) * 1000
        figures["step_cpu_ms_at_200"] = (b + 2 * c * 200) * 1000
        figures["step_cpu_growth_ms_per_step"] = 2 * c * 1000
        print(
            f"CPU per step           {figures['step_cpu_ms_at_10']:.2f} ms at step 10, "
            f"{figures['step_cpu_ms_at_200']:.2f} ms at step 200 (fit: {a * 1000:.0f} ms + {b * 1000:.2f} ms·n "
            f"+ {c * 1e6:.2f} µs·n²)"
        )
        if "rss_50_steps_mb" in figures:
            print(f"peak memory, 50 steps  {figures['rss_50_steps_mb']:8.1f} MB")

        figures["parallel_20x5_s"] = parallel_runs(ours, 20, 5)
        print(f"20 parallel runs of 5  {figures['parallel_20x5_s']:8.2f} s")

        if shutil.which("tmux") or install_tmux():
            screens = [repl_once(ours) for _ in range(runs)]
            paint, enter = [s[0] for s in screens], [s[2] for s in screens]
            figures["repl_paint_ms"] = statistics.median(paint) * 1000
            figures["repl_enter_to_request_ms"] = statistics.median(enter) * 1000
            print(f"REPL prompt painted    {summary(paint)}")
            print(f"REPL Enter → request   {summary(enter)}")
        else:
            print("REPL                   not measured: tmux is not installed and apt-get could not install it")
    finally:
        ours.close()
        if peer is not None:
            peer.close()
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
