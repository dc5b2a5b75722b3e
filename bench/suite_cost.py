"""Where the test suite's time goes: each test's CPU and the processes it starts.

As a pytest plugin it records, for every test (its set-up, call and tear-down), the CPU of the
worker and of the children it reaped, and of its warm servers and what they forked (read from
/proc: the `agentcli`s started warm, `tests/warm_start.py`, and the demo MCP server's copies,
`tests/mcp/warm_demo.py`), and the programs it started (from Python's audit events:
`subprocess.Popen`, `os.posix_spawn`, a fork, a pty). Each worker appends one JSON line per test
to a file in AGENTCLI_SUITE_COST (a folder). The report sums that per file and says which tests
start a Python interpreter afresh (an `agentcli`, a server: ~0.5 s of CPU or more each), which
start them warm, and which only other programs (git, bash, rg: a few milliseconds). A warm
server's own start counts for the first test that needs it.

    AGENTCLI_SUITE_COST=/tmp/cost .venv/bin/python -m pytest -p bench.suite_cost -n 2
    .venv/bin/python -m bench.suite_cost /tmp/cost            # the table, slowest files first

A test's CPU includes what its fixtures did first (a session fixture counts for the test that
made it). Nothing here is asserted: it is for deciding what to move in-process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

FOLDER = "AGENTCLI_SUITE_COST"
PYTHONS = ("python", "agentcli", "pytest")
WARM = "warm agentcli"
WARM_DEMO = "warm demo server"
"""`tests/mcp/demo_launch.py`: a small interpreter handing its stdio to a copy of the warm demo
MCP server (`tests/mcp/warm_demo.py`), ~0.07 s of CPU in all instead of ~1.3."""


class _Spawns:
    """The programs started since the last `take()`, seen through audit events."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "subprocess.Popen" or event == "os.posix_spawn":
            launched = [Path(os.fsdecode(arg)).name for arg in args[1] or ()]
            self.started.append(WARM_DEMO if "demo_launch.py" in launched else Path(os.fsdecode(args[0])).name)
        elif event == "tests.warm_start":
            self.started.append(WARM)
        elif event in ("os.forkpty", "pty.spawn"):
            self.started.append("pty")
        elif event == "os.fork":
            self.started.append("fork")

    def take(self) -> list[str]:
        started, self.started = self.started, []
        return started


def _cpu() -> float:
    from tests import warm_start  # what the warm servers start are their children, not ours

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime + warm_start.cpu_of_warm_processes()


_spawns = _Spawns()
_out: Any = None


def pytest_configure(config: pytest.Config) -> None:
    global _out
    folder = os.environ.get(FOLDER)
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    _out = open(Path(folder) / f"{worker}.jsonl", "a", encoding="utf-8")  # noqa: SIM115 - open for the session
    sys.addaudithook(_spawns.hook)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    if _out is None:
        yield
        return
    _spawns.take()
    cpu, wall = _cpu(), time.monotonic()
    yield
    record = {
        "test": item.nodeid,
        "cpu": _cpu() - cpu,
        "wall": time.monotonic() - wall,
        "started": _spawns.take(),
    }
    _out.write(json.dumps(record) + "\n")
    _out.flush()


def starts_python(started: list[str]) -> bool:
    """Whether a test started an interpreter afresh (ptyprocess forks, then runs agentcli)."""
    return any(name == "pty" or name.startswith(PYTHONS) for name in started)


def starts_warm(started: list[str]) -> bool:
    return WARM in started or WARM_DEMO in started


def report(folder: Path, top: int) -> str:
    tests = [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in path.read_text().splitlines()]
    files: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for test in tests:
        row = files[test["test"].split("::")[0]]
        row["cpu"] += test["cpu"]
        row["wall"] += test["wall"]
        row["tests"] += 1
        row["python"] += starts_python(test["started"])
        row["warm"] += starts_warm(test["started"])
        row["any"] += bool(test["started"])
    cpu = sum(t["cpu"] for t in tests)
    python = sum(starts_python(t["started"]) for t in tests)
    warm = sum(starts_warm(t["started"]) for t in tests)
    spawning = sum(bool(t["started"]) for t in tests)
    lines = [
        f"{len(tests)} tests in {len(files)} files, {cpu:.0f} s of CPU (workers and reaped children), "
        f"{sum(t['wall'] for t in tests):.0f} s summed wall",
        f"start a Python interpreter (agentcli, a server): {python} tests "
        f"({python / max(len(tests), 1):.0%}) in {sum(1 for r in files.values() if r['python'])} files; "
        f"agentcli or the demo MCP server started warm: {warm} tests in "
        f"{sum(1 for r in files.values() if r['warm'])} files; "
        f"any program: {spawning} tests in {sum(1 for r in files.values() if r['any'])} files",
        "",
        f"{'cpu s':>7} {'wall s':>7} {'tests':>5} {'py':>4} {'warm':>4}  file",
    ]
    for name, row in sorted(files.items(), key=lambda item: -item[1]["cpu"])[:top]:
        lines.append(
            f"{row['cpu']:7.1f} {row['wall']:7.1f} {row['tests']:5.0f} {row['python']:4.0f} {row['warm']:4.0f}  {name}"
        )
    lines += ["", f"{'cpu s':>7} {'wall s':>7}  test"]
    for test in sorted(tests, key=lambda t: -t["cpu"])[:top]:
        lines.append(f"{test['cpu']:7.2f} {test['wall']:7.2f}  {test['test']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    print(report(args.folder, args.top))


if __name__ == "__main__":
    main()
