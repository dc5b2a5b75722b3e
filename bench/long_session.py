"""A 2,000-step session: its peak memory, the harness's CPU per step late against early, and
resuming it.

One tool-using conversation of `--steps` steps runs through `agentcli run`'s own code
(`run_once`, in-process, as `loop_overhead.py` does): each step a Read of 20 lines of one of 100
files, every 25th a Write of a new file (acceptEdits), and a TodoWrite every 100. The model is a
replay that keeps nothing and reports as input tokens what it was sent (bytes / 4), so
auto-compaction comes when it would for a real model with a 200k window (`--window`); it answers a
summary request (no tools) with a summary. What it was sent is the body the Anthropic provider
builds for the request (`DirectRoute.body`, cache breakpoints marked), built on the harness's
clock: agentcli builds it for every request, and the whole conversation goes in it.

Why not size the request with `json.dumps` of the whole conversation, as this replay once did:
that walk over every message (2 MB of JSON by step 1,400) is not agentcli's work, yet the
harness's next step ran slower after it (colder caches, the allocator's state), the more so the
longer the walk. In sequence, the last steps then looked 1.7–2× the early ones on an idle machine
while the same steps cost 1.0× side by side (where every step runs after the other process's).
In one process taking turns, request by request, between that walk and a running count of the
size, the harness's step after a walk cost 1.1× the step after a count at step 50 (a 0.5 ms walk)
and 1.4–1.6× at step 1,400 (an 8 ms walk). Meanwhile what agentcli itself does with the whole
conversation every request, building the body, was not counted at all: at 3,000 messages that
took 3.2–3.6 ms of CPU a request, more than the rest of the step, until the body reused the
encoding of the messages it had sent before (`agentcli.providers.body`: 0.45–0.6 ms).

On a busy machine read the side-by-side figure: the sequential medians compare steps run seconds
apart, under whatever load the other processes put on the caches then, and swing either way.
Reported:

- side by side: the long session's last `PAIRED` steps take turns, one step each, with the first
  steps of a new session in another process (`Pairing`), so both run under the same load; the
  medians of their ordinary steps and the ratio (target ≤ 1.2);
- harness CPU per step (the step's CPU minus the model's, the request's body included), median of
  steps 5–15 and of the last 11 steps, their ratio (target ≤ 1.2), and a line fitted through every
  ordinary step read at step 10 and at the last; steps where a compaction ran are left out of those
  and reported apart (their number and median CPU, summary request excluded);
- the garbage collector's collections by generation over the long session, and their CPU;
- peak memory (max RSS) of the process at the end (target ≤ 80 MB);
- resuming it: the installed `agentcli run -c` (a child process) continuing the session against
  the fake server, launch to the request's arrival, median of `--runs` (target ≤ 1 s), beside
  `agentcli run` of a new session (interleaved, so the machine's load weighs on both alike); and
  the transcript's size.

Usage: .venv/bin/python bench/long_session.py [--steps N] [--runs N] [--window TOKENS]
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from multiprocessing.context import BaseContext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.cache import with_cache_breakpoints
from agentcli.catalog import DEFAULT_MODEL
from agentcli.contracts import JSON, ModelRequest, ModelResponse, StreamListener, Usage
from agentcli.providers.anthropic import DirectRoute
from agentcli.providers.http import Endpoint
from agentcli.providers.timeouts import Timeouts
from agentcli.runner import RunOptions, run_once
from bench.loop_overhead import FILES, isolated, peak_memory_kb

AGENTCLI = str(Path(sys.executable).parent / "agentcli")
WINDOWS = ((5, 15, 11), (5, 55, 51))
"""(first, last) ordinary steps early, and how many of the last ordinary steps, whose medians are compared."""
PAIRED = 70
"""The last steps of the long session that take turns with a new session's first steps."""
YOUNG_STEPS = 60
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


class Collections:
    """The cyclic garbage collector's work inside the `with` block: collections of each generation
    and the CPU they took (does it walk the growing conversation on the harness's time?)."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.cpu = 0.0
        self._began = 0.0

    def __enter__(self) -> Collections:
        gc.callbacks.append(self._observe)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._observe)

    def _observe(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.process_time()
        else:
            self.count[info["generation"]] += 1
            self.cpu += time.process_time() - self._began


class Pairing:
    """Two sessions in two processes taking turns, one step each: the one handing over waits
    until the other hands back. Each process's CPU clock counts only its own work, and both
    steps of a pair run under the same load."""

    def __init__(self, context: BaseContext) -> None:
        self.turn_of = {"old": context.Semaphore(0), "young": context.Semaphore(0)}
        self.young_gone = context.Event()

    def wait_for_turn(self, me: str) -> None:
        self.turn_of[me].acquire()

    def hand_over(self, me: str) -> None:
        """Let the other session take a step, and wait for it to hand back (at once when the
        young one has ended)."""
        if self.young_gone.is_set():
            return
        self.turn_of["young" if me == "old" else "old"].release()
        self.wait_for_turn(me)

    def young_ended(self) -> None:
        self.young_gone.set()
        self.turn_of["old"].release()


class LongReplay:
    """A `Model` that answers `steps` tool steps, then "done"; a summary request with a summary.
    It keeps nothing but the clock readings: when each request came (CPU), the CPU spent inside
    it, and whether it was a summary request.

    With `pairing`, from step `paired_from` on it hands over to the other session of the pair
    after each answer (`Pairing`), and `on_paired` is called once as that begins (to start the
    other); `paired` holds the steps taken in turns."""

    def __init__(
        self,
        steps: int,
        pairing: Pairing | None = None,
        role: str = "old",
        paired_from: int = 0,
        on_paired: Callable[[], None] = lambda: None,
    ) -> None:
        self.steps = steps
        self.pairing = pairing
        self.role = role
        self.paired_from = paired_from
        self.on_paired = on_paired
        self.paired: set[int] = set()
        self.step = 0
        self.starts: list[float] = []
        self.model_cpu: list[float] = []
        self.summaries: list[int] = []
        """The tool step after which each summary request came."""
        self.wire = DirectRoute(Endpoint("http://127.0.0.1:9", {}, "ANTHROPIC_BASE_URL", {}), Timeouts())
        """Builds each request's body as the Anthropic provider does (nothing is sent)."""

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        body = self.wire.body(with_cache_breakpoints(request))  # agentcli's work, on the harness's clock
        began = time.process_time()
        try:
            usage = Usage(input_tokens=len(body) // 4, output_tokens=50)
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
            self._take_turns(request)

    def _take_turns(self, request: ModelRequest) -> None:
        """In a pair, after a tool request's answer: the other session's step, then this one's
        (waiting costs no CPU, so the step's CPU is still its own)."""
        if self.pairing is None or not request.tools or self.step < self.paired_from:
            return
        if self.step == self.paired_from and self.role == "old":
            self.on_paired()  # the young session starts, and hands over at its first request
            self.pairing.wait_for_turn(self.role)
        elif not self.pairing.young_gone.is_set():
            self.pairing.hand_over(self.role)
        if not self.pairing.young_gone.is_set():
            self.paired.add(self.step)

    def close(self) -> None:
        pass


def run_long_session(
    root: Path, steps: int, window: int = WINDOW, model: LongReplay | None = None
) -> tuple[LongReplay, float, Path]:
    """The session under `root` with a model of a `window`-token context, the model, the CPU clock
    at its end, and the project folder."""
    model = model or LongReplay(steps)
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


def run_paired(root: Path, steps: int, window: int) -> tuple[LongReplay, float, Path, dict[int, float]]:
    """`run_long_session`, whose last `PAIRED` steps take turns with the first steps of a new
    session in another process (`Pairing`); also that new session's ordinary steps."""
    context = multiprocessing.get_context("spawn")
    pairing = Pairing(context)
    young_file = root / "young.json"
    young = context.Process(target=run_young, args=(root / "young", YOUNG_STEPS, pairing, young_file))
    model = LongReplay(steps, pairing, "old", paired_from=steps - PAIRED, on_paired=young.start)
    model, finished, project = run_long_session(root, steps, window, model)
    young.join()
    if young.exitcode != 0:
        raise RuntimeError(f"the new session beside the long one failed (exit {young.exitcode})")
    young_steps = {int(step): cost for step, cost in json.loads(young_file.read_text()).items()}
    return model, finished, project, young_steps


def run_young(root: Path, steps: int, pairing: Pairing, out: Path) -> None:
    """The new session of a pair (in its own process): its ordinary steps' harness CPU go to `out`."""
    root.mkdir()
    try:
        model, finished, _ = run_long_session(root, steps, model=LongReplay(steps, pairing, "young"))
        ordinary, _ = harness_per_step(model, finished)
        out.write_text(json.dumps(ordinary))
    finally:
        pairing.young_ended()


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
    session in `project`, and beside it (interleaved) `run` of a new session in an empty project;
    and (`… cpu`) the child's own CPU seconds by then, which a loaded machine inflates far less."""
    import threading

    from bench.common import KEY, interleaved, process_cpu_seconds, run_child
    from tests.fake_anthropic import FakeAnthropic, reply, text

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTCLI_", "OPENAI_"))}
    env.update(HOME=str(root), AGENTCLI_HOME=str(root / "home"), NO_COLOR="1", TERM="dumb", ANTHROPIC_API_KEY=KEY)
    empty = root / "empty"
    empty.mkdir()

    cpu: dict[str, list[float]] = {"resume cpu": [], "new cpu": []}

    def launch(name: str, argv: list[str], cwd: Path) -> float:
        with FakeAnthropic(api_key=KEY) as api:
            api.script(reply(text("Going on."), delay=0.3))  # the child waits for the answer meanwhile
            spent: list[float] = []

            def sample(pid: int) -> None:
                def at_first_request() -> None:
                    api.wait_for_requests(1, timeout=120)
                    spent.append(process_cpu_seconds(pid))

                threading.Thread(target=at_first_request, daemon=True).start()

            launched = time.monotonic()
            run_child([AGENTCLI, *argv], cwd, {**env, "ANTHROPIC_BASE_URL": api.url}, started=sample)
            cpu[f"{name} cpu"].extend(spent)
            return api.requests[0].received_at - launched

    wall = interleaved(
        runs,
        {
            "resume": lambda: launch("resume", ["run", "-c", "go on"], project),
            "new": lambda: launch("new", ["run", "hi"], empty),
        },
    )
    return {**wall, **cpu}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=5, help="resumes to time")
    parser.add_argument("--window", type=int, default=WINDOW, help="the model's context window, in tokens")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with Collections() as collections:
            model, finished, project, young = run_paired(root, args.steps, args.window)
        peak = peak_memory_kb() / 1024
        ordinary, compacting = harness_per_step(model, finished)
        paired_old = [ordinary[s] for s in sorted(model.paired) if s in ordinary]
        paired_new = [young[s] for s in sorted(young) if 5 <= s <= YOUNG_STEPS]  # not its last: the session's end
        old_median, new_median = statistics.median(paired_old), statistics.median(paired_new)
        print(
            f"side by side (two processes taking turns, one step each): steps 5–{YOUNG_STEPS} of a new session "
            f"{new_median * 1000:.3f} ms, steps {min(model.paired)}–{max(model.paired)} of the long one "
            f"{old_median * 1000:.3f} ms (late / early {old_median / new_median:.2f}x, target ≤ 1.2x)"
        )
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
        gen0, gen1, gen2 = collections.count
        print(
            f"garbage collector over the long session: {gen0} young, {gen1} middle and {gen2} full "
            f"collections, {collections.cpu * 1000:.1f} ms of CPU in all"
        )
        print(f"peak memory (max RSS) after {args.steps} steps: {peak:.1f} MB (target ≤ 80 MB)")
        [transcript] = (root / "home" / "projects").glob("*/*.jsonl")
        size = transcript.stat().st_size
        lines = sum(1 for _ in transcript.open("rb"))
        launches = first_request_seconds(root, project, args.runs)
        resume, new, resume_cpu, new_cpu = (
            statistics.median(launches[name]) for name in ("resume", "new", "resume cpu", "new cpu")
        )
        print(
            f"launch to first request, median of {args.runs}: run -c of the {args.steps}-step session "
            f"{resume * 1000:.0f} ms (target ≤ 1 s), run of a new session beside it {new * 1000:.0f} ms "
            f"(resume / new {resume / new:.2f}x); transcript {size / 1e6:.1f} MB, {lines:,} lines"
        )
        print(
            f"  the child's CPU by its first request: run -c {resume_cpu * 1000:.0f} ms, run {new_cpu * 1000:.0f} ms "
            f"(+{(resume_cpu - new_cpu) * 1000:.0f} ms to load and replay the session)"
        )
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
