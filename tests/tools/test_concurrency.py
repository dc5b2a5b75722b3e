"""How one turn's tool calls are scheduled: read-only neighbours together, the rest alone, answers in order."""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from agentcli.access import NOTHING, Access
from agentcli.contracts import JSON, Concurrency, Decision, Tool, ToolCall, ToolContext, ToolResult
from agentcli.events import Event
from agentcli.executor import ToolExecutor
from agentcli.tools import builtin_tools
from agentcli.tools.bash import BashTool
from agentcli.tools.edit import EditTool
from agentcli.tools.grep import GrepTool
from agentcli.tools.read import ReadTool
from agentcli.tools.registry import ToolRegistry
from agentcli.tools.todo import TodoList, TodoWriteTool
from agentcli.tools.write import WriteTool
from agentcli.workspace.local import LocalWorkspace
from tests.tools.helpers import write
from tests.waiting import CEILING, wait_until


class AllowAll:
    def check(self, tool: Tool, tool_input: JSON, ctx: ToolContext) -> Decision:
        return Decision(True)


class Tracker:
    """Records when each call runs, to see which calls overlapped."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: set[str] = set()
        self.overlaps: dict[str, set[str]] = {}
        self.order: list[str] = []

    def enter(self, call_id: str) -> None:
        with self.lock:
            self.order.append(call_id)
            self.overlaps[call_id] = set(self.running)
            for other in self.running:
                self.overlaps[other].add(call_id)
            self.running.add(call_id)

    def leave(self, call_id: str) -> None:
        with self.lock:
            self.running.discard(call_id)


class Tracked:
    """Wraps a tool to report to a tracker; read-only ones wait at `barrier`, so they must overlap."""

    def __init__(self, tool: Tool, tracker: Tracker, barrier: threading.Barrier | None = None) -> None:
        self.tool = tool
        self.name = tool.name
        self.description = tool.description
        self.input_schema = {**tool.input_schema, "additionalProperties": True}  # lets a call carry its id
        self.concurrency = tool.concurrency
        self.tracker = tracker
        self.barrier = barrier

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        call_id = str(tool_input["_id"])
        real_input = {k: v for k, v in tool_input.items() if k != "_id"}
        self.tracker.enter(call_id)
        try:
            if self.barrier is not None:
                self.barrier.wait()
            else:
                time.sleep(0.05)
            return self.tool.run(real_input, ctx)
        finally:
            self.tracker.leave(call_id)

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return self.tool.access({k: v for k, v in tool_input.items() if k != "_id"}, ctx)


def calls(*specs: tuple[str, JSON]) -> list[ToolCall]:
    return [
        ToolCall(f"toolu_{n}", name, {**tool_input, "_id": f"toolu_{n}"}) for n, (name, tool_input) in enumerate(specs)
    ]


def run_turn(registry: ToolRegistry, batch: list[ToolCall], ctx: ToolContext) -> list[JSON]:
    executor = ToolExecutor(registry, AllowAll())
    events: list[Event] = []
    return executor.run_all(batch, ctx, events.append, {})


def test_four_greps_in_one_turn_run_concurrently_and_answer_in_call_order(tmp_path: Path) -> None:
    write(tmp_path, {f"file{n}.txt": f"needle{n}\n" for n in range(4)})
    tracker = Tracker()
    barrier = threading.Barrier(4, timeout=CEILING)  # passes only if all four run at the same time
    registry = ToolRegistry([Tracked(GrepTool(), tracker, barrier)])
    batch = calls(*[("Grep", {"pattern": f"needle{n}", "output_mode": "content"}) for n in (3, 1, 0, 2)])
    results = run_turn(registry, batch, ToolContext(LocalWorkspace(tmp_path)))
    assert [r["tool_use_id"] for r in results] == ["toolu_0", "toolu_1", "toolu_2", "toolu_3"]
    assert [r["content"] for r in results] == [
        "file3.txt:1:needle3",
        "file1.txt:1:needle1",
        "file0.txt:1:needle0",
        "file2.txt:1:needle2",
    ]
    assert all(len(others) == 3 for others in tracker.overlaps.values())


def test_writes_and_commands_run_alone_in_the_given_order(tmp_path: Path) -> None:
    write(tmp_path, {"a.txt": "one\n"})
    tracker = Tracker()
    pair = threading.Barrier(2, timeout=CEILING)
    registry = ToolRegistry(
        [
            Tracked(ReadTool(), tracker, pair),
            Tracked(GrepTool(), tracker, pair),
            Tracked(EditTool(), tracker),
            Tracked(WriteTool(), tracker),
            Tracked(BashTool(), tracker),
        ]
    )
    batch = calls(
        ("Read", {"file_path": "a.txt"}),
        ("Grep", {"pattern": "one"}),
        ("Edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
        ("Bash", {"command": "cat a.txt >> log.txt"}),
        ("Write", {"file_path": "b.txt", "content": "three\n"}),
        ("Bash", {"command": "cat b.txt >> log.txt"}),
    )
    results = run_turn(registry, batch, ToolContext(LocalWorkspace(tmp_path)))
    assert [r.get("is_error", False) for r in results] == [False] * 6, results
    assert tracker.overlaps["toolu_0"] == {"toolu_1"}  # the two read-only neighbours overlapped
    for alone in ("toolu_2", "toolu_3", "toolu_4", "toolu_5"):
        assert tracker.overlaps[alone] == set()
    assert tracker.order[2:] == ["toolu_2", "toolu_3", "toolu_4", "toolu_5"]
    assert (tmp_path / "log.txt").read_text() == "two\nthree\n"


def test_builtin_tools_order_and_declared_concurrency() -> None:
    registry = builtin_tools()
    assert registry.names() == ["Read", "Write", "Edit", "Bash", "Grep", "Glob"]
    assert {name: tool.concurrency for name in registry.names() if (tool := registry.get(name))} == {
        "Read": "shared",
        "Write": "exclusive",
        "Edit": "exclusive",
        "Bash": "exclusive",
        "Grep": "shared",
        "Glob": "shared",
    }


def test_task_list_updates_run_alone_and_the_last_one_wins(tmp_path: Path) -> None:
    write(tmp_path, {"a.txt": "one\n"})
    tracker = Tracker()
    todos = TodoList()
    registry = ToolRegistry([Tracked(ReadTool(), tracker), Tracked(TodoWriteTool(todos), tracker)])

    def plan(*names: str) -> JSON:
        return {"todos": [{"content": n, "status": "pending", "activeForm": f"Doing {n}"} for n in names]}

    batch = calls(
        ("Read", {"file_path": "a.txt"}),
        ("TodoWrite", plan("first")),
        ("TodoWrite", plan("first", "second")),
        ("Read", {"file_path": "a.txt"}),
    )
    results = run_turn(registry, batch, ToolContext(LocalWorkspace(tmp_path)))

    assert [r.get("is_error", False) for r in results] == [False] * 4, results
    assert all(others == set() for others in tracker.overlaps.values())
    assert tracker.order == ["toolu_0", "toolu_1", "toolu_2", "toolu_3"]
    assert [t.content for t in todos.items] == ["first", "second"]


class CtrlCAsItStarts:
    """A read-only tool whose first call has the user press Ctrl-C as soon as its thread runs it
    (the main thread is then still starting that thread), and works on until `release`."""

    name = "Slow"
    description = "test"
    input_schema: JSON = {"type": "object"}
    concurrency: Concurrency = "shared"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.ended: list[str] = []
        self._main = threading.main_thread().ident

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        if self._main is not None and tool_input["_id"] == "toolu_0":
            signal.pthread_kill(self._main, signal.SIGINT)
        self.release.wait(CEILING)
        self.ended.append(str(tool_input["_id"]))
        return ToolResult("done")

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return NOTHING


def test_close_waits_for_a_call_whose_thread_was_starting_when_the_user_pressed_ctrl_c(tmp_path: Path) -> None:
    """Ctrl-C can land in the main thread while the pool starts a call's thread, before the pool
    has noted that thread; closing must still wait for the call (a sub-agent reports its end)."""
    assert threading.current_thread() is threading.main_thread()
    slow = CtrlCAsItStarts()
    executor = ToolExecutor(ToolRegistry([slow]), AllowAll())
    with pytest.raises(KeyboardInterrupt):
        executor.run_all(
            calls(("Slow", {}), ("Slow", {})), ToolContext(LocalWorkspace(tmp_path)), lambda event: None, {}
        )
    slow.release.set()
    executor.close()
    assert slow.ended == ["toolu_0"]


class WaitsForCancel:
    """A read-only tool that has `press` Ctrl-C and then works until the turn's cancel event is set."""

    name = "Slow"
    description = "test"
    input_schema: JSON = {"type": "object"}
    concurrency: Concurrency = "shared"

    def __init__(self, press: threading.Event) -> None:
        self.press = press
        self.ended = threading.Event()

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        self.press.set()
        ctx.cancel.wait(CEILING)
        self.ended.set()
        return ToolResult("done")

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return NOTHING


def test_a_ctrl_c_that_does_not_wake_the_waiting_main_thread_still_stops_the_wait(tmp_path: Path) -> None:
    """A SIGINT can be caught while the main thread is asleep on a lock without waking it (in
    CPython when it arrives just as the thread goes to sleep; here: it is delivered to another
    thread, the main one blocking it). The wait for concurrent calls must still end at once."""
    assert threading.current_thread() is threading.main_thread()
    press = threading.Event()

    main = threading.get_ident()

    def main_is_asleep_waiting_for_a_call() -> bool:
        frame = sys._current_frames()[main].f_back
        return frame is not None and frame.f_code.co_name == "result" and "futures" in frame.f_code.co_filename

    def ctrl_c() -> None:  # a thread that can take SIGINT: started before the main thread blocks it
        if press.wait(CEILING):
            wait_until(main_is_asleep_waiting_for_a_call, "the main thread waiting for the calls")
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    presser = threading.Thread(target=ctrl_c)
    presser.start()
    slow = WaitsForCancel(press)
    executor = ToolExecutor(ToolRegistry([slow]), AllowAll())
    ctx = ToolContext(LocalWorkspace(tmp_path))
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        with pytest.raises(KeyboardInterrupt):
            executor.run_all(calls(("Slow", {}), ("Slow", {})), ctx, lambda event: None, {})
        assert not slow.ended.is_set()  # the wait ended while the calls still ran
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        ctx.cancel.set()
        presser.join()
        executor.close()
