"""Harness overhead per loop step, in-process: does a step cost the same at step 200 as at step 1?

Runs one 200-step tool-using conversation (each step a Read of 20 lines of one of 100 files,
then the next request) through `agentcli run`'s own code (`run_once`: session, transcript, reminders,
compaction check, gate, executor, reporter) and reports, for steps 1–10, 40–50 and 190–200,
the median per step of:
- harness: CPU time of the step minus the CPU time spent inside `Model.stream`, i.e. what our
  loop, session, transcript, executor and tools cost (the model is measured apart);
- model: CPU time inside `Model.stream`.
Then the harness cost of every step fitted to a line a + b·step (a session's total then grows as
a + b·n²/2: b is the growth the targets care about), read at steps 10 and 200; and this process's
peak memory (max RSS) once 50 steps have run, and at the end.

The model is a replay of prepared responses by default: unlike `ScriptedModel`, which copies
and keeps every request (the double's CPU would count as the model's, but the garbage collector
would walk its copies on our time), it keeps nothing, so what grows is ours. With `--wire` it
is the real Anthropic provider against the fake server on 127.0.0.1 (then "model" is the
provider's request encoding, HTTP and SSE, and the server's threads' CPU counts there too).

Usage: .venv/bin/python bench/loop_overhead.py [--steps N] [--wire] [--profile FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.contracts import JSON, Model, ModelRequest, ModelResponse, StreamListener, Usage
from agentcli.runner import RunOptions, run_once

WINDOWS = ((1, 10), (40, 50), (190, 200))
FITTED_AT = (10, 200)
MEMORY_AT = 50


class TimedModel:
    """Wraps a Model and records the CPU clock at the start of each step and inside each call,
    and the peak memory once `MEMORY_AT` steps have run."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.starts: list[float] = []
        self.model_time: list[float] = []
        self.peak_kb_at_memory_step: int | None = None

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        began = time.process_time()
        self.starts.append(began)
        if len(self.starts) == MEMORY_AT + 1:
            self.peak_kb_at_memory_step = peak_memory_kb()
        try:
            return self.inner.stream(request, listener)
        finally:
            self.model_time.append(time.process_time() - began)

    def close(self) -> None:
        self.inner.close()


FILES = 100
"""The project's files; the session reads each in turn, as a session reads its way through a project."""


def read_call(step: int) -> JSON:
    """The call of step `step`: 20 lines of one of the files (the same amount of work every step)."""
    tool_input = {"file_path": f"src/f{step % FILES:03d}.txt", "offset": 1 + step // FILES * 10, "limit": 20}
    return {"type": "tool_use", "id": f"toolu_{step:04d}", "name": "Read", "input": tool_input}


class Replay:
    """A `Model` that answers `steps` times with a Read, then with the answer, and keeps no request.
    Usage grows as a conversation's would (about 500 tokens a step), well short of auto-compaction."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.turn = 0

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        self.turn += 1
        usage = Usage(input_tokens=1_000 + 500 * self.turn, output_tokens=50)
        if self.turn > self.steps:
            listener.text("done")
            return ModelResponse([{"type": "text", "text": "done"}], "end_turn", usage)
        call = read_call(self.turn)
        listener.tool_call_started(call["name"])
        return ModelResponse([call], "tool_use", usage)

    def close(self) -> None:
        pass


def peak_memory_kb() -> int:
    """This process's max RSS so far, in KB (what Linux's getrusage reports)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@contextlib.contextmanager
def isolated(root: Path, errors: io.StringIO) -> Iterator[Path]:
    """A project and an agentcli home under `root`, this process in the project, stdout discarded
    and stderr kept in `errors`."""
    project = root / "project"
    project.mkdir()
    (project / "src").mkdir()
    for index in range(FILES):
        (project / "src" / f"f{index:03d}.txt").write_text(f"line of text in file {index}\n" * 60)
    saved = dict(os.environ)
    os.environ.update(AGENTCLI_HOME=str(root / "home"), HOME=str(root), NO_COLOR="1", TERM="dumb")
    previous = Path.cwd()
    os.chdir(project)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(errors):
            yield project
    finally:
        os.chdir(previous)
        os.environ.clear()
        os.environ.update(saved)


def run_session(model: Model, steps: int, profile: Path | None) -> TimedModel:
    timed = TimedModel(model)
    errors = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp, isolated(Path(tmp), errors) as project:
        profiler = cProfile.Profile()
        if profile:
            profiler.enable()
        code = run_once(
            RunOptions(prompt="read the files in src", max_turns=steps + 5, max_budget_tokens=10**12), timed, project
        )
        finished = time.process_time()
        if profile:
            profiler.disable()
            profiler.dump_stats(profile)
    if code != 0:
        raise RuntimeError(f"the benchmark session failed (exit {code}): {errors.getvalue()[-2000:]}")
    timed.starts.append(finished)
    return timed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--wire", action="store_true", help="the real provider against the fake server")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the session here")
    args = parser.parse_args()
    if args.wire:
        from agentcli.providers.anthropic import AnthropicModel
        from tests.fake_anthropic import FakeAnthropic
        from tests.fake_anthropic import reply as wire_reply
        from tests.fake_anthropic import text as wire_text
        from tests.fake_anthropic import tool_use as wire_tool_use

        with FakeAnthropic(api_key="bench") as api:
            calls = [read_call(step) for step in range(1, args.steps + 1)]
            api.script(
                *[wire_reply(wire_tool_use(c["name"], c["input"], id=c["id"])) for c in calls],
                wire_reply(wire_text("done")),
            )
            timed = run_session(AnthropicModel(api_key="bench", base_url=api.url), args.steps, args.profile)
    else:
        timed = run_session(Replay(args.steps), args.steps, args.profile)

    ends = timed.starts[1:]
    cpu = [end - start for start, end in zip(timed.starts, ends, strict=False)]
    harness = [step - spent for step, spent in zip(cpu, timed.model_time, strict=True)]
    for first, last in WINDOWS:
        if last > len(harness):
            continue
        window = slice(first - 1, last)
        print(
            f"steps {first:>3}–{last:<3}  harness {statistics.median(harness[window]) * 1000:6.3f} ms/step, "
            f"model {statistics.median(timed.model_time[window]) * 1000:6.3f} ms/step"
        )
    steps = list(range(1, len(harness) + 1))
    fit = statistics.linear_regression(steps, [cost * 1000 for cost in harness])
    at = ", ".join(f"{fit.intercept + fit.slope * step:.3f} ms at step {step}" for step in FITTED_AT)
    print(f"harness fitted to a + b·step: {at} (b = {fit.slope * 1000:+.3f} µs per step)")
    memory = [f"{peak_memory_kb() / 1024:.1f} MB after {args.steps} steps"]
    if timed.peak_kb_at_memory_step is not None and args.steps > MEMORY_AT:
        memory.insert(0, f"{timed.peak_kb_at_memory_step / 1024:.1f} MB after {MEMORY_AT} steps")
    print(f"peak memory (max RSS) {', '.join(memory)}")
    print(
        f"{'wire' if args.wire else 'replay'} model, {args.steps} steps, python {sys.version.split()[0]}, "
        f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
