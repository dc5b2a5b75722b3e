"""Ctrl-C during `agentcli run`: the tool's process group dies and the run ends with 130."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import AGENTCLI, cli_env
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use


def _wait_for(path: Path, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


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
    command = "sleep 60 & echo $! > sleeper.pid; wait"
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
    _wait_for(pid_file)
    sleeper = int(pid_file.read_text())
    assert _alive(sleeper)

    interrupted_at = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=10)
    elapsed = time.monotonic() - interrupted_at

    assert proc.returncode == 130, stderr
    assert elapsed < 1.5
    assert "Interrupted" in stderr
    assert "Traceback" not in stderr
    time.sleep(0.1)
    assert not _alive(sleeper), "the tool's process group survived the interrupt"
    assert len(fake_api.requests) == 1
