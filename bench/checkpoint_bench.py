"""The cost of a checkpoint of a 20,000-file project with one changed file, beside plain git.

Generates a tree of 20,000 small source files (and an ignored `node_modules/`) in a temporary
folder, records a first checkpoint (which reads every file once), then measures, interleaved
on the same tree so load changes hit both alike:

- `checkpoint`: agentcli's checkpoint (`CheckpointStore.record`: the lock, `git status`, adding
  the changed file, `write-tree`, the commit and its ref) after one file changed;
- `git add -A && git write-tree`: the same change recorded by plain git in a repository of its
  own with the tree as its work tree (the issue's yardstick);
- `unchanged`: a checkpoint when nothing changed, and the objects it added (target: none).

Target: a checkpoint with one changed file ≤ 50 ms, as a ratio beside plain git.

Usage: .venv/bin/python bench/checkpoint_bench.py [--files N] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.checkpoints.config import CheckpointConfig
from agentcli.checkpoints.store import CheckpointStore
from bench.common import interleaved, seconds


def generate(root: Path, files: int) -> None:
    (root / ".gitignore").write_text("node_modules/\n")
    for index in range(files):
        folder = root / f"pkg{index // 2000}" / f"mod{(index // 100) % 20}"
        if index % 100 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{index}.py").write_text(f"def f{index}(x):\n    return x + {index}\n" * 20)
    modules = root / "node_modules" / "dep"
    modules.mkdir(parents=True)
    for index in range(500):
        (modules / f"m{index}.js").write_text("var x = 1;\n")


class Round:
    """Changes one file before each measured call, so every call has exactly one change to record."""

    def __init__(self, root: Path) -> None:
        self.target = root / "pkg3" / "mod7" / "file6750.py"
        self.count = 0

    def change(self) -> None:
        self.count += 1
        self.target.write_text(f"changed {self.count}\n")


def checkpoint(store: CheckpointStore, turn: list[int]) -> None:
    turn[0] += 1
    with store.repo.locked():
        store.record("bench", f"{turn[0]:06d}", "before")


def plain_git(root: Path, git_dir: Path) -> None:
    env = {**os.environ, "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(root)}
    subprocess.run(["sh", "-c", "git add -A && git write-tree"], cwd=root, env=env, check=True, capture_output=True)


def objects(store: CheckpointStore) -> int:
    return sum(len(files) for _, _, files in os.walk(store.repo.folder / "git" / "objects"))


def measure(files: int, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="agentcli-checkpoint-bench-") as temp:
        root, home, git_dir = Path(temp) / "project", Path(temp) / "home", Path(temp) / "plain.git"
        root.mkdir()
        generate(root, files)
        subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True)
        subprocess.run(["git", "--git-dir", str(git_dir), "config", "core.bare", "false"], check=True)
        store = CheckpointConfig().store(root, home)
        turn = [0]
        first = seconds(partial(checkpoint, store, turn))
        plain_git(root, git_dir)
        changes = Round(root)

        def changed_then(action: partial[None]) -> float:
            changes.change()
            return seconds(action)

        times = interleaved(
            runs,
            {
                "checkpoint": partial(changed_then, partial(checkpoint, store, turn)),
                "git add -A && git write-tree": partial(changed_then, partial(plain_git, root, git_dir)),
            },
        )
        checkpoint(store, turn)  # the tree as it is now
        stored = objects(store)
        unchanged = statistics.median(seconds(partial(checkpoint, store, turn)) for _ in range(runs))
        added = objects(store) - stored
    result = {name: statistics.median(values) for name, values in times.items()}
    result["unchanged"] = unchanged
    result["first"] = first
    result["objects added unchanged"] = added
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    result = measure(args.files, args.runs)
    ours, plain = result["checkpoint"], result["git add -A && git write-tree"]
    print(f"{args.files:,} files, one changed, median of {args.runs} interleaved runs:")
    print(f"  checkpoint                    {ours * 1000:7.1f} ms   (target ≤ 50 ms)")
    print(f"  git add -A && git write-tree  {plain * 1000:7.1f} ms")
    print(f"  ratio checkpoint / plain git  {ours / plain:7.2f}x")
    added = result["objects added unchanged"]
    print(f"  unchanged tree                {result['unchanged'] * 1000:7.1f} ms, objects added: {added:.0f}")
    print(f"  first checkpoint (reads every file once) {result['first']:.2f} s")


if __name__ == "__main__":
    main()
