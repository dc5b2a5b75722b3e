"""What the sandbox costs a command: the same command through the bare local workspace, through
the sandboxed one (one bubblewrap sandbox per session, each command a fresh process inside it),
and through a new bubblewrap per command (the other way to sandbox a command, Claude Code's on
Linux), interleaved in one run (A B C A B C …), each a median with min–max.

The target (issue 24): a sandboxed command costs at most 5 ms more than the same command
unsandboxed (median). The pause between commands stands for the model's turn, during which the
sandbox makes the next command's starter; `--no-pause` runs them back to back.

`--claude-code` also measures Claude Code's own sandbox (bubblewrap per command, its seccomp
helper, socat bridges) where it does it: `claude -p` against the fake API, which asks for
`true` as a Bash command STEPS times, with `sandbox.enabled` on and off (interleaved rounds); a
step is the time between two requests of the conversation, and the sandbox's cost per command
the difference of the medians. Claude Code comes from bench/.peers (installed from npm as
`bench/run` does) or `AGENTCLI_BENCH_CLAUDE`.

Usage: .venv/bin/python bench/sandbox_overhead.py [--runs N] [--no-pause] [--claude-code [--rounds R]]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.workspace import bwrap
from agentcli.workspace.contract import Command, Workspace
from agentcli.workspace.local import LocalWorkspace
from agentcli.workspace.sandbox_settings import SandboxSettings
from agentcli.workspace.sandboxed import SandboxedWorkspace, SandboxUnavailable
from bench.common import CLEARED_PREFIXES, Figure, interleaved
from bench.peers import MODEL, _claude_binary
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, reply, text, tool_use

COMMANDS = {"true": "true", "ls": "ls -la", "git status": "git status --short"}
MODEL_TURN_S = 0.1
"""The pause before each command, standing for the model's turn (a real one takes seconds)."""
NEVER = threading.Event()
BWRAP_PER_COMMAND = [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
]
"""A minimal bwrap around one command: what a sandbox made afresh for each command costs at least
(Claude Code adds its own mounts, a seccomp helper and socat bridges to these)."""


def timed_run(workspace: Workspace, argv: list[str], pause: float) -> float:
    time.sleep(pause)
    began = time.perf_counter()
    done = workspace.run(Command(argv), timeout=60, cancel=NEVER)
    elapsed = time.perf_counter() - began
    if done.exit_code != 0:
        raise RuntimeError(f"{argv} failed: {done.output[-300:]}")
    return elapsed


@contextmanager
def project() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="agentcli-sandbox-bench-"))
    try:
        (folder / "src").mkdir()
        for index in range(50):
            (folder / "src" / f"module{index}.py").write_text(f"VALUE = {index}\n")
        LocalWorkspace(folder).run(
            Command(["bash", "-c", "git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm x"]),
            timeout=60,
            cancel=NEVER,
        )
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure(runs: int, pause: float = MODEL_TURN_S) -> dict[str, dict[str, Figure] | str]:
    """For each command of `COMMANDS`: its figures (ms) by way of running it; or why nothing was measured."""
    if why := bwrap.unavailable():
        return {label: f"not measured: {why}" for label in COMMANDS}
    results: dict[str, dict[str, Figure] | str] = {}
    with project() as root, LocalWorkspace(root) as local:
        try:
            sandboxed = SandboxedWorkspace(root, SandboxSettings(enabled=True)).__enter__()
        except SandboxUnavailable as error:
            return {label: f"not measured: {error}" for label in COMMANDS}
        try:
            for label, script in COMMANDS.items():
                argv = ["bash", "-c", script]
                bind = ["--bind", str(root), str(root), "--chdir", str(root)]
                per_command = [shutil.which("bwrap") or "bwrap", *BWRAP_PER_COMMAND, *bind, *argv]
                ways: dict[str, Callable[[], float]] = {
                    "local": partial(timed_run, local, argv, pause),
                    "sandboxed": partial(timed_run, sandboxed, argv, pause),
                    "bwrap per command": partial(timed_run, local, per_command, pause),
                }
                for way in ways.values():
                    way()  # warm up: the page cache, the starter
                samples = interleaved(runs, ways)
                results[label] = {way: Figure.of(times, 1000) for way, times in samples.items()}
        finally:
            sandboxed.close()
    return results


CLAUDE_STEPS = 12


def claude_code_steps(claude: str, sandboxed: bool, steps: int = CLAUDE_STEPS) -> list[float]:
    """Seconds between consecutive requests of a `claude -p` session whose every step runs `true`."""
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic(api_key="bench") as api:
        home, folder = Path(tmp) / "home", Path(tmp) / "project"
        (home / ".claude").mkdir(parents=True)
        (folder / ".claude").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(folder)], check=True)
        settings = {
            "sandbox": {"enabled": sandboxed, "autoAllowBashIfSandboxed": True, "allowUnsandboxedCommands": False}
        }
        (folder / ".claude" / "settings.json").write_text(json.dumps(settings))
        asked = [0]

        def respond(request: RecordedRequest) -> Reply:
            if not request.body.get("tools"):  # a side request (a title, a summary)
                return reply(text("ok"))
            asked[0] += 1
            return (
                reply(tool_use("Bash", {"command": "true", "description": "run"}))
                if asked[0] <= steps
                else reply(text("done"))
            )

        api.script(*[respond] * (3 * steps + 20))
        env = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED_PREFIXES)}
        env.update(HOME=str(home), ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="bench")
        env.update(CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
        allow = [] if sandboxed else ["--allowedTools", "Bash"]
        argv = [claude, "-p", "go", "--model", MODEL, "--max-turns", str(steps + 5), *allow]
        subprocess.run(argv, cwd=folder, env=env, capture_output=True, timeout=600, check=True)
        times = [r.received_at for r in api.requests if r.body.get("tools")]
    return [later - earlier for earlier, later in itertools.pairwise(times[1:])]  # the first step warms up


def claude_code_overhead(rounds: int) -> dict[str, Figure] | str:
    """Claude Code's step with and without its sandbox (ms), or why it was not measured."""
    if why := bwrap.unavailable():
        return f"not measured: {why}"
    claude, problem = _claude_binary()
    if claude is None:
        return f"not measured: {problem}"
    samples: dict[str, list[float]] = {"unsandboxed": [], "sandboxed": []}
    for _ in range(rounds):
        for way in samples:
            samples[way] += claude_code_steps(claude, way == "sandboxed")
    return {way: Figure.of(times, 1000) for way, times in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--no-pause", action="store_true", help="run the commands back to back")
    parser.add_argument("--claude-code", action="store_true", help="measure Claude Code's sandbox too")
    parser.add_argument("--rounds", type=int, default=3, help="Claude Code sessions each way")
    args = parser.parse_args()
    pause = 0.0 if args.no_pause else MODEL_TURN_S
    print(f"per command, median (min–max) of {args.runs} interleaved runs, ms; pause before each {pause * 1000:g} ms")
    print(f"{'command':<12}{'local':>22}{'sandboxed':>22}{'bwrap per command':>22}{'sandbox overhead':>18}")
    for label, figures in measure(args.runs, pause).items():
        if isinstance(figures, str):
            print(f"{label:<12}{figures}")
            continue
        overhead = figures["sandboxed"].median - figures["local"].median
        print(
            f"{label:<12}"
            + "".join(f"{figures[way].text():>22}" for way in ("local", "sandboxed", "bwrap per command"))
            + f"{overhead:>+15.1f} ms"
        )
    if args.claude_code:
        figures = claude_code_overhead(args.rounds)
        if isinstance(figures, str):
            print(f"Claude Code: {figures}")
            return
        overhead = figures["sandboxed"].median - figures["unsandboxed"].median
        print(
            f"Claude Code, a step running `true` ({args.rounds} sessions of {CLAUDE_STEPS} steps each way, ms): "
            f"unsandboxed {figures['unsandboxed'].text()}, sandboxed {figures['sandboxed'].text()}, "
            f"sandbox overhead {overhead:+.1f} ms"
        )


if __name__ == "__main__":
    main()
