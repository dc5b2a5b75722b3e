"""The cost of a checkpoint of a 20,000-file project with one changed file, beside plain git.

Generates a tree of 20,000 small source files (and an ignored `node_modules/`) in a temporary
folder, records a first checkpoint (which reads every file once), then measures, interleaved
on the same tree so load changes hit all alike, each after one file changed:

- `checkpoint, whole tree`: agentcli's checkpoint (`CheckpointStore.record`: the lock,
  `git status`, adding the changed file, the tree, the commit and its ref), as a turn's
  `before` and the `after` of a turn that ran a command record it;
- `checkpoint, declared paths`: the `after` of a turn whose only changes were Write and Edit
  calls (`CheckpointStore.record_paths`: only the paths they declared are looked at);
- `git add -A && git write-tree`: the same change recorded by plain git in a repository of
  its own with the tree as its work tree (the issue's yardstick);
- with `--against TREE` (another checkout of agentcli, e.g. `main`): that tree's whole-tree
  checkpoint, run by a child process of its own on the same project and interleaved with the rest;
- `unchanged`: a checkpoint when nothing changed, and the objects it added (target: none);
- a turn's two checkpoints (before its first change, at its end), one file changed in between,
  after a turn like it: Write/Edit only, and with a command (and the other checkout's).

With the watcher (`checkpoints.watcher`, Linux inotify), a second store of the same project
records the same changes as a session does: `watched, one file changed` (a turn's `before`
after the user changed a file, or a turn's end after a command), `turn, with a command,
watched`, and an unchanged tree (no git process). The watcher's own cost: the watches for the
tree, the walk that sets them up, its memory (Python's allocations; the kernel's is about 1 KB
a watch), and its CPU per event (events queued while it waits, then read at once).

It also counts the git processes each kind of checkpoint starts.
Target: a checkpoint with one changed file ≤ 50 ms, as a ratio beside plain git.

Usage: .venv/bin/python bench/checkpoint_bench.py [--files N] [--runs N] [--against TREE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.checkpoints.config import CheckpointConfig
from agentcli.checkpoints.store import CheckpointStore
from bench.common import interleaved, seconds

WORKER = """
import json, resource, subprocess, sys, time
from pathlib import Path
from agentcli.checkpoints.config import CheckpointConfig
store = CheckpointConfig().store(Path(sys.argv[1]), Path(sys.argv[2]))
calls = [0]
real_run = subprocess.run
def counted(*args, **kwargs):
    calls[0] += 1
    return real_run(*args, **kwargs)
subprocess.run = counted
for line in sys.stdin:
    calls[0] = 0
    cpu = time.process_time() + sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2])
    began = time.perf_counter()
    with store.repo.locked():
        store.record("bench", line.strip(), "before")
    elapsed = time.perf_counter() - began
    cpu = time.process_time() + sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2]) - cpu
    print(json.dumps([elapsed, cpu, calls[0]]), flush=True)
"""
"""A checkpoint by another checkout of agentcli: one per line read, answering its wall and CPU time
(its own and its children's) and the git processes it started."""


def source_file(root: Path, index: int) -> Path:
    return root / f"pkg{index // 2000}" / f"mod{(index // 100) % 20}" / f"file{index}.py"


def generate(root: Path, files: int) -> None:
    (root / ".gitignore").write_text("node_modules/\n")
    for index in range(files):
        path = source_file(root, index)
        if index % 100 == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f{index}(x):\n    return x + {index}\n" * 20)
    modules = root / "node_modules" / "dep"
    modules.mkdir(parents=True)
    for index in range(500):
        (modules / f"m{index}.js").write_text("var x = 1;\n")


class Ours:
    """This tree's checkpoints of the project, one step each, the last one remembered (as a turn's `before`)."""

    def __init__(self, store: CheckpointStore) -> None:
        self.store = store
        self.step = 0
        self.last = ""

    def whole(self) -> None:
        self.step += 1
        with self.store.repo.locked():
            self.last = self.store.record("bench", f"{self.step:06d}", "before").commit

    def paths(self, changed: Path) -> None:
        self.step += 1
        with self.store.repo.locked():
            self.last = self.store.record_paths("bench", f"{self.step:06d}", "after", self.last, [changed]).commit


class Watched(Ours):
    """A second store of the project whose whole-tree checkpoints ask its watcher what changed."""

    def __init__(self, store: CheckpointStore) -> None:
        super().__init__(store)
        self.whole()  # the shadow repository made (the watcher starts once it exists) and every file read
        tracemalloc.start()
        began, cpu = time.perf_counter(), cpu_seconds()
        store.watch(print)
        store._started()
        assert store.watcher is not None
        self.watcher = store.watcher
        self.watcher.take()  # waits for the walk that sets up the watches, or finishes it
        self.setup = time.perf_counter() - began
        self.setup_cpu = cpu_seconds() - cpu
        self.memory = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        self.whole()  # the first of the process: git's look

    def cpu_per_event(self, files: tuple[Path, Path], events: int) -> float:
        """CPU seconds per event: `events` writes queued while the watcher waits, then read at once."""
        with self.watcher._lock:  # its thread cannot read meanwhile
            for index in range(events):
                files[index % 2].write_text(f"{index}\n")  # alternating: the kernel merges repeats
        began = time.process_time()
        self.watcher.take()
        return (time.process_time() - began) / events


class Theirs:
    """Another checkout's checkpoints of the same project, by a child process (`WORKER`)."""

    def __init__(self, tree: Path, root: Path, home: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(root), str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            cwd=tree,
        )
        self.step = 0
        self.gits = 0

    def checkpoint(self) -> tuple[float, float]:
        """One whole-tree checkpoint: its wall and CPU seconds."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.step += 1
        self.proc.stdin.write(f"{self.step:06d}\n")
        self.proc.stdin.flush()
        elapsed, cpu, self.gits = json.loads(self.proc.stdout.readline())
        return float(elapsed), float(cpu)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


@contextmanager
def git_processes() -> Iterator[list[int]]:
    """Counts the `subprocess.run` calls (every git a checkpoint starts) while the block runs."""
    count = [0]
    real_run = subprocess.run

    def counted(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return real_run(*args, **kwargs)

    subprocess.run = counted
    try:
        yield count
    finally:
        subprocess.run = real_run


def cpu_seconds() -> float:
    """CPU time of this process and of its children that ended (git), in seconds."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def plain_git(root: Path, git_dir: Path) -> None:
    env = {**os.environ, "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(root)}
    subprocess.run(["sh", "-c", "git add -A && git write-tree"], cwd=root, env=env, check=True, capture_output=True)


def objects(store: CheckpointStore) -> int:
    return sum(len(files) for _, _, files in os.walk(store.repo.folder / "git" / "objects"))


def measure(files: int, runs: int, against: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agentcli-checkpoint-bench-") as temp:
        root, git_dir = Path(temp) / "project", Path(temp) / "plain.git"
        root.mkdir()
        generate(root, files)
        subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True)
        subprocess.run(["git", "--git-dir", str(git_dir), "config", "core.bare", "false"], check=True)
        ours = Ours(CheckpointConfig().store(root, Path(temp) / "home"))
        theirs = Theirs(against, root, Path(temp) / "home-against") if against else None
        first = seconds(ours.whole)
        watched = Watched(CheckpointConfig().store(root, Path(temp) / "home-watched"))
        if theirs is not None:
            theirs.checkpoint()
        plain_git(root, git_dir)
        target = source_file(root, files * 3 // 8)
        changes = [0]
        cpu: dict[str, list[float]] = {}

        def change() -> None:
            changes[0] += 1
            target.write_text(f"changed {changes[0]}\n")

        def changed_then(name: str, action: Callable[[], object]) -> float:
            change()
            began = cpu_seconds()
            wall = seconds(action)
            cpu.setdefault(name, []).append(cpu_seconds() - began)
            return wall

        def changed_then_theirs() -> float:
            assert theirs is not None
            change()
            wall, used = theirs.checkpoint()
            cpu.setdefault("against", []).append(used)
            return wall

        def turn(name: str, end: Callable[[], object]) -> float:
            """A turn after one like it: the checkpoint before it (nothing changed since the last
            turn's end), its one change, the checkpoint at its end (`end`)."""
            change()
            end()  # the previous turn's end, not measured
            began = cpu_seconds()
            wall = seconds(ours.whole)
            used = cpu_seconds() - began
            change()
            began = cpu_seconds()
            wall += seconds(end)
            cpu.setdefault(name, []).append(used + cpu_seconds() - began)
            return wall

        def turn_watched(name: str) -> float:
            """A turn with a command, the watcher telling both its checkpoints what changed."""
            change()
            watched.whole()  # the previous turn's end, not measured
            began = cpu_seconds()
            wall = seconds(watched.whole)
            change()
            wall += seconds(watched.whole)
            cpu.setdefault(name, []).append(cpu_seconds() - began)
            return wall

        def turn_theirs() -> float:
            assert theirs is not None
            change()
            theirs.checkpoint()
            wall, used = theirs.checkpoint()
            change()
            end_wall, end_used = theirs.checkpoint()
            cpu.setdefault("turn, against", []).append(used + end_used)
            return wall + end_wall

        names = ["checkpoint, whole tree", "checkpoint, declared paths", "git add -A && git write-tree"]
        measures: dict[str, Callable[[], float]] = {
            names[0]: partial(changed_then, names[0], ours.whole),
            names[1]: partial(changed_then, names[1], partial(ours.paths, target)),
            names[2]: partial(changed_then, names[2], partial(plain_git, root, git_dir)),
            "turn, Write/Edit only": partial(turn, "turn, Write/Edit only", partial(ours.paths, target)),
            "turn, with a command": partial(turn, "turn, with a command", ours.whole),
            "watched, one file changed": partial(changed_then, "watched, one file changed", watched.whole),
            "turn, with a command, watched": partial(turn_watched, "turn, with a command, watched"),
        }
        if theirs is not None:
            measures["against"] = changed_then_theirs
            measures["turn, against"] = turn_theirs
        times = interleaved(runs, measures)
        gits: dict[str, int] = {}
        for name, action in (("whole tree", ours.whole), ("declared paths", partial(ours.paths, target))):
            change()
            with git_processes() as count:
                action()
            gits[name] = count[0]
        ours.whole()  # the index catches up with the declared-paths checkpoint above
        with git_processes() as count:
            ours.whole()
        gits["unchanged"] = count[0]
        for name, end in (("turn, Write/Edit only", partial(ours.paths, target)), ("turn, with a command", ours.whole)):
            change()
            end()
            with git_processes() as count:
                ours.whole()
                change()
                end()
            gits[name] = count[0]
        change()
        with git_processes() as count:
            watched.whole()
        gits["watched"] = count[0]
        with git_processes() as count:
            watched.whole()
        gits["watched, unchanged"] = count[0]
        change()
        watched.whole()
        with git_processes() as count:
            watched.whole()
            change()
            watched.whole()
        gits["turn, with a command, watched"] = count[0]
        result_watched = {
            "unchanged": statistics.median(seconds(watched.whole) for _ in range(runs)),
            "watches": watched.watcher.watches_used,
            "setup": watched.setup,
            "setup cpu": watched.setup_cpu,
            "memory": watched.memory,
            "cpu per event": statistics.median(
                watched.cpu_per_event((target, source_file(root, 1)), 5_000) for _ in range(3)
            ),
        }
        watched.store.close()
        ours.whole()  # the changes made above recorded: what follows changes nothing
        stored = objects(ours.store)
        unchanged = [seconds(ours.whole) for _ in range(runs)]
        added = objects(ours.store) - stored
        result: dict[str, Any] = {name: statistics.median(values) for name, values in times.items()}
        result["cpu"] = {name: statistics.median(values) for name, values in cpu.items()}
        result["unchanged"] = statistics.median(unchanged)
        if theirs is not None:
            changed_then_theirs()
            result["against gits"] = theirs.gits
            theirs.checkpoint()
            result["against unchanged gits"] = theirs.gits
            result["against unchanged"] = statistics.median(theirs.checkpoint()[0] for _ in range(runs))
            theirs.close()
    result["first"] = first
    result["objects added unchanged"] = added
    result["gits"] = gits
    result["watched"] = result_watched
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--against", type=Path, help="another checkout of agentcli to measure beside this one")
    args = parser.parse_args()
    against = args.against.resolve() if args.against else None
    result = measure(args.files, args.runs, against)
    plain, cpu, gits = result["git add -A && git write-tree"], result["cpu"], result["gits"]
    print(f"{args.files:,} files, one changed, median of {args.runs} interleaved runs (wall, and CPU with git's):")
    plain_cpu = cpu["git add -A && git write-tree"]
    print(f"  {'git add -A && git write-tree':36s} {plain * 1000:6.1f} ms  CPU {plain_cpu * 1000:5.1f} ms")
    rows = [("checkpoint, whole tree", "checkpoint, whole tree", gits["whole tree"])]
    rows.append(("checkpoint, declared paths", "checkpoint, declared paths", gits["declared paths"]))
    if against is not None:
        rows.append((f"whole tree, {against.name}", "against", result["against gits"]))
    for label, key, processes in rows:
        wall = result[key]
        print(
            f"  {label:36s} {wall * 1000:6.1f} ms  CPU {cpu[key] * 1000:5.1f} ms  "
            f"{wall / plain:4.2f}x plain git  {processes} git processes"
        )
    print(
        f"  {'unchanged tree':36s} {result['unchanged'] * 1000:6.1f} ms  {gits['unchanged']} git processes, "
        f"objects added: {result['objects added unchanged']:.0f}"
    )
    if against is not None:
        print(
            f"  {'unchanged tree, ' + against.name:36s} {result['against unchanged'] * 1000:6.1f} ms  "
            f"{result['against unchanged gits']} git processes"
        )
    print("A turn that changes one file: its checkpoint before and its checkpoint at the end, after a turn like it:")
    against_turn = result.get("turn, against")
    for name in ("turn, Write/Edit only", "turn, with a command"):
        wall = result[name]
        beside = f"  {wall / against_turn:4.2f}x {against.name}'s" if against is not None and against_turn else ""
        print(f"  {name:36s} {wall * 1000:6.1f} ms  CPU {cpu[name] * 1000:5.1f} ms  {gits[name]} git processes{beside}")
    if against is not None:
        name = f"turn, {against.name} (whole tree twice)"
        print(f"  {name:36s} {result['turn, against'] * 1000:6.1f} ms  CPU {cpu['turn, against'] * 1000:5.1f} ms")
    print(f"  first checkpoint (reads every file once) {result['first']:.2f} s")
    print("With the watcher (whole-tree checkpoints told what changed):")
    for label, key, processes in (
        ("watched, one file changed", "watched, one file changed", gits["watched"]),
        ("turn, with a command, watched", "turn, with a command, watched", gits["turn, with a command, watched"]),
    ):
        wall = result[key]
        print(
            f"  {label:36s} {wall * 1000:6.1f} ms  CPU {cpu[key] * 1000:5.1f} ms  "
            f"{wall / plain:4.2f}x plain git  {processes} git processes"
        )
    watched = result["watched"]
    unchanged = f"{watched['unchanged'] * 1000:6.1f} ms  {gits['watched, unchanged']} git processes"
    print(f"  {'unchanged tree, watched':36s} {unchanged}")
    print(
        f"  the watcher: {watched['watches']:,} watches, set up in {watched['setup'] * 1000:.0f} ms "
        f"(CPU {watched['setup cpu'] * 1000:.0f} ms, git's included), "
        f"{watched['memory'] / 1024:.0f} KiB (Python's), CPU {watched['cpu per event'] * 1e6:.1f} µs per event"
    )


if __name__ == "__main__":
    main()
