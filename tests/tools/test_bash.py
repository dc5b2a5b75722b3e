from __future__ import annotations

import _thread
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentcli.access import Access
from agentcli.contracts import ToolContext, ToolResult
from agentcli.tools.bash import BashTool
from agentcli.tools.schema import validation_error
from tests.tools.helpers import call
from tests.waiting import wait_until

BASH = BashTool()
LONG = "sleep 600 & echo $! > child.pid; wait"
"""A command that runs for ten minutes unless killed, writing its child's pid first."""


def bash(ctx: ToolContext, command: str, **extra: object) -> ToolResult:
    return call(BASH, ctx, {"command": command, **extra})


def gone(pid: int) -> bool:
    """True once `pid` no longer runs (a zombie waiting for its reaper counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


def child_pid(repo: Path) -> int:
    return int((repo / "child.pid").read_text())


def once_started(repo: Path, then: Callable[[], None]) -> None:
    """In the background: as soon as the command's child has started, call `then`."""

    def watch() -> None:
        pid_file = repo / "child.pid"
        wait_until(lambda: pid_file.exists() and bool(pid_file.read_text().strip()), "the command starting")
        then()

    threading.Thread(target=watch, daemon=True).start()


def test_output_and_exit_code(ctx: ToolContext) -> None:
    result = bash(ctx, "echo hello")
    assert not result.is_error
    assert result.content == "hello\nExit code 0"


def test_non_zero_exit_is_an_error_with_the_code(ctx: ToolContext) -> None:
    result = bash(ctx, "echo oops >&2; exit 3")
    assert result.is_error
    assert result.content == "oops\nExit code 3"


def test_no_output_still_reports_the_exit_code(ctx: ToolContext) -> None:
    assert bash(ctx, "true").content == "Exit code 0"


def test_stdout_and_stderr_are_interleaved_in_order(ctx: ToolContext) -> None:
    result = bash(ctx, "echo out1; echo err1 >&2; echo out2; echo err2 >&2; echo out3")
    assert result.content == "out1\nerr1\nout2\nerr2\nout3\nExit code 0"


def test_runs_in_the_project_directory_and_cd_does_not_persist(ctx: ToolContext, repo: Path) -> None:
    (repo / "sub").mkdir()
    assert bash(ctx, "cd sub && pwd").content.startswith(str(repo / "sub"))
    assert bash(ctx, "pwd").content == f"{repo}\nExit code 0"
    assert "do NOT persist" in BASH.description


def test_stdin_is_closed(ctx: ToolContext) -> None:
    result = bash(ctx, 'read line; echo "[$line] $?"', timeout=600_000)
    assert result.content == "[] 1\nExit code 0"  # read met end of file: a waiting read would have timed out


def test_timeout_kills_the_whole_process_group(ctx: ToolContext, repo: Path) -> None:
    result = bash(ctx, "sleep 600 & echo $! > child.pid; echo started; wait", timeout=500)
    assert result.is_error
    assert result.content.startswith("started\n")
    assert "timed out after 0.5 s" in result.content
    wait_until(lambda: gone(child_pid(repo)), "the timed-out command's child being killed")


def test_cancellation_kills_the_command_at_once(ctx: ToolContext, repo: Path) -> None:
    once_started(repo, ctx.cancel.set)
    result = bash(ctx, LONG)
    assert result.is_error and "interrupted" in result.content
    wait_until(lambda: gone(child_pid(repo)), "the cancelled command's child being killed")


def test_keyboard_interrupt_kills_the_process_group(ctx: ToolContext, repo: Path) -> None:
    once_started(repo, _thread.interrupt_main)
    with pytest.raises(KeyboardInterrupt):
        bash(ctx, LONG)
    wait_until(lambda: gone(child_pid(repo)), "the interrupted command's child being killed")


def test_ctrl_c_while_the_command_starts_still_kills_it(
    ctx: ToolContext, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_popen = subprocess.Popen

    def slow_to_return(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        """The child is running before Popen returns; on a busy machine Ctrl-C can land in between."""
        proc = real_popen(*args, **kwargs)
        wait_until(lambda: (repo / "child.pid").exists() and bool((repo / "child.pid").read_text()), "the start")
        signal.raise_signal(signal.SIGINT)
        return proc

    monkeypatch.setattr(subprocess, "Popen", slow_to_return)
    with pytest.raises(KeyboardInterrupt):
        bash(ctx, LONG)
    monkeypatch.undo()
    wait_until(lambda: gone(child_pid(repo)), "the command's child being killed")


def test_huge_output_keeps_head_and_tail(ctx: ToolContext) -> None:
    result = bash(ctx, "seq 1 300000")
    assert not result.is_error
    assert len(result.content) < 30_000
    assert result.content.startswith("1\n2\n3\n")
    assert result.content.endswith("299999\n300000\nExit code 0")
    assert "output truncated" in result.content and "cut from the middle" in result.content


def test_endless_output_is_bounded_by_the_timeout(ctx: ToolContext) -> None:
    result = bash(ctx, "yes abcdefghij", timeout=700)
    assert result.is_error and "timed out" in result.content
    assert len(result.content) < 30_000
    assert result.content.startswith("abcdefghij\n")


def test_background_job_holding_the_output_does_not_hang_the_call(ctx: ToolContext) -> None:
    result = bash(ctx, "sleep 30 & echo launched")
    # Waited for, the job would end by itself and leave no note; the call returns without it instead.
    assert result.content.startswith("launched\nExit code 0")
    assert "redirect its output" in result.content


def test_unicode_output(ctx: ToolContext) -> None:
    assert bash(ctx, "printf 'héllo 日本 🙂\\n'").content == "héllo 日本 🙂\nExit code 0"


def test_killed_by_a_signal(ctx: ToolContext) -> None:
    result = bash(ctx, "kill -TERM $$")
    assert result.is_error
    assert result.content == "Exit code -15 (killed by signal SIGTERM)"


def test_timeout_limits_are_in_the_schema() -> None:
    assert validation_error({"command": "x", "timeout": 600_001}, BASH.input_schema) is not None
    assert validation_error({"command": "x", "timeout": 0}, BASH.input_schema) is not None
    assert validation_error({"command": "x", "timeout": 600_000}, BASH.input_schema) is None


def test_bash_is_not_read_only(ctx: ToolContext) -> None:
    assert BASH.access({"command": "ls"}, ctx) == Access(command="ls")
    assert BASH.access({"command": "ls"}, ctx).read_only is False
