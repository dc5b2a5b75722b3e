"""SIGTERM and SIGHUP end agentcli the way Ctrl-C does: the running tool's process group is
killed, the transcript stays valid, and the exit code is 143 / 129 (what CI timeouts and a
closed terminal send)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import AGENTCLI, RunCli, StartRepl, cli_env
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.session_helpers import records, transcript_files

SLEEPER = "sleep 60 & echo $! > sleeper.pid; wait"
"""A Bash call whose child, a real `sleep`, outlives agentcli unless its process group is killed."""
EXIT_CODES = {signal.SIGTERM: 143, signal.SIGHUP: 129}


def sleeper_pid(project: Path, timeout: float = 30) -> int:
    path = project / "sleeper.pid"
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, "the Bash command never started"
        time.sleep(0.02)
    return int(path.read_text())


def gone(pid: int, timeout: float = 10) -> bool:
    """True once `pid` has ended (a zombie left for a container's init to reap counts as ended)."""
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
    os.kill(pid, signal.SIGKILL)  # do not leave it behind for the next test
    return False


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_during_a_long_bash_kills_it_and_the_session_continues(
    signum: signal.Signals, fake_api: FakeAnthropic, run_cli: RunCli, home: Path, project: Path
) -> None:
    fake_api.script(reply(text("Waiting."), tool_use("Bash", {"command": SLEEPER}, id="toolu_long")))
    proc = subprocess.Popen(
        [AGENTCLI, "run", "wait a minute", "--permission-mode", "bypassPermissions"],
        cwd=project,
        env=cli_env(home, fake_api.url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    sleeper = sleeper_pid(project)

    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=30)

    assert proc.returncode == EXIT_CODES[signum], stderr
    assert gone(sleeper), "the tool's process group survived the signal"
    assert "Traceback" not in stderr
    assert f"Error: Stopped by {signum.name}" in stderr
    assert stdout == ""
    [path] = transcript_files(home, project)
    last = records(path)[-1]["message"]
    assert last["role"] == "user" and last["content"][0]["tool_use_id"] == "toolu_long"

    fake_api.script(reply(text("Picked up again.")))
    done = run_cli("run", "-c", "go on")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Picked up again.\n"
    request = fake_api.requests[1]
    assert request.status == 200  # the fake found the conversation valid
    messages = request.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "user"]
    result = messages[2]["content"][0]
    assert result["tool_use_id"] == "toolu_long" and result["is_error"] is True
    assert "go on" in json.dumps(messages[3])


def test_json_output_reports_the_signal(fake_api: FakeAnthropic, home: Path, project: Path) -> None:
    fake_api.script(reply(tool_use("Bash", {"command": SLEEPER})))
    proc = subprocess.Popen(
        [AGENTCLI, "run", "wait", "--permission-mode", "bypassPermissions", "--output-format", "json"],
        cwd=project,
        env=cli_env(home, fake_api.url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    sleeper = sleeper_pid(project)

    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=30)

    assert proc.returncode == 143, stderr
    assert gone(sleeper)
    result = json.loads(stdout)
    assert result["is_error"] is True and result["subtype"] == "error_during_execution"
    assert result["result"].startswith("Stopped by SIGTERM")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_the_repl_ends_on_a_signal_during_a_command_and_kills_it(
    signum: signal.Signals, start_repl: StartRepl, fake_api: FakeAnthropic, run_cli: RunCli, project: Path
) -> None:
    fake_api.script(reply(tool_use("Bash", {"command": SLEEPER}, id="toolu_repl")))
    repl = start_repl("--permission-mode", "bypassPermissions")
    repl.submit("wait a minute")
    sleeper = sleeper_pid(project)

    repl.child.kill(signum)

    assert repl.wait_exit(timeout=30) == EXIT_CODES[signum]
    assert gone(sleeper), "the tool's process group survived the signal"
    assert "Traceback" not in repl.text()
    fake_api.script(reply(text("Continued.")))
    done = run_cli("run", "-c", "go on")
    assert done.returncode == 0, done.stderr
    assert fake_api.requests[-1].status == 200
    assert fake_api.requests[-1].body["messages"][2]["content"][0]["tool_use_id"] == "toolu_repl"


def test_the_repl_ends_on_sigterm_at_the_prompt(start_repl: StartRepl) -> None:
    repl = start_repl()

    repl.child.kill(signal.SIGTERM)

    assert repl.wait_exit(timeout=30) == 143
    assert "Traceback" not in repl.text()
