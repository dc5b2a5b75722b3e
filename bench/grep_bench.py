"""Grep speed on a generated 20,000-file tree: the Grep tool against bare `rg`, the Python engine, 4 at once.

Generates a git-like tree in a temporary folder (never in the repo): 20,000 searchable files
(Python, TypeScript, Markdown; 60 lines each, every
1,000th one 5,000 lines) plus an ignored `node_modules/` with 2,000 more
files and some binaries. Reports the median of a few runs for:
- single Greps (files_with_matches for a rare and a common word, content mode, count with a
  glob), each beside the same query typed as a bare `rg` command (run in the tree, its
  output read to the end) in the same run, interleaved, with the ratio Grep / rg (target
  ≤ 1.3x), and beside the pure-Python engine;
- four different Greps requested in one turn, run through the real ToolExecutor (read-only
  neighbours run concurrently), against the same four run one after another.

Usage: .venv/bin/python bench/grep_bench.py [--files N] [--runs N]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.contracts import JSON, Decision, Tool, ToolCall, ToolContext, ToolResult
from agentcli.events import Event
from agentcli.executor import ToolExecutor
from agentcli.tools.grep import GrepTool
from agentcli.tools.registry import ToolRegistry
from agentcli.workspace.local import LocalWorkspace
from bench.common import interleaved, seconds

WORDS = "alpha beta gamma delta epsilon value result config handler request session token cache".split()  # noqa: SIM905


class AllowAll:
    def check(self, tool: Tool, tool_input: JSON, ctx: ToolContext) -> Decision:
        return Decision(True)


def generate(root: Path, files: int, ignored: int = 2_000) -> None:
    rng = random.Random(7)
    (root / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text("node_modules/\n*.bin\n")
    kinds = [
        (".py", "def {w}_{n}(x):\n    return x + {n}  # {w}\n"),
        (".ts", "export const {w}{n} = ({n});\n"),
        (".md", "- {w} item {n}\n"),
    ]
    per_dir = 100
    for index in range(files):
        folder = root / f"pkg{index // (per_dir * 20)}" / f"mod{(index // per_dir) % 20}"
        if index % per_dir == 0:
            folder.mkdir(parents=True, exist_ok=True)
        suffix, template = kinds[index % 3]
        count = 5_000 if index % 1000 == 500 else 60  # mostly small files, a few big generated ones
        lines = [template.format(w=rng.choice(WORDS), n=rng.randrange(1000)) for _ in range(count)]
        if index % 997 == 0:
            lines.append("# RAREMARKER here\n")
        (folder / f"file{index}{suffix}").write_text("".join(lines))
    modules = root / "node_modules" / "dep"
    modules.mkdir(parents=True)
    for index in range(ignored):
        (modules / f"m{index}.js").write_text("var alpha = 1; // RAREMARKER\n")
    for index in range(50):
        (root / f"blob{index}.bin").write_bytes(b"\0RAREMARKER" * 100)


def query_shapes() -> dict[str, tuple[JSON, list[str]]]:
    """The four query shapes: each Grep's input, and the same query typed as a bare `rg` command."""
    return {
        "rare word, files": ({"pattern": "RAREMARKER"}, ["rg", "--files-with-matches", "RAREMARKER"]),
        "common word, files": ({"pattern": "handler"}, ["rg", "--files-with-matches", "handler"]),
        "regex, content": (
            {"pattern": r"def \w+_9\d\d\(", "output_mode": "content"},
            ["rg", "--line-number", r"def \w+_9\d\d\("],
        ),
        "glob *.ts, count": (
            {"pattern": "config", "glob": "*.ts", "output_mode": "count"},
            ["rg", "--count", "--glob", "*.ts", "config"],
        ),
    }


def interleaved_medians(actions: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """Median seconds of each action, run in turn (order rotating) so load changes hit them alike."""
    for action in actions.values():
        action()  # warm the page cache and the regex caches
    times = interleaved(runs, {name: partial(seconds, action) for name, action in actions.items()})
    return {name: statistics.median(values) for name, values in times.items()}


def bare_rg(root: Path, argv: list[str]) -> None:
    done = subprocess.run(argv, cwd=root, capture_output=True, check=False)
    assert done.returncode == 0 and done.stdout, done.stderr


def median_seconds(action: Callable[[], object], runs: int) -> float:
    action()  # warm the page cache and the regex caches
    return statistics.median(seconds(action) for _ in range(runs))


def run(tool: GrepTool, ctx: ToolContext, query: JSON) -> ToolResult:
    result = tool.run(query, ctx)
    assert not result.is_error, result.content
    return result


def run_each(tool: GrepTool, ctx: ToolContext, queries: list[JSON]) -> list[ToolResult]:
    return [run(tool, ctx, query) for query in queries]


def ignore(event: Event) -> None:
    pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    have_rg = shutil.which("rg") is not None
    with tempfile.TemporaryDirectory(prefix="agentcli-grep-bench-") as temp:
        root = Path(temp) / "tree"
        started = time.perf_counter()
        generate(root, args.files)
        print(f"generated {args.files:,} files (+2,000 ignored, +50 binary) in {time.perf_counter() - started:.1f} s")
        ctx = ToolContext(LocalWorkspace(root))
        engines = {"python": GrepTool(use_ripgrep=False)}
        if have_rg:
            engines = {"ripgrep": GrepTool(use_ripgrep=None), **engines}
        else:
            print("rg not on PATH: only the Python engine is measured")
        queries = query_shapes()
        print(f"\nsingle Grep, median of {args.runs} runs, Grep (ripgrep) and bare rg interleaved (seconds)")
        columns = [*engines, *(["bare rg"] if have_rg else [])]
        print(f"{'query':<22}" + "".join(f"{name:>10}" for name in columns) + ("   Grep/rg" if have_rg else ""))
        for label, (query, command) in queries.items():
            times = {"python": median_seconds(partial(run, engines["python"], ctx, query), args.runs)}
            if have_rg:
                grep = partial(run, engines["ripgrep"], ctx, query)
                times |= interleaved_medians({"ripgrep": grep, "bare rg": partial(bare_rg, root, command)}, args.runs)
            outputs = {name: run(tool, ctx, query).content for name, tool in engines.items()}
            same = len(set(outputs.values())) == 1
            ratio = f"{times['ripgrep'] / times['bare rg']:9.2f}x" if have_rg else ""
            print(
                f"{label:<22}"
                + "".join(f"{times[name]:>10.3f}" for name in columns)
                + ratio
                + ("" if same else "  RESULTS DIFFER")
            )
        if have_rg:
            print("bare rg commands (run in the tree):")
            for label, (_, command) in queries.items():
                print(f"  {label:<20} {' '.join(command)}")

        print(f"\nfour Greps in one turn vs one after another, median of {args.runs} (seconds)")
        four = [query for query, _ in queries.values()]
        for name, tool in engines.items():
            executor = ToolExecutor(ToolRegistry([tool]), AllowAll())
            batch = [ToolCall(f"toolu_{i}", "Grep", q) for i, q in enumerate(four)]
            together = median_seconds(partial(executor.run_all, batch, ctx, ignore, {}), args.runs)
            apart = median_seconds(partial(run_each, tool, ctx, four), args.runs)
            print(
                f"{name:<10} concurrent {together:7.3f}   sequential {apart:7.3f}   speed-up {apart / together:4.2f}x"
            )


if __name__ == "__main__":
    main()
