"""How fast an interrupt stops a running command (the tests only check that it does).

- Bash tool: seconds from setting the cancel event (what Esc and Ctrl-C do) to the call
  returning, with the command's child killed;
- `agentcli run` against the fake server, its Bash call running: seconds from SIGINT to the
  process having exited (target: well under 1.5 s).

Usage: .venv/bin/python bench/interrupt.py [runs]
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.contracts import ToolContext
from agentcli.tools.bash import BashTool
from agentcli.workspace.local import LocalWorkspace
from tests.conftest import AGENTCLI, cli_env
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.waiting import wait_until

COMMAND = "sleep 600 & echo $! > child.pid; wait"
TARGET_SECONDS = 1.5


def started(folder: Path) -> bool:
    pid_file = folder / "child.pid"
    return pid_file.exists() and bool(pid_file.read_text().strip())


def bash_cancel(runs: int) -> float:
    """Median seconds from the cancel event to the Bash call returning."""
    samples = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            ctx = ToolContext(LocalWorkspace(folder))
            cancelled_at: list[float] = []

            def cancel(where: Path = folder, context: ToolContext = ctx, stamps: list[float] = cancelled_at) -> None:
                wait_until(partial(started, where), "the command starting")
                stamps.append(time.perf_counter())
                context.cancel.set()

            threading.Thread(target=cancel, daemon=True).start()
            BashTool().run({"command": COMMAND}, ctx)
            samples.append(time.perf_counter() - cancelled_at[0])
    return statistics.median(samples)


def run_sigint(runs: int) -> float:
    """Median seconds from SIGINT to `agentcli run` having exited, during a Bash call."""
    samples = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp, FakeAnthropic(api_key="test-key") as api:
            home, project = Path(tmp) / "home", Path(tmp) / "project"
            (home / ".agentcli").mkdir(parents=True)
            project.mkdir()
            api.script(reply(tool_use("Bash", {"command": COMMAND})), reply(text("unreachable")))
            proc = subprocess.Popen(
                [AGENTCLI, "run", "wait", "--permission-mode", "bypassPermissions"],
                cwd=project,
                env=cli_env(home, api.url),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            wait_until(partial(started, project), "the command starting")
            began = time.perf_counter()
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
            samples.append(time.perf_counter() - began)
            child = int((project / "child.pid").read_text())
            if Path(f"/proc/{child}").exists() and "\nState:\tZ" not in Path(f"/proc/{child}/status").read_text():
                os.kill(child, signal.SIGKILL)
                print(f"warning: the command's child {child} outlived the interrupt")
    return statistics.median(samples)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(f"Bash cancel → call returns:         {bash_cancel(runs) * 1000:7.1f} ms (median of {runs})")
    seconds = run_sigint(runs)
    verdict = "ok" if seconds < TARGET_SECONDS else f"over the {TARGET_SECONDS} s target"
    print(f"agentcli run: SIGINT → exited:      {seconds * 1000:7.1f} ms (median of {runs}; {verdict})")


if __name__ == "__main__":
    main()
