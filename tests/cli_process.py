"""The real `agentcli` as a running process, for tests that signal it or close its output."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import IO

from tests.conftest import AGENTCLI, cli_env
from tests.fake_anthropic import FakeAnthropic


def start_cli(
    args: list[str], *, home: Path, project: Path, api: FakeAnthropic, stdout: int | IO[str] = subprocess.PIPE
) -> subprocess.Popen[str]:
    """`agentcli ARGS` in `project` against the fake server, stdin closed, stderr piped."""
    return subprocess.Popen(
        [AGENTCLI, *args],
        cwd=project,
        env=cli_env(home, api.url),
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
    )


def pid_from(path: Path, timeout: float = 30) -> int:
    """The process id a Bash call wrote to `path`, once it is there."""
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} never appeared: the Bash command did not start"
        time.sleep(0.02)
    return int(path.read_text())


def gone(pid: int, timeout: float = 10) -> bool:
    """True once `pid` has ended (a zombie left for a container's init to reap counts as ended).
    A process still there after `timeout` is killed, so it does not outlive the test."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        status = Path(f"/proc/{pid}/status")
        if status.exists() and "\nState:\tZ" in status.read_text():
            return True
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    return False
