"""A 2,000-step session: its peak memory, the harness's CPU per step late against early, and
resuming it.

One tool-using conversation of `--steps` steps runs through `agentcli run`'s own code
(`run_once`, in-process, as `loop_overhead.py` does): each step a Read of 20 lines of one of 100
files, every 25th a Write of a new file (acceptEdits), and a TodoWrite every 100. The model is a
replay that keeps nothing and reports as input tokens what it was sent (characters / 4), so
auto-compaction comes when it would for a real model with a 200k window (`--window`); it answers a
summary request (no tools) with a summary. Reported:

- harness CPU per step (the step's CPU minus the model's), median of steps 5–15 and of the last
  11 steps, their ratio (target ≤ 1.2), and a line fitted through every ordinary step read at
  step 10 and at the last; steps where a compaction ran are left out of those and reported
  apart (their number and median CPU, summary request excluded);
- peak memory (max RSS) of the process at the end (target ≤ 80 MB);
- resuming it: the installed `agentcli run -c` (a child process) continuing the session against
  the fake server, launch to the request's arrival, median of `--runs` (target ≤ 1 s), beside
  `agentcli run` of a new session (interleaved, so the machine's load weighs on both alike); and
  the transcript's size.

Usage: .venv/bin/python bench/long_session.py [--steps N] [--runs N] [--window TOKENS]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.catalog import DEFAULT_MODEL
from agentcli.contracts import JSON, ModelRequest, ModelResponse, StreamListener, Usage
from agentcli.runner import RunOptions, run_once
from bench.loop_overhead import FILES, isolated, peak_memory_kb

AGENTCLI = str(Path(sys.executable).parent / "agentcli")
WINDOWS = ((5, 15, 11), (5, 55, 51))
"""(first, last) ordinary steps early, and how many of the last ordinary steps, whose medians are compared."""
WRITE_EVERY = 25
TODO_EVERY = 100
WINDOW = 200_000
"""The model's context window (the default model's is 1M, which 2,000 such steps never fill)."""


def call_of(step: int) -> JSON:
    """The call of step `step`: a Read of 20 lines, a Write now and then, a TodoWrite rarely."""
    if step % TODO_EVERY == 0:
        todos = [
            {"content": f"Part {n}", "status": "completed" if n < step // TODO_EVERY else "pending", "activeForm": "x"}
            for n in range(1, 6)
        ]
        return {"type": "tool_use", "id": f"toolu_{step:05d}", "name": "TodoWrite", "input": {"todos": todos}}
    if step % WRITE_EVERY == 0:
        written: JSON = {"file_path": f"out/n{step:05d}.txt", "content": f"note {step}\n" * 5}
        return {"type": "tool_use", "id": f"toolu_{step:05d}", "name": "Write", "input": written}
    offset = 1 + (step // FILES % 3) * 20
    tool_input: JSON = {"file_path": f"src/f{step % FILES:03d}.txt", "offset": offset, "limit": 20}
    return {"type": "tool_use", "id": f"toolu_{step:05d}", "name": "Read", "input": tool_input}


class LongReplay:
    """A `Model` that answers `steps` tool steps, then "done"; a summary request with a summary.
    It keeps nothing but the clock readings: when each request came (CPU), the CPU spent inside
    it, and whether it was a summary request."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.step = 0
        self.starts: list[float] = []
        self.model_cpu: list[float] = []
        self.summaries: list[int] = []
        """The tool step after which each summary request came."""

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        began = time.process_time()
        try:
            sent = len(json.dumps([request.system, request.tools, request.messages])) // 4
            usage = Usage(input_tokens=sent, output_tokens=50)
            if not request.tools:
                self.summaries.append(self.step)
                summary = f"Summary: read the files in src up to step {self.step}; wrote notes in out/."
                return ModelResponse([{"type": "text", "text": summary}], "end_turn", usage)
            self.starts.append(began)
            self.step += 1
            if self.step > self.steps:
                listener.text("done")
                return ModelResponse([{"type": "text", "text": "done"}], "end_turn", usage)
            call = call_of(self.step)
            listener.tool_call_started(call["name"])
            return ModelResponse([call], "tool_use", usage)
        finally:
            self.model_cpu.append(time.process_time() - began)

    def close(self) -> None:
        pass


def run_long_session(root: Path, steps: int, window: int = WINDOW) -> tuple[LongReplay, float, Path]:
    """The session under `root` with a model of a `window`-token context, the model, the CPU clock
    at its end, and the project folder."""
    model = LongReplay(steps)
    errors = io.StringIO()
    with isolated(root, errors) as project:
        (project / "out").mkdir()
        (project / ".agentcli").mkdir()
        models = {DEFAULT_MODEL: {"context_window": window}}
        (project / ".agentcli" / "settings.json").write_text(json.dumps({"models": models}))
        code = run_once(
            RunOptions(
                prompt="read the files in src, and note what you find in out/",
                max_turns=steps + 5,
                max_budget_tokens=10**12,
                permission_mode="acceptEdits",
            ),
            model,
            project,
        )
        finished = time.process_time()
    if code != 0:
        raise RuntimeError(f"the benchmark session failed (exit {code}): {errors.getvalue()[-2000:]}")
    return model, finished, project


def harness_per_step(model: LongReplay, finished: float) -> tuple[dict[int, float], dict[int, float]]:
    """Harness CPU of each tool step (from one tool request to the next, the model's CPU taken
    out), split into ordinary steps and steps in which a compaction ran."""
    ends = [*model.starts[1:], finished]
    model_between = _model_cpu_between(model)
    ordinary: dict[int, float] = {}
    compacting: dict[int, float] = {}
    compacted_after = set(model.summaries)
    for index, (start, end) in enumerate(zip(model.starts, ends, strict=True)):
        step = index + 1
        cost = end - start - model_between[index]
        (compacting if step in compacted_after else ordinary)[step] = cost
    return ordinary, compacting


def _model_cpu_between(model: LongReplay) -> list[float]:
    """For each tool request, the model's CPU from it to the next tool request (its own and any
    summary request's in between)."""
    spent: list[float] = []
    summaries = iter(model.summaries)
    upcoming = next(summaries, None)
    cpu = iter(model.model_cpu)
    for step in range(1, len(model.starts) + 1):
        total = next(cpu)
        while upcoming == step:
            total += next(cpu)
            upcoming = next(summaries, None)
        spent.append(total)
    return spent


def first_request_seconds(root: Path, project: Path, runs: int) -> dict[str, list[float]]:
    """Launch to the first request at the fake server of the installed agentcli: `run -c` of the
    session in `project`, and beside it (interleaved) `run` of a new session in an empty project."""
    from bench.common import KEY, interleaved, run_child
    from tests.fake_anthropic import FakeAnthropic, reply, text

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTCLI_", "OPENAI_"))}
    env.update(HOME=str(root), AGENTCLI_HOME=str(root / "home"), NO_COLOR="1", TERM="dumb", ANTHROPIC_API_KEY=KEY)
    empty = root / "empty"
    empty.mkdir()

    def launch(argv: list[str], cwd: Path) -> float:
        with FakeAnthropic(api_key=KEY) as api:
            api.script(reply(text("Going on.")))
            launched = time.monotonic()
            run_child([AGENTCLI, *argv], cwd, {**env, "ANTHROPIC_BASE_URL": api.url})
            return api.requests[0].received_at - launched

    return interleaved(
        runs,
        {
            "resume": lambda: launch(["run", "-c", "go on"], project),
            "new": lambda: launch(["run", "hi"], empty),
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=5, help="resumes to time")
    parser.add_argument("--window", type=int, default=WINDOW, help="the model's context window, in tokens")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model, finished, project = run_long_session(root, args.steps, args.window)
        peak = peak_memory_kb() / 1024
        ordinary, compacting = harness_per_step(model, finished)
        steps = sorted(ordinary)
        for first, last_early, late_count in WINDOWS:
            early = statistics.median([ordinary[s] for s in range(first, last_early + 1) if s in ordinary])
            late = statistics.median([ordinary[s] for s in steps[-late_count:]])
            print(
                f"harness CPU per step: steps {first}–{last_early} {early * 1000:.3f} ms, last {late_count} steps "
                f"{late * 1000:.3f} ms (late / early {late / early:.2f}x, target ≤ 1.2x)"
            )
        fit = statistics.linear_regression(steps, [ordinary[s] * 1000 for s in steps])
        last = steps[-1]
        print(
            f"harness fitted to a + b·step: {fit.intercept + fit.slope * 10:.3f} ms at step 10, "
            f"{fit.intercept + fit.slope * last:.3f} ms at step {last} (b = {fit.slope * 1000:+.4f} µs per step)"
        )
        if compacting:
            print(
                f"compactions: {len(model.summaries)} (after steps {', '.join(map(str, model.summaries))}); "
                f"harness CPU of a step with one {statistics.median(compacting.values()) * 1000:.1f} ms "
                "(summary request excluded)"
            )
        print(f"peak memory (max RSS) after {args.steps} steps: {peak:.1f} MB (target ≤ 80 MB)")
        [transcript] = (root / "home" / "projects").glob("*/*.jsonl")
        size = transcript.stat().st_size
        lines = sum(1 for _ in transcript.open("rb"))
        launches = first_request_seconds(root, project, args.runs)
        resume, new = (statistics.median(launches[name]) for name in ("resume", "new"))
        print(
            f"launch to first request, median of {args.runs}: run -c of the {args.steps}-step session "
            f"{resume * 1000:.0f} ms (target ≤ 1 s), run of a new session beside it {new * 1000:.0f} ms "
            f"(resume / new {resume / new:.2f}x); transcript {size / 1e6:.1f} MB, {lines:,} lines"
        )
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
