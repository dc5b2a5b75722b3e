"""The pty driver the REPL tests use: closing it leaves nothing running."""

from __future__ import annotations

import os
from pathlib import Path

from tests.terminal import Terminal
from tests.waiting import wait_until


def running(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def test_close_kills_what_the_program_started_in_a_session_of_its_own(tmp_path: Path) -> None:
    script = "setsid sleep 600 & echo $! > child.pid; echo started; wait"
    terminal = Terminal(["bash", "-c", script], env=dict(os.environ), cwd=tmp_path)
    terminal.wait_for("started")
    child = int((tmp_path / "child.pid").read_text())
    assert running(child)

    terminal.close()

    wait_until(lambda: not running(child), "the program's own child being killed")
