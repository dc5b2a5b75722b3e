"""Ctrl-C during `agentcli run`: the tool's process group dies and the run ends with 130."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from tests.conftest import AGENTCLI, cli_env
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.waiting import CEILING, wait_until

SLEEP = 600
"""The tool's command would run this long: ending well before it means it was killed."""


def _alive(pid: int) -> bool:
    """True if `pid` runs (a zombie waiting for a container's init to reap it counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def test_ctrl_c_during_a_long_bash_kills_its_group_and_exits_130(
    fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    command = f"sleep {SLEEP} & echo $! > sleeper.pid; wait"
    fake_api.script(reply(tool_use("Bash", {"command": command})), reply(text("unreachable")))
    proc = subprocess.Popen(
        [AGENTCLI, "run", "wait a minute", "--permission-mode", "bypassPermissions"],
        cwd=project,
        env=cli_env(home, fake_api.url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pid_file = project / "sleeper.pid"
    wait_until(lambda: pid_file.exists() and bool(pid_file.read_text().strip()), "the command starting")
    sleeper = int(pid_file.read_text())
    assert _alive(sleeper)

    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=CEILING)  # far sooner than the command would end by itself

    assert proc.returncode == 130, stderr
    assert "Interrupted" in stderr
    assert "Traceback" not in stderr
    wait_until(lambda: not _alive(sleeper), "the tool's child being killed")
    assert len(fake_api.requests) == 1
