"""`bench/run`: every benchmark, for agentcli and the peers, in one run, as one table.

Each harness (bench/peers.py) gets its own fake server (tests/fake_anthropic.py, zero latency)
and workspace, so Claude Code's side requests never mix with another harness's. Compared
commands are interleaved (A B A B …) and repeated; each figure is a median with min–max, each
comparison a ratio of two medians from this run. Written: bench/results/<date>.json (every
figure, with its samples' median/min/max/n) and bench/RESULTS.md (the table, the machine, the
versions). Nothing here asserts a timing.

Usage: bench/run [--quick | --smoke] [--no-peers] [--out DIR] [--runs N]

`--smoke` runs every measure once at toy sizes, only to show that bench/run works end to end
(tests/test_bench_run.py runs it); its figures mean nothing, and it writes them to a temporary
folder unless `--out` says where.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import itertools
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentcli.catalog import KNOWN_MODELS  # noqa: E402
from agentcli.contracts import ToolCall, ToolContext, Usage  # noqa: E402
from agentcli.executor import ToolExecutor  # noqa: E402
from agentcli.tools.grep import GrepTool  # noqa: E402
from agentcli.tools.registry import ToolRegistry  # noqa: E402
from agentcli.workspace.local import LocalWorkspace  # noqa: E402
from bench import cache_hits, grep_bench, loop_overhead, render_bench  # noqa: E402
from bench.common import KEY, Figure, Workspace, interleaved, process_cpu_seconds, run_child, seconds  # noqa: E402
from bench.peers import MODEL, Harness, Step, agentcli, claude_code, mini_swe_agent  # noqa: E402
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, reply, text  # noqa: E402

PRICE = KNOWN_MODELS[MODEL]
WINDOWS = ((1, 10), (40, 50), (190, 200))
NOT_APPLICABLE = "n/a"


@dataclass
class Scale:
    runs: int
    grep_files: int
    parallel: int
    render_runs: int
    session_steps: int = 200
    windows: tuple[tuple[int, int], ...] = WINDOWS
    """The steps of the session whose CPU is reported, first and last of each window."""
    render_kb: tuple[int, int] = (100, 200)
    """Two answer sizes, the second twice the first, for the render's linearity."""
    parallel_steps: int = 5

    @classmethod
    def of(cls, mode: str, runs: int | None) -> Scale:
        scale = {
            "full": cls(7, 20_000, 20, 3),
            "quick": cls(runs=3, grep_files=2_000, parallel=4, render_runs=1),
            "smoke": cls(1, 60, 2, 1, 10, ((1, 2), (4, 5), (9, 10)), (10, 20), parallel_steps=2),
        }[mode]
        if runs:
            scale.runs = runs
        return scale


Value = Figure | float | int | str
"""A measured figure, a single number, or why there is none ("n/a: …", "failed: …")."""


@dataclass
class Row:
    key: str
    title: str
    unit: str
    values: dict[str, Value] = field(default_factory=dict)
    ratios: dict[str, float] = field(default_factory=dict)
    note: str = ""

    def ratio(self, name: str, top: str, bottom: str) -> None:
        a, b = self.values.get(top), self.values.get(bottom)
        numbers = [v.median if isinstance(v, Figure) else v for v in (a, b)]
        if all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in numbers) and numbers[1]:
            self.ratios[name] = float(numbers[0]) / float(numbers[1])  # type: ignore[arg-type]


class Rig:
    """One harness's fake server and workspace. The server answers every request through
    `respond`, which a measure sets: a function of the request alone, so parallel runs of a
    session each get the step their own conversation is at."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.api = FakeAnthropic(api_key=KEY).start()
        self.workspace = Workspace(self.api.url)
        self.workspace.env.update(harness.env)
        self.respond: Callable[[RecordedRequest], Reply] = lambda request: reply(text("hi"))
        self.api.script(*[self._dispatch] * 100_000)

    def _dispatch(self, request: RecordedRequest) -> Reply:
        return self.respond(request)

    def argv(self, prompt: str) -> list[str]:
        return self.argv_in(prompt, self.workspace.root)

    def argv_in(self, prompt: str, folder: Path) -> list[str]:
        assert self.harness.prompt_argv is not None
        return self.harness.prompt_argv(prompt, folder)

    def main_requests(self, since: int) -> list[RecordedRequest]:
        return [r for r in self.api.requests[since:] if self.harness.main_conversation(r)]

    def close(self) -> None:
        self.api.stop()
        self.workspace.close()


def scripted(
    harness: Harness, project: Path, steps: list[tuple[str, Step]], answer: str
) -> Callable[[RecordedRequest], Reply]:
    """Answers each request of the session with the step its conversation is at (the count of
    assistant turns so far), then with `answer`; side requests get a short text."""

    def respond(request: RecordedRequest) -> Reply:
        if not harness.main_conversation(request):
            return reply(text("ok"))
        turn = sum(1 for m in request.body.get("messages", []) if m.get("role") == "assistant")
        if turn < len(steps):
            note, step = steps[turn]
            assert harness.tool_call is not None
            return reply(text(note), harness.tool_call(step, project))
        return harness.finish(answer)

    return respond


def reads(count: int) -> list[tuple[str, Step]]:
    """`count` steps that each read 20 lines of notes.txt at another offset (so no harness sees a repeated call)."""
    return [("Reading on.", ("read", {"path": "notes.txt", "offset": 1 + i % 380, "limit": 20})) for i in range(count)]


def guarded(row: Row, name: str, measure: Callable[[], Value]) -> None:
    """Record `measure()` under `name`, or why it failed: a failure is reported, never dropped."""
    try:
        row.values[name] = measure()
    except Exception as error:
        row.values[name] = (
            f"failed: {str(error).strip().splitlines()[0][:160] if str(error).strip() else type(error).__name__}"
        )


# ---------------------------------------------------------------- the measures


def startup(rigs: list[Rig], runs: int) -> list[Row]:
    rows = []
    python = [sys.executable, "-c", "pass"]
    for flag in ("version", "help"):
        row = Row(f"startup.{flag}", f"`--{flag}` (python -c pass beside it)", "ms")
        measures: dict[str, Callable[[], float]] = {}
        measures["python -c pass"] = partial(lambda w: run_child(python, w.project, w.env).wall, rigs[0].workspace)
        for rig in rigs:
            argv = rig.harness.version_argv if flag == "version" else rig.harness.help_argv
            if not rig.harness.ok:
                row.values[rig.harness.name] = rig.harness.status
            elif argv is None:
                row.values[rig.harness.name] = f"{NOT_APPLICABLE}: it has no --{flag}"
            else:
                measures[rig.harness.name] = partial(
                    lambda a, w: run_child(a, w.project, w.env).wall, argv, rig.workspace
                )
        for name, samples in interleaved(runs, measures).items():
            row.values[name] = Figure.of(samples, 1000)
        for rig in rigs:
            row.ratio(f"{rig.harness.name} / python", rig.harness.name, "python -c pass")
        compare_with_agentcli(row, rigs)
        rows.append(row)
    return rows


def compare_with_agentcli(row: Row, rigs: list[Rig]) -> None:
    for rig in rigs[1:]:
        row.ratio(f"agentcli / {rig.harness.name}", "agentcli", rig.harness.name)


def first_request(rig: Rig) -> float:
    """Launch of `… "hi"` to its first request arriving at the fake."""
    rig.respond = scripted(rig.harness, rig.workspace.project, [], "hi")
    seen = len(rig.api.requests)
    began = time.monotonic()
    run_child(rig.argv("hi"), rig.workspace.project, rig.workspace.env, timeout=120)
    sent = rig.main_requests(seen)
    if not sent:
        raise RuntimeError("it sent no request")
    return sent[0].received_at - began


def launch(rigs: list[Rig], runs: int) -> tuple[Row, Row]:
    row = Row("first_request", 'launch of a one-shot `"hi"` to its first request', "ms")
    tokens = Row("first_request_tokens", 'first request for "hi": tokens (system + tools + messages)', "tokens")
    measures: dict[str, Callable[[], float]] = {}
    for rig in rigs:
        if rig.harness.ok:
            measures[rig.harness.name] = partial(first_request, rig)
        else:
            row.values[rig.harness.name] = tokens.values[rig.harness.name] = rig.harness.status
    for name, samples in careful_interleaved([row], runs, measures).items():
        row.values[name] = Figure.of(samples, 1000)
    for rig in rigs:
        if not rig.harness.ok:
            continue
        bodies = [r.body for r in rig.api.requests if rig.harness.main_conversation(r)]
        if bodies:
            size = cache_hits.first_request_size(bodies[0])
            tokens.values[rig.harness.name] = size["total"]
            tokens.values[f"{rig.harness.name}: split"] = (
                f"system {size['system']:,} + tools {size['tools']:,} + messages {size['messages']:,}"
            )
        else:
            tokens.values.setdefault(rig.harness.name, row.values.get(rig.harness.name, "failed: no request"))
    compare_with_agentcli(row, rigs)
    compare_with_agentcli(tokens, rigs)
    return row, tokens


Sample = TypeVar("Sample")


def careful_interleaved(
    rows: list[Row], runs: int, measures: dict[str, Callable[[], Sample]]
) -> dict[str, list[Sample]]:
    """`interleaved`, but a harness whose run fails is reported as failed in every row of `rows`
    and left out of the next rounds."""
    results: dict[str, list[Sample]] = {name: [] for name in measures}
    live = dict(measures)
    for round_index in range(runs):
        names = list(live)
        shift = round_index % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            try:
                results[name].append(live[name]())
            except Exception as error:
                for row in rows:
                    row.values[name] = f"failed: {str(error).strip()[:200]}"
                del live[name]
                results.pop(name)
    return results


def session_cpu(rig: Rig, steps: int) -> tuple[list[float], int]:
    """A `steps`-step session: the harness process's own CPU (threads, not children) between
    consecutive requests, i.e. per step; and its max RSS."""
    rig.respond = scripted(rig.harness, rig.workspace.project, reads(steps), "done")
    pid: list[int] = []
    stamps: list[float] = []
    lock = threading.Lock()
    inner = rig.respond

    def respond(request: RecordedRequest) -> Reply:
        if rig.harness.main_conversation(request) and pid:
            with lock:
                stamps.append(process_cpu_seconds(pid[0]))
        return inner(request)

    rig.respond = respond
    done = run_child(
        rig.argv("read notes.txt, 20 lines at a time"),
        rig.workspace.project,
        rig.workspace.env,
        started=pid.append,
        timeout=600,
    )
    if len(stamps) < steps + 1:
        raise RuntimeError(f"the session ended after {len(stamps)} of {steps + 1} requests")
    return [b - a for a, b in itertools.pairwise(stamps)], done.max_rss_kb


def per_step(rigs: list[Rig], steps: int, windows: tuple[tuple[int, int], ...]) -> list[Row]:
    rows = {w: Row(f"step_cpu.{w[0]}-{w[1]}", f"CPU per step, steps {w[0]}–{w[1]} of {steps}", "ms") for w in windows}
    memory = Row("peak_memory", f"peak memory (max RSS) of the {steps}-step session", "MB")
    for rig in rigs:
        name = rig.harness.name
        if not rig.harness.ok:
            for row in [*rows.values(), memory]:
                row.values[name] = rig.harness.status
            continue
        try:
            cpu, rss = session_cpu(rig, steps)
        except Exception as error:
            for row in [*rows.values(), memory]:
                row.values[name] = f"failed: {str(error).strip()[:160]}"
            continue
        for (first, last), row in rows.items():
            row.values[name] = Figure.of(cpu[first - 1 : last], 1000)
        memory.values[name] = rss / 1024
    harness_cpu = in_process_step_cpu(steps, windows)
    for window, row in rows.items():
        row.values["agentcli, in-process harness only"] = harness_cpu[window]
        compare_with_agentcli(row, rigs)
    compare_with_agentcli(memory, rigs)
    note = "process CPU between consecutive requests; in-process: loop_overhead.py (model CPU excluded)"
    rows[windows[0]].note = note
    return [*rows.values(), memory]


def in_process_step_cpu(steps: int, windows: tuple[tuple[int, int], ...]) -> dict[tuple[int, int], Figure]:
    """bench/loop_overhead.py's figure: `run`'s code in this process, harness CPU minus the model's."""
    timed = loop_overhead.run_session(loop_overhead.Replay(steps), steps, None)
    ends = timed.starts[1:]
    harness = [end - start - spent for start, end, spent in zip(timed.starts, ends, timed.model_time, strict=False)]
    return {(first, last): Figure.of(harness[first - 1 : last], 1000) for first, last in windows}


def render(rigs: list[Rig], runs: int, sizes: tuple[int, int]) -> list[Row]:
    rows = []
    for size in sizes:
        text_ = render_bench.markdown_answer(size * 1024)
        row = Row(f"render.{size}kb", f"streaming render of {size} KB of Markdown, CPU", "s")
        row.values["agentcli"] = Figure.of([render_bench.streamed_cpu(text_)[0] for _ in range(runs)])
        rows.append(row)
    not_ours(rows, rigs, "it renders no Markdown in the terminal")
    first, second = rows[0].values["agentcli"], rows[1].values["agentcli"]
    assert isinstance(first, Figure) and isinstance(second, Figure)
    rows[1].ratios[f"{sizes[1]} KB / {sizes[0]} KB ({sizes[1] / sizes[0]:.2f} = linear)"] = second.median / first.median
    return rows


def not_ours(rows: list[Row], rigs: list[Rig], why: str) -> None:
    for row in rows:
        for rig in rigs[1:]:
            row.values[rig.harness.name] = rig.harness.status if not rig.harness.ok else f"{NOT_APPLICABLE}: {why}"


def grep(rigs: list[Rig], files: int, runs: int) -> list[Row]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="agentcli-grep-bench-") as temp:
        tree = Path(temp) / "tree"
        grep_bench.generate(tree, files, ignored=min(2_000, files))
        ctx = ToolContext(LocalWorkspace(tree))
        tool = GrepTool(use_ripgrep=None)
        shapes = grep_bench.query_shapes()
        for label, (query, command) in shapes.items():
            row = Row(
                f"grep.{label.split(',')[0].replace(' ', '_').replace('*.', '')}",
                f"Grep tool vs bare rg, {files:,} files: {label}",
                "ms",
            )
            measures: dict[str, Callable[[], object]] = {"agentcli": partial(grep_bench.run, tool, ctx, query)}
            if shutil.which("rg"):
                measures["bare rg"] = partial(grep_bench.bare_rg, tree, command)
            else:
                row.values["bare rg"] = "not measured: rg is not on PATH (the Grep tool used its Python engine)"
            for action in measures.values():
                action()  # warm the page cache
            timed = interleaved(runs, {name: partial(seconds, action) for name, action in measures.items()})
            row.values.update({name: Figure.of(samples, 1000) for name, samples in timed.items()})
            row.ratio("Grep / rg", "agentcli", "bare rg")
            rows.append(row)
        four = [query for query, _ in shapes.values()]
        executor = ToolExecutor(ToolRegistry([tool]), grep_bench.AllowAll())
        batch = [ToolCall(f"toolu_{i}", "Grep", q) for i, q in enumerate(four)]
        row = Row("grep.four_parallel", "four Greps in one turn: concurrent vs one after another", "ms")
        timed = interleaved(
            runs,
            {
                "agentcli": partial(seconds, partial(executor.run_all, batch, ctx, grep_bench.ignore, {})),
                "sequential": partial(seconds, partial(grep_bench.run_each, tool, ctx, four)),
            },
        )
        row.values.update({name: Figure.of(samples, 1000) for name, samples in timed.items()})
        row.ratio("sequential / concurrent (speed-up)", "sequential", "agentcli")
        rows.append(row)
    not_ours(rows, rigs, "its search runs as the model's shell command, not a tool to time apart")
    return rows


def cache_session(rigs: list[Rig]) -> list[Row]:
    share = Row("cache.read_share", "12-step session: cache-read share of input tokens", "%")
    written = Row("cache.written", "12-step session: tokens written to the cache", "tokens")
    cost = Row("cache.cost_usd", f"12-step session: cost at {MODEL} prices (one table for all)", "$")
    side = Row("cache.side_requests", "12-step session: requests besides the session's own", "requests")
    rows = [share, written, cost, side]
    for rig in rigs:
        name = rig.harness.name
        if not rig.harness.ok:
            for row in rows:
                row.values[name] = rig.harness.status
            continue
        try:
            usages, extra = one_session(rig)
        except Exception as error:
            for row in rows:
                row.values[name] = f"failed: {str(error).strip()[:160]}"
            continue
        total = Usage()
        for u in usages:
            total.add(
                Usage(
                    u["input_tokens"],
                    u["output_tokens"],
                    u["cache_creation_input_tokens"],
                    u["cache_read_input_tokens"],
                )
            )
        share.values[name] = 100 * cache_hits.ratio(usages)
        written.values[name] = total.cache_creation_input_tokens
        cost.values[name] = PRICE.cost_usd(total)
        side.values[name] = extra
    for row in rows[:3]:
        compare_with_agentcli(row, rigs)
    share.note = "warm: earlier runs of the same harness on the same server; tokens ≈ chars/4 as the fake counts"
    return rows


def one_session(rig: Rig) -> tuple[list[dict[str, int]], int]:
    project = rig.workspace.root / "inventory"
    if not project.exists():
        cache_hits.make_project(project)
    rig.respond = scripted(rig.harness, project, cache_hits.SESSION, cache_hits.ANSWER)
    seen = len(rig.api.requests)
    env = dict(rig.workspace.env, **cache_hits.GIT_IDENTITY)
    run_child(rig.argv("Review inventory.py for bugs"), project, env, timeout=300)
    requests = rig.api.requests[seen:]
    main = [r for r in requests if rig.harness.main_conversation(r)]
    if len(main) != cache_hits.STEPS:
        raise RuntimeError(f"the session made {len(main)} requests, not {cache_hits.STEPS}")
    return [r.usage or {} for r in main], len(requests) - len(main)


def parallel(rigs: list[Rig], count: int, length: int) -> Row:
    row = Row("parallel", f"{count} runs of {length} steps started together on {os.cpu_count()} cores, wall", "s")
    for rig in rigs:
        if not rig.harness.ok:
            row.values[rig.harness.name] = rig.harness.status
            continue
        guarded(row, rig.harness.name, partial(parallel_runs, rig, count, length))
    compare_with_agentcli(row, rigs)
    return row


def parallel_runs(rig: Rig, count: int, length: int) -> float:
    rig.respond = scripted(rig.harness, rig.workspace.project, reads(length - 1), "done")
    began = time.perf_counter()
    folders = [rig.workspace.root / f"run{i}" for i in range(count)]
    procs = []
    for folder in folders:
        folder.mkdir(exist_ok=True)
        procs.append(
            subprocess.Popen(
                rig.argv_in("read notes.txt", folder),
                cwd=rig.workspace.project,
                env=rig.workspace.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,  # 20 runs' progress lines would bury the table
            )
        )
    failed = sum(1 for proc in procs if proc.wait(timeout=600) != 0)
    elapsed = time.perf_counter() - began
    if failed:
        raise RuntimeError(f"{failed} of the {count} runs failed")
    return elapsed


# ---------------------------------------------------------------- the REPL, in tmux


class Tmux:
    """A program on a 120x40 tmux screen of its own (a private tmux server, `-L`)."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.socket = f"agentcli-bench-{os.getpid()}-{time.monotonic_ns()}"
        self.env = env
        self.began = time.monotonic()
        self._tmux("new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", "-c", str(cwd), shlex.join(argv))

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "bench")

    def wait_for(self, wanted: str, ceiling: float = 60.0) -> float:
        """Seconds since launch when `wanted` first shows on screen."""
        deadline = time.monotonic() + ceiling
        while time.monotonic() < deadline:
            if wanted in self.screen():
                return time.monotonic() - self.began
            time.sleep(0.005)
        last = " | ".join(line.strip() for line in self.screen().splitlines() if line.strip())[-160:]
        raise RuntimeError(f"{wanted!r} not on screen within {ceiling:.0f} s; screen: {last}")

    def keys(self, literal: str, *named: str) -> None:
        if literal:
            self._tmux("send-keys", "-t", "bench", "-l", literal)
        if named:
            self._tmux("send-keys", "-t", "bench", *named)

    def close(self) -> None:
        self._tmux("kill-server")
        with contextlib.suppress(OSError):
            (Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}" / self.socket).unlink()


def repl(rigs: list[Rig], runs: int) -> list[Row]:
    painted = Row("repl.painted", "REPL: launch to the prompt painted", "ms")
    echoed = Row("repl.echoed", "REPL: launch to the first typed key echoed", "ms")
    enter = Row("repl.enter_to_request", "REPL: Enter (typed at first paint) to the request", "ms")
    rows = [painted, echoed, enter]
    terminal = "tmux" if shutil.which("tmux") or install_tmux() else None
    if terminal is None:
        return [_fallback(row, rigs) for row in rows]
    measures: dict[str, Callable[[], tuple[float, float, float]]] = {}
    for rig in rigs:
        if not rig.harness.ok or rig.harness.repl_argv is None:
            for row in rows:
                row.values[rig.harness.name] = (
                    rig.harness.status if not rig.harness.ok else f"{NOT_APPLICABLE}: no REPL"
                )
            continue
        prepare_repl_home(rig)
        measures[rig.harness.name] = partial(repl_once, rig)
    samples = careful_interleaved(rows, runs, measures)
    for name, triples in samples.items():
        for index, row in enumerate(rows):
            row.values[name] = Figure.of([t[index] for t in triples], 1000)
    for row in rows:
        compare_with_agentcli(row, rigs)
    painted.note = "in tmux (a private server per launch), screen polled every 5 ms"
    return rows


def _fallback(row: Row, rigs: list[Rig]) -> Row:
    for rig in rigs:
        row.values[rig.harness.name] = "not measured: tmux is not installed and apt-get could not install it"
    return row


def install_tmux() -> bool:
    if shutil.which("apt-get") is None:
        return False
    print("installing tmux with apt-get …", file=sys.stderr, flush=True)
    for argv in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "tmux"]):
        subprocess.run(argv, capture_output=True, check=False, timeout=300)
    return shutil.which("tmux") is not None


def prepare_repl_home(rig: Rig) -> None:
    """Claude Code's first start asks for a theme, a trust decision and the API key's approval:
    its temporary HOME gets the answers a returning user has already given."""
    if rig.harness.name != "Claude Code":
        return
    state = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
        "projects": {str(rig.workspace.project): {"hasTrustDialogAccepted": True, "allowedTools": []}},
    }
    (rig.workspace.home / ".claude.json").write_text(json.dumps(state))


def repl_once(rig: Rig) -> tuple[float, float, float]:
    """(launch → prompt painted, launch → typed key echoed) in one launch; Enter at first paint → request in another."""
    env = dict(rig.workspace.env, TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    assert rig.harness.repl_argv is not None
    rig.respond = scripted(rig.harness, rig.workspace.project, [], "hello")
    screen = Tmux(rig.harness.repl_argv, rig.workspace.project, env)
    try:
        paint = screen.wait_for(rig.harness.repl_ready)
        screen.keys("zq")
        echo = screen.wait_for("zq")
    finally:
        screen.close()
    screen = Tmux(rig.harness.repl_argv, rig.workspace.project, env)
    try:
        screen.wait_for(rig.harness.repl_ready)
        seen = len(rig.api.requests)
        sent = time.monotonic()
        screen.keys("hi", *rig.harness.repl_submit)
        deadline = sent + 20
        while not rig.main_requests(seen):
            if time.monotonic() > deadline:
                raise RuntimeError(f"Enter ({' '.join(rig.harness.repl_submit)}) sent no request within 20 s")
            time.sleep(0.002)
        request = rig.main_requests(seen)[0].received_at - sent
    finally:
        screen.close()
    return paint, echo, request


# ---------------------------------------------------------------- the report


def machine() -> dict[str, Any]:
    model = (
        next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            platform.processor() or "unknown",
        )
        if Path("/proc/cpuinfo").exists()
        else platform.processor()
    )
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "load_1m": os.getloadavg()[0],
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }


def tool_versions() -> dict[str, str | None]:
    def first(argv: list[str]) -> str | None:
        if shutil.which(argv[0]) is None:
            return None
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        lines = done.stdout.strip().splitlines()
        return lines[0] if lines else None

    return {"ripgrep": first(["rg", "--version"]), "tmux": first(["tmux", "-V"]), "node": first(["node", "--version"])}


def as_json(value: Value) -> Any:
    if isinstance(value, Figure):
        return value.as_json()
    if isinstance(value, str):
        return {"status": value}
    return {"value": value}


def cell(value: Value | None, unit: str) -> str:
    if value is None:
        return ""
    if isinstance(value, Figure):
        return value.text()
    if isinstance(value, str):
        return value
    if unit == "$":
        return f"${value:.4f}"
    if unit == "%":
        return f"{value:.1f}%"
    return f"{value:,.0f}" if isinstance(value, int) or value >= 100 else f"{value:.2f}"


def table(rows: list[Row], names: list[str]) -> list[list[str]]:
    lines = [["measure", "unit", *names, "compared (ratios from this run)"]]
    for row in rows:
        others = [f"{k}: {cell(v, row.unit)}" for k, v in row.values.items() if k not in names]
        ratios = [f"{k} {v:.2f}x" for k, v in row.ratios.items()]
        lines.append(
            [row.title, row.unit, *(cell(row.values.get(n), row.unit) for n in names), "; ".join(others + ratios)]
        )
    return lines


def plain(lines: list[list[str]]) -> str:
    widths = [min(max(len(line[i]) for line in lines), 60) for i in range(len(lines[0]))]
    return "\n".join("  ".join(c[:60].ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines)


def markdown(lines: list[list[str]]) -> str:
    def esc(c: str) -> str:
        return c.replace("|", "\\|")

    head, *body = lines
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(esc(c) for c in line) + " |" for line in body]
    return "\n".join(out)


def write(out: Path, report: dict[str, Any], lines: list[list[str]], rows: list[Row]) -> Path:
    results = out / "results"
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{report['date'][:10]}{'' if report['mode'] == 'full' else '-' + report['mode']}.json"
    path.write_text(json.dumps(report, indent=2) + "\n")
    m = report["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in report["versions"].items() if v)
    notes = [f"- {row.title}: {row.note}" for row in rows if row.note]
    (out / "RESULTS.md").write_text(
        "# Benchmark results\n\n"
        f"Written by `bench/run{'' if report['mode'] == 'full' else ' --' + report['mode']}` on {report['date']} "
        f"in {report['seconds']:.0f} s; every figure is a median (min–max) of {report['runs']} interleaved runs "
        f"unless it is a single number; every ratio compares medians of this one run. Figures: `{path.name}`.\n\n"
        f"Machine: {m['cpu']}, {m['cores']} cores, load {m['load_1m']:.2f} at the start, "
        f"{m['os']}, Python {m['python']}.\n\n"
        f"Versions: {versions}.\n\n"
        + "\n".join(
            f"- {name}: {peer['status']}" + (f" ({peer['version']})" if peer.get("version") else "")
            for name, peer in report["peers"].items()
        )
        + "\n\n"
        + markdown(lines)
        + "\n\n"
        + "\n".join(notes)
        + "\n"
    )
    return path


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench/run", description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--quick", action="store_true", help="fewer runs, a 2,000-file tree, 4 parallel runs (about a minute)"
    )
    size.add_argument(
        "--smoke", action="store_true", help="every measure once at toy sizes: checks that this works, measures nothing"
    )
    parser.add_argument("--no-peers", action="store_true", help="measure agentcli only; peers are reported as skipped")
    parser.add_argument(
        "--out", type=Path, help="where results/<date>.json and RESULTS.md go (bench/; with --smoke a temp folder)"
    )
    parser.add_argument("--runs", type=int, help="repetitions of each interleaved measure")
    args = parser.parse_args()
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    out: Path = args.out or (Path(tempfile.mkdtemp(prefix="agentcli-bench-smoke-")) if args.smoke else ROOT / "bench")
    scale = Scale.of(mode, args.runs)
    began = time.monotonic()
    date = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    host = machine()
    harnesses = [agentcli(), claude_code(not args.no_peers), mini_swe_agent(not args.no_peers)]
    rigs = [Rig(h) for h in harnesses]
    rows: list[Row] = []
    try:
        stages: list[tuple[str, Callable[[], list[Row]]]] = [
            ("start-up", lambda: startup(rigs, scale.runs)),
            ("first request", lambda: list(launch(rigs, scale.runs))),
            ("REPL", lambda: repl(rigs, scale.runs)),
            ("per-step CPU", lambda: per_step(rigs, scale.session_steps, scale.windows)),
            ("render", lambda: render(rigs, scale.render_runs, scale.render_kb)),
            ("Grep", lambda: grep(rigs, scale.grep_files, scale.runs)),
            ("12-step session", lambda: cache_session(rigs)),
            ("parallel runs", lambda: [parallel(rigs, scale.parallel, scale.parallel_steps)]),
        ]
        for stage, measure in stages:
            print(f"[{time.monotonic() - began:5.0f} s] {stage} …", file=sys.stderr, flush=True)
            with contextlib.redirect_stdout(io.StringIO()):
                rows.extend(measure())
    finally:
        for rig in rigs:
            rig.close()
    names = [h.name for h in harnesses]
    lines = table(rows, names)
    report = {
        "date": date,
        "mode": mode,
        "runs": scale.runs,
        "seconds": time.monotonic() - began,
        "machine": host,
        "versions": {"agentcli": harnesses[0].version, **{h.name: h.version for h in harnesses[1:]}, **tool_versions()},
        "peers": {h.name: {"status": h.status, "version": h.version} for h in harnesses},
        "price_table": {
            "model": MODEL,
            "input_usd_per_mtok": PRICE.input_usd_per_mtok,
            "output_usd_per_mtok": PRICE.output_usd_per_mtok,
            "source": "agentcli/catalog.py",
        },
        "measures": {
            row.key: {
                "title": row.title,
                "unit": row.unit,
                "values": {k: as_json(v) for k, v in row.values.items()},
                "ratios": row.ratios,
                "note": row.note,
            }
            for row in rows
        },
    }
    path = write(out, report, lines, rows)
    print(plain(lines))
    print(f"\n{time.monotonic() - began:.0f} s; figures in {path}, table in {out / 'RESULTS.md'}")


if __name__ == "__main__":
    main()
