"""The fast path, measured as a user runs agentcli: the installed command against the test fake
server on 127.0.0.1, which answers at once (zero latency), so what is timed is agentcli itself.

- `--version` against a bare `python -c pass`;
- `run "hi"`: launch to the first request arriving at the server, and the run's CPU time;
- CPU of sessions of 10, 50, 100 and 200 steps (each step: a Read, then the next request),
  fitted to a + b·n + c·n², giving the cost of one step at step 10 and at step 200;
- peak memory (max RSS) of a 50-step run;
- 20 runs of 5 steps started together on this machine's cores;
- the REPL: launch to the prompt on screen, and Enter (typed at first paint) to the request;
- Claude Code's launch to first request, when `claude` can be found (bench/peers or PATH).

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
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, reply, text, tool_use
from tests.terminal import Terminal

AGENTCLI = str(Path(sys.executable).parent / "agentcli")
KEY = "bench-key"
PEERS = Path(__file__).resolve().parent.parent.parent / "peers"


def claude_binary() -> str | None:
    local = PEERS / "node_modules" / ".bin" / "claude"
    return str(local) if local.exists() else shutil.which("claude")


class Workspace:
    """A throw-away project and home, and the environment a run gets."""

    def __init__(self, api: FakeAnthropic) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="agentcli-bench-"))
        self.project = self.root / "project"
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        (self.project / "notes.txt").write_text("a small file\n")
        self.home = self.root / "home"
        (self.home / ".agentcli").mkdir(parents=True)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTCLI_", "CLAUDE"))}
        self.env.update(
            HOME=str(self.home),
            AGENTCLI_HOME=str(self.home / ".agentcli"),
            ANTHROPIC_API_KEY=KEY,
            ANTHROPIC_BASE_URL=api.url,
            NO_COLOR="1",
            TERM="dumb",
        )

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def steps(n: int) -> list[Reply]:
    """n model turns: n-1 that Read a small file (each asking for a different limit, so the
    no-progress watch does not stop the run), then the answer."""
    reads = [reply(tool_use("Read", {"file_path": "notes.txt", "limit": i + 1}, id=f"toolu_{i}")) for i in range(n - 1)]
    return [*reads, reply(text("done"))]


def run_child(argv: Sequence[str], workspace: Workspace, api: FakeAnthropic | None = None) -> tuple[float, float, int]:
    """(wall s, CPU s, max RSS KB) of one child process run to its end (which, with `api`, must
    have used every scripted reply: a leftover would skew the next measure)."""
    began = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=workspace.project, env=workspace.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - began
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} failed ({proc.returncode}): {proc.stderr.read().decode() if proc.stderr else ''}")
    if api is not None and api.remaining:
        raise RuntimeError(f"{argv} left {api.remaining} scripted replies unused")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def first_request(argv: Sequence[str], api: FakeAnthropic, workspace: Workspace, replies: int = 1) -> float:
    """Launch to the first request arriving at the server (`replies`: answers to script, for a
    program that makes more requests than one per answer)."""
    api.script(*[reply(text("hi")) for _ in range(replies)])
    seen = len(api.requests)
    began = time.monotonic()
    subprocess.run(argv, cwd=workspace.project, env=workspace.env, capture_output=True, timeout=120, check=False)
    if len(api.requests) <= seen:
        raise RuntimeError(f"{argv[0]} sent no request")
    return api.requests[seen].received_at - began


def summary(samples: Sequence[float], scale: float = 1000.0, unit: str = "ms") -> str:
    values = sorted(s * scale for s in samples)
    return f"{statistics.median(values):8.1f} {unit} (min {values[0]:.1f}, max {values[-1]:.1f})"


def interleaved(runs: int, *measures: Callable[[], float]) -> list[list[float]]:
    results: list[list[float]] = [[] for _ in measures]
    for _ in range(runs):
        for index, measure in enumerate(measures):
            results[index].append(measure())
    return results


def fit_quadratic(points: Sequence[tuple[int, float]]) -> tuple[float, float, float]:
    """Least-squares a + b·n + c·n² through (n, y) points (the normal equations, solved by Cramer's rule)."""
    sums = [sum(float(n) ** k for n, _ in points) for k in range(5)]
    rhs = [sum(float(n) ** k * y for n, y in points) for k in range(3)]
    matrix = [[sums[row + col] for col in range(3)] for row in range(3)]

    def det(m: list[list[float]]) -> float:
        return (
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        )

    whole = det(matrix)
    coefficients = []
    for col in range(3):
        replaced = [[rhs[row] if c == col else matrix[row][c] for c in range(3)] for row in range(3)]
        coefficients.append(det(replaced) / whole)
    a, b, c = coefficients
    return a, b, c


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="fewer runs and shorter sessions")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    figures: dict[str, Any] = {"runs": runs, "cpus": os.cpu_count(), "load": os.getloadavg()[0]}

    with FakeAnthropic(api_key=KEY) as api:
        workspace = Workspace(api)
        try:
            python = [sys.executable, "-c", "pass"]
            version, bare = interleaved(
                runs,
                lambda: run_child([AGENTCLI, "--version"], workspace)[0],
                lambda: run_child(python, workspace)[0],
            )
            figures["version_ms"] = statistics.median(version) * 1000
            figures["python_ms"] = statistics.median(bare) * 1000
            ratio = figures["version_ms"] / figures["python_ms"]
            print(f"--version              {summary(version)}  ({ratio:.2f} x python -c pass)")
            print(f"python -c pass         {summary(bare)}")

            measures: list[Callable[[], float]] = [lambda: first_request([AGENTCLI, "run", "hi"], api, workspace)]
            claude = claude_binary()
            peer_api = FakeAnthropic(api_key=KEY).__enter__()  # its own server: Claude Code's extra requests stay apart
            peer = Workspace(peer_api)
            peer.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
            if claude:
                claude_argv = [claude, "-p", "hi", "--allowedTools", "Read"]
                measures.append(lambda: first_request(claude_argv, peer_api, peer, replies=5))
            firsts = interleaved(runs, *measures)
            peer.close()
            peer_api.__exit__(None, None, None)
            figures["first_request_ms"] = statistics.median(firsts[0]) * 1000
            print(f"run hi → first request {summary(firsts[0])}")
            if claude:
                figures["claude_first_request_ms"] = statistics.median(firsts[1]) * 1000
                ratio = figures["first_request_ms"] / figures["claude_first_request_ms"]
                print(f"claude -p hi → request {summary(firsts[1])}  (agentcli {ratio:.2f} x Claude Code)")
            else:
                print("claude -p hi           not measured: Claude Code is not installed (npm, in ../peers)")

            cpu_hi = []
            for _ in range(runs):
                api.script(reply(text("hi")))
                cpu_hi.append(run_child([AGENTCLI, "run", "hi"], workspace, api)[1])
            figures["run_hi_cpu_ms"] = statistics.median(cpu_hi) * 1000
            print(f"run hi, CPU            {summary(cpu_hi)}")

            lengths = (10, 25, 50) if args.quick else (10, 50, 100, 200)
            points: list[tuple[int, float]] = []
            for n in lengths:
                samples = []
                for _ in range(1 if args.quick else 3):
                    api.script(*steps(n))
                    _, cpu, rss = run_child([AGENTCLI, "run", "read notes.txt many times"], workspace, api)
                    samples.append(cpu)
                    if n == 50:
                        figures["rss_50_steps_mb"] = rss / 1024
                points.append((n, statistics.median(samples)))
                print(f"{n:3d} steps, CPU         {statistics.median(samples) * 1000:8.1f} ms")
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

            figures["parallel_20x5_s"] = parallel_runs(api, workspace, 20, 5)
            print(f"20 parallel runs of 5  {figures['parallel_20x5_s']:8.2f} s")

            paint, enter = repl_timings(api, workspace, runs)
            figures["repl_paint_ms"] = statistics.median(paint) * 1000
            figures["repl_enter_to_request_ms"] = statistics.median(enter) * 1000
            print(f"REPL prompt painted    {summary(paint)}")
            print(f"REPL Enter → request   {summary(enter)}")
        finally:
            workspace.close()
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


def parallel_runs(api: FakeAnthropic, workspace: Workspace, count: int, length: int) -> float:
    """Wall time for `count` runs of `length` steps started together (the fake answers by conversation length)."""

    def answer(request: RecordedRequest) -> Reply:
        turns = sum(1 for m in request.body.get("messages", []) if m.get("role") == "assistant")
        if turns + 1 < length:
            return reply(tool_use("Read", {"file_path": "notes.txt", "limit": turns + 1}, id=f"toolu_{turns}"))
        return reply(text("done"))

    api.script(*[answer] * (count * length))
    began = time.perf_counter()
    procs = [
        subprocess.Popen(
            [AGENTCLI, "run", "go"],
            cwd=workspace.project,
            env=workspace.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # 20 runs' progress lines would bury the table
        )
        for _ in range(count)
    ]
    failed = sum(1 for proc in procs if proc.wait() != 0)
    elapsed = time.perf_counter() - began
    if failed:
        raise SystemExit(f"{failed} of the {count} parallel runs failed: the figure would be meaningless.")
    return elapsed


def repl_timings(api: FakeAnthropic, workspace: Workspace, runs: int) -> tuple[list[float], list[float]]:
    env = dict(workspace.env, TERM="xterm-256color")
    env.pop("NO_COLOR")
    paint: list[float] = []
    enter: list[float] = []
    for _ in range(runs):
        api.script(reply(text("hello")))
        seen = len(api.requests)
        began = time.monotonic()
        terminal = Terminal([AGENTCLI], env=env, cwd=workspace.project, cols=120)
        try:
            terminal.wait_for("(shift-tab)")
            painted = time.monotonic()
            paint.append(painted - began)
            terminal.type("hi")
            sent = time.monotonic()
            terminal.press("enter")
            terminal.wait_for("hello")
            enter.append(api.requests[seen].received_at - sent)
        finally:
            terminal.close()
    return paint, enter


if __name__ == "__main__":
    main()
