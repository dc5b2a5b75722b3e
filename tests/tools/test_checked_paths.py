"""The path checked is the path used: a folder swapped for a symlink after the gate's check is refused.

Calls go through the real Gate and ToolExecutor, as in a session; the swap happens after
the gate has approved the call (deterministically, from a gate wrapper) or all the time
(from a thread racing 200 calls).
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

import pytest

from agentcli.contracts import JSON, Decision, Tool, ToolCall, ToolContext, ToolResult
from agentcli.events import Event
from agentcli.executor import ToolExecutor
from agentcli.permissions.gate import Gate
from agentcli.tools import builtin_tools
from agentcli.workspace.local import LocalWorkspace

SECRET = "OUTSIDE SECRET\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the project, holding files the model must never read or change."""
    folder = tmp_path / "outside"
    folder.mkdir()
    for name in ("f.txt", "e.txt", "r.txt"):
        (folder / name).write_text(SECRET)
    return folder


def outside_state(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def swap_for_symlink(folder: Path, target: Path) -> None:
    """Replace the folder `folder` with a symlink to `target` (the folder is kept aside)."""
    folder.rename(folder.with_name(folder.name + ".moved"))
    folder.symlink_to(target)


class SwapAfterCheck:
    """The real gate, then a swap: the race an attacker wins between the check and the open, made certain."""

    def __init__(self, gate: Gate, swap: object) -> None:
        self.gate = gate
        self.swap = swap

    def check(self, tool: Tool, tool_input: JSON, ctx: ToolContext) -> Decision:
        decision = self.gate.check(tool, tool_input, ctx)
        assert callable(self.swap)
        self.swap()
        return decision


def exchange(first: Path, second: Path) -> None:
    """renameat2(RENAME_EXCHANGE): swap two names in one step."""
    if _libc.renameat2(AT_FDCWD, os.fsencode(first), AT_FDCWD, os.fsencode(second), RENAME_EXCHANGE) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error), str(first))


_libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
RENAME_EXCHANGE = 2


def run(executor: ToolExecutor, ctx: ToolContext, *specs: tuple[str, JSON]) -> list[ToolResult]:
    calls = [ToolCall(f"toolu_{n}", name, inp) for n, (name, inp) in enumerate(specs)]
    done: dict[str, ToolResult] = {}
    events: list[Event] = []
    executor.run_all(calls, ctx, events.append, done)
    return [done[c.id] for c in calls]


def test_a_write_after_the_folder_became_a_symlink_is_refused_and_nothing_outside_changes(
    repo: Path, outside: Path
) -> None:
    (repo / "dir").mkdir()
    before = outside_state(outside)
    gate = SwapAfterCheck(Gate(mode="acceptEdits"), lambda: swap_for_symlink(repo / "dir", outside))
    [result] = run(
        ToolExecutor(builtin_tools(), gate),
        ToolContext(LocalWorkspace(repo)),
        ("Write", {"file_path": "dir/new.txt", "content": "x"}),
    )
    assert result.is_error
    assert "changed after permission was checked" in result.content
    assert "is now a symlink" in result.content and "nothing was written" in result.content
    assert "Internal error" not in result.content
    assert outside_state(outside) == before


@pytest.mark.parametrize(
    "tool_call",
    [
        ("Write", {"file_path": "dir/f.txt", "content": "overwritten\n"}),
        ("Edit", {"file_path": "dir/e.txt", "old_string": "SECRET", "new_string": "edited"}),
    ],
)
def test_an_overwrite_or_an_edit_after_the_swap_is_refused(
    repo: Path, outside: Path, tool_call: tuple[str, JSON]
) -> None:
    (repo / "dir").mkdir()
    for name in ("f.txt", "e.txt"):
        (repo / "dir" / name).write_text(SECRET)  # the same text: the guard would accept the outside file
    ctx = ToolContext(LocalWorkspace(repo))
    plain = ToolExecutor(builtin_tools(), Gate(mode="acceptEdits"))
    run(plain, ctx, ("Read", {"file_path": "dir/f.txt"}), ("Read", {"file_path": "dir/e.txt"}))
    before = outside_state(outside)
    gate = SwapAfterCheck(Gate(mode="acceptEdits"), lambda: swap_for_symlink(repo / "dir", outside))
    [result] = run(ToolExecutor(builtin_tools(), gate), ctx, tool_call)
    assert result.is_error and "changed after permission was checked" in result.content, result
    assert outside_state(outside) == before


def test_a_read_after_the_swap_returns_nothing_from_outside(repo: Path, outside: Path) -> None:
    (repo / "dir").mkdir()
    (repo / "dir" / "r.txt").write_text("inside\n")
    gate = SwapAfterCheck(Gate(mode="default"), lambda: swap_for_symlink(repo / "dir", outside))
    [result] = run(
        ToolExecutor(builtin_tools(), gate), ToolContext(LocalWorkspace(repo)), ("Read", {"file_path": "dir/r.txt"})
    )
    assert result.is_error
    assert "OUTSIDE SECRET" not in result.content
    assert "changed after permission was checked" in result.content and "nothing was read" in result.content


def test_a_file_swapped_for_a_symlink_after_the_check_is_refused(repo: Path, outside: Path) -> None:
    (repo / "r.txt").write_text("inside\n")

    def swap_file() -> None:
        (repo / "r.txt").unlink()
        (repo / "r.txt").symlink_to(outside / "r.txt")

    gate = SwapAfterCheck(Gate(mode="default"), swap_file)
    [result] = run(
        ToolExecutor(builtin_tools(), gate), ToolContext(LocalWorkspace(repo)), ("Read", {"file_path": "r.txt"})
    )
    assert result.is_error and "OUTSIDE SECRET" not in result.content
    assert f"{repo.resolve() / 'r.txt'} changed after permission was checked" in result.content


def test_a_racing_swapper_never_gets_a_byte_out_or_in(repo: Path, outside: Path) -> None:
    """250 calls through the real gate and executor while a thread swaps the folder and a symlink non-stop."""
    folder = repo / "dir"
    folder.mkdir()
    for name in ("f.txt", "e.txt", "r.txt"):
        (folder / name).write_text("inside token\n")
    link = repo / ".link"
    link.symlink_to(outside)
    before = outside_state(outside)
    stop = threading.Event()
    swaps = [0]

    def swapper() -> None:  # the folder and the symlink trade places atomically, so dir/ is never missing
        while not stop.is_set():
            exchange(folder, link)
            swaps[0] += 1
        if folder.is_symlink():
            exchange(folder, link)

    ctx = ToolContext(LocalWorkspace(repo))
    executor = ToolExecutor(builtin_tools(), Gate(mode="acceptEdits"))
    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    results: list[ToolResult] = []
    try:
        for turn in range(50):
            results += run(
                executor,
                ctx,
                ("Read", {"file_path": "dir/r.txt"}),
                ("Read", {"file_path": "dir/e.txt"}),
                ("Edit", {"file_path": "dir/e.txt", "old_string": "token", "new_string": "token"[::-1] + "token"}),
                ("Write", {"file_path": "dir/f.txt", "content": f"inside token {turn}\n"}),
                ("Write", {"file_path": f"dir/new{turn}.txt", "content": "new\n"}),
            )
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()
    assert len(results) == 250 and swaps[0] > 0
    assert outside_state(outside) == before  # no write landed outside
    assert sorted(os.listdir(outside)) == ["e.txt", "f.txt", "r.txt"]
    for result in results:
        assert "OUTSIDE SECRET" not in result.content  # no outside byte came back
        assert "Internal error" not in result.content and "failed:" not in result.content.split("\n")[0], result


def test_a_symlink_inside_the_project_to_a_file_inside_still_works(repo: Path) -> None:
    (repo / "real.txt").write_text("one\n")
    (repo / "link.txt").symlink_to("real.txt")
    (repo / "src").mkdir()
    (repo / "src" / "m.py").write_text("x = 1\n")
    (repo / "alias").symlink_to("src")
    ctx = ToolContext(LocalWorkspace(repo))
    executor = ToolExecutor(builtin_tools(), Gate(mode="acceptEdits"))
    results = run(
        executor,
        ctx,
        ("Read", {"file_path": "link.txt"}),
        ("Read", {"file_path": "alias/m.py"}),
        ("Edit", {"file_path": "link.txt", "old_string": "one", "new_string": "two"}),
        ("Edit", {"file_path": "alias/m.py", "old_string": "x = 1", "new_string": "x = 2"}),
        ("Write", {"file_path": "alias/new.py", "content": "y = 3\n"}),
    )
    assert [r.is_error for r in results] == [False] * 5, results
    assert results[0].content == "     1\tone"
    assert (repo / "link.txt").is_symlink() and (repo / "real.txt").read_text() == "two\n"
    assert (repo / "src" / "m.py").read_text() == "x = 2\n"
    assert (repo / "src" / "new.py").read_text() == "y = 3\n"
    [overwrite] = run(executor, ctx, ("Write", {"file_path": "link.txt", "content": "three\n"}))
    assert not overwrite.is_error, overwrite
    assert (repo / "link.txt").is_symlink() and (repo / "real.txt").read_text() == "three\n"


def test_a_symlink_loop_is_a_clear_error(repo: Path) -> None:
    (repo / "loop1").symlink_to("loop2")
    (repo / "loop2").symlink_to("loop1")
    ctx = ToolContext(LocalWorkspace(repo))
    [gated] = run(ToolExecutor(builtin_tools(), Gate(mode="default")), ctx, ("Read", {"file_path": "loop1/x"}))
    assert gated.is_error and "cannot be checked" in gated.content and "Symlink loop" in gated.content
    direct = builtin_tools().get("Read")
    assert direct is not None
    ungated = direct.run({"file_path": "loop1/x"}, ctx)
    assert ungated.is_error and ungated.content == "Read failed: Too many levels of symbolic links: loop1/x."


def test_a_nul_byte_in_a_path_is_a_clear_error(repo: Path) -> None:
    ctx = ToolContext(LocalWorkspace(repo))
    [gated] = run(
        ToolExecutor(builtin_tools(), Gate(mode="acceptEdits")), ctx, ("Write", {"file_path": "a\0b", "content": "x"})
    )
    assert gated.is_error and gated.content.startswith(
        "Permission denied: the paths of this Write call cannot be checked"
    )
    direct = builtin_tools().get("Write")
    assert direct is not None
    ungated = direct.run({"file_path": "a\0b", "content": "x"}, ctx)
    assert ungated.is_error and ungated.content == "Write failed: embedded null byte: a\0b."


def test_a_file_where_a_folder_should_be_is_a_clear_error(repo: Path) -> None:
    (repo / "a.txt").write_text("x\n")
    ctx = ToolContext(LocalWorkspace(repo))
    executor = ToolExecutor(builtin_tools(), Gate(mode="acceptEdits"))
    read, write, edit = run(
        executor,
        ctx,
        ("Read", {"file_path": "a.txt/inner"}),
        ("Write", {"file_path": "a.txt/inner", "content": "y"}),
        ("Edit", {"file_path": "a.txt/inner", "old_string": "x", "new_string": "y"}),
    )
    assert read.is_error and read.content.startswith("File not found: a.txt/inner.")
    assert (
        write.is_error
        and write.content == f"Could not write a.txt/inner: Not a directory ({repo.resolve() / 'a.txt'})."
    )
    assert edit.is_error and edit.content.startswith("File not found: a.txt/inner.")


def test_a_path_the_gate_did_not_check_is_refused(repo: Path) -> None:
    (repo / "a.txt").write_text("x\n")
    ctx = ToolContext(LocalWorkspace(repo), checked_paths={})
    tool = builtin_tools().get("Read")
    assert tool is not None
    result = tool.run({"file_path": "a.txt"}, ctx)
    assert result.is_error and "the permission gate did not check this path" in result.content
