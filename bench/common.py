"""What the benchmarks share: a throw-away workspace, child processes timed to the first request,
interleaved repetitions, and figures as median with min–max.

A figure is a `Figure`: the samples of one measure, summarised as {"median", "min", "max", "n"}
in the unit it was taken in. Compared commands are run by `interleaved` (A B A B …) so a change
of load hits them alike; a comparison is then the ratio of two medians from the same run.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AGENTCLI = str(Path(sys.executable).parent / "agentcli")
KEY = "bench-key"
CLEARED_PREFIXES = ("ANTHROPIC_", "AGENTCLI_", "CLAUDE", "OPENAI_", "GEMINI_", "MSWEA_", "LITELLM_")
"""Environment variables a benchmarked child never inherits (credentials, and settings that change behaviour)."""


@dataclass(frozen=True)
class Figure:
    """The samples of one measure, in one unit."""

    samples: tuple[float, ...]

    @classmethod
    def of(cls, samples: Sequence[float], scale: float = 1.0) -> Figure:
        if not samples:
            raise ValueError("a figure needs at least one sample")
        return cls(tuple(s * scale for s in samples))

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def as_json(self) -> dict[str, float | int]:
        return {"median": self.median, "min": min(self.samples), "max": max(self.samples), "n": len(self.samples)}

    def text(self, unit: str = "") -> str:
        if len(self.samples) == 1:
            return f"{_number(self.median)}{unit}"
        return f"{_number(self.median)}{unit} ({_number(min(self.samples))}–{_number(max(self.samples))})"


def _number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


class Workspace:
    """A throw-away project (a git repository with one small file) and home, and the environment
    a benchmarked child gets: no inherited credentials, the fake server at `api_url` as the API."""

    def __init__(self, api_url: str, prefix: str = "agentcli-bench-") -> None:
        self.root = Path(tempfile.mkdtemp(prefix=prefix))
        self.project = self.root / "project"
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        (self.project / "notes.txt").write_text("a small file\n" * 400)
        self.home = self.root / "home"
        (self.home / ".agentcli").mkdir(parents=True)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED_PREFIXES)}
        self.env.update(
            HOME=str(self.home),
            AGENTCLI_HOME=str(self.home / ".agentcli"),
            ANTHROPIC_API_KEY=KEY,
            ANTHROPIC_BASE_URL=api_url,
            NO_COLOR="1",
            TERM="dumb",
        )

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


@dataclass(frozen=True)
class Finished:
    """A child process run to its end."""

    wall: float
    cpu: float
    max_rss_kb: int
    returncode: int
    stderr: str
    """What it printed (stdout and stderr), kept to say why it failed."""


def run_child(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    *,
    check: bool = True,
    timeout: float = 300.0,
    started: Callable[[int], None] | None = None,
) -> Finished:
    """Run `argv` to its end and measure it (wall s, CPU s of it and its children, max RSS KB);
    `started` is told the child's pid at once. With `check`, a non-zero exit raises: a failed
    run would make the figure meaningless."""
    began = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=errors, stderr=errors)
        if started is not None:
            started(proc.pid)
        deadline = began + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.002)
        wall = time.perf_counter() - began
        proc.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")
    if check and proc.returncode != 0:
        raise RuntimeError(f"{Path(argv[0]).name} exited {proc.returncode}: {stderr.strip()[-300:]}")
    return Finished(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, proc.returncode, stderr)


def interleaved(runs: int, measures: Mapping[str, Callable[[], float]]) -> dict[str, list[float]]:
    """Each measure `runs` times, in turn (A B A B …), the order rotating every round."""
    names = list(measures)
    results: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(runs):
        shift = round_index % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            results[name].append(measures[name]())
    return results


def seconds(action: Callable[[], object]) -> float:
    """Wall seconds of one call of `action` in this process."""
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def process_cpu_seconds(pid: int) -> float:
    """CPU time so far of every thread of process `pid` (not of its children), from the
    scheduler's nanosecond counters (the tick-based /proc/PID/stat is too coarse for one step)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue  # a thread that ended between the listing and the read
    return total / 1e9


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
