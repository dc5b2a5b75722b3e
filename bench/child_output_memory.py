"""Peak memory of agentcli reading a child process that prints a flood (the tests check the cap, not memory).

Each case runs in a fresh interpreter, which prints its peak RSS (`ru_maxrss`) after the case:

- hook: a PostToolUse-style hook printing SIZE MB on stdout (`hooks.runner.run_hooks`);
- git: the git snapshot of a repository whose last commit subject is SIZE MB (`context.facts`);
- mcp stderr: a failed MCP server's SIZE MB of stderr, read for its error (`mcp.manager._failure`);
- baseline: the same imports, nothing read.

Usage: .venv/bin/python bench/child_output_memory.py [SIZE_MB]
To compare with another tree (main, say): PYTHONPATH=/path/to/that/tree .venv/bin/python bench/child_output_memory.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

PRELUDE = """
import resource, sys, json
from pathlib import Path
from agentcli.hooks.config import HookCommand
from agentcli.hooks.runner import run_hooks
from agentcli.context.facts import git_snapshot
from agentcli.mcp import manager
size, folder = int(sys.argv[1]), Path(sys.argv[2])
"""

CASES = {
    "baseline": "",
    "hook": """
command = f"{sys.executable} -c \\"import sys; [sys.stdout.write('x' * (1 << 20)) for _ in range({size})]\\""
hook = HookCommand("PostToolUse", "", command, 120.0, folder, "user")
(ran,) = run_hooks([hook], {"hook_event_name": "PostToolUse"}, folder)
assert 9_000 < len(ran.stdout) < 20_000, (len(ran.stdout), ran)
""",
    "git": """
text = git_snapshot(folder / "repo")
assert "xxxx" in text, text
""",
    "mcp stderr": """
with open(folder / "stderr.txt", "a+", encoding="utf-8") as errlog:
    why = manager._failure(RuntimeError("connection closed"), errlog)
assert why.endswith("x"), why[-40:]
""",
}
REPORT = "\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n"


def prepare(folder: Path, size_mb: int) -> None:
    flood = "x" * (1 << 20)
    with open(folder / "stderr.txt", "w") as out:
        for _ in range(size_mb):
            out.write(flood)
    repo = folder / "repo"
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b"}
    env["GIT_COMMITTER_EMAIL"] = "b@x"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-F", str(folder / "stderr.txt")], check=True, env=env
    )


def peak_mb(case: str, size_mb: int, folder: Path) -> float:
    code = PRELUDE + CASES[case] + REPORT
    path = os.environ.get("PYTHONPATH") or str(HERE)
    done = subprocess.run(
        [sys.executable, "-c", code, str(size_mb), str(folder)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        cwd=folder,  # not this tree: `-c` imports from the working directory first
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        prepare(folder, size_mb)
        where = subprocess.run(
            [sys.executable, "-c", "import agentcli; print(agentcli.__file__)"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or str(HERE)},
            cwd=folder,
        ).stdout.strip()
        print(f"agentcli from {where}; flood of {size_mb} MB")
        for case in CASES:
            print(f"  {case:<11} peak RSS {peak_mb(case, size_mb, folder):7.1f} MB")


if __name__ == "__main__":
    main()
