"""SIGTERM and SIGHUP end agentcli the way Ctrl-C does: the running tool's process group is
killed, the transcript stays valid, and the exit code is 143 / 129 (what CI timeouts and a
closed terminal send)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.cli_process import gone, pid_from, start_cli
from tests.conftest import RunCli, StartRepl
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.session_helpers import continues_after_a_killed_call, records, transcript_files

SLEEPER = "sleep 60 & echo $! > sleeper.pid; wait"
"""A Bash call whose child, a real `sleep`, outlives agentcli unless its process group is killed."""
EXIT_CODES = {signal.SIGTERM: 143, signal.SIGHUP: 129}


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_during_a_long_bash_kills_it_and_the_session_continues(
    signum: signal.Signals, fake_api: FakeAnthropic, run_cli: RunCli, home: Path, project: Path
) -> None:
    fake_api.script(reply(text("Waiting."), tool_use("Bash", {"command": SLEEPER}, id="toolu_long")))
    args = ["run", "wait a minute", "--permission-mode", "bypassPermissions"]
    proc = start_cli(args, home=home, project=project, api=fake_api)
    sleeper = pid_from(project / "sleeper.pid")

    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=30)

    assert proc.returncode == EXIT_CODES[signum], stderr
    assert gone(sleeper), "the tool's process group survived the signal"
    assert "Traceback" not in stderr
    assert f"Error: Stopped by {signum.name}" in stderr
    assert stdout == ""
    [path] = transcript_files(home, project)
    *_, last, ended = records(path)
    assert last["message"]["role"] == "user" and last["message"]["content"][0]["tool_use_id"] == "toolu_long"
    assert (ended["type"], ended["stop"]) == ("run", "interrupted")

    continues_after_a_killed_call(run_cli, fake_api, "toolu_long")


def test_json_output_reports_the_signal(fake_api: FakeAnthropic, home: Path, project: Path) -> None:
    fake_api.script(reply(tool_use("Bash", {"command": SLEEPER})))
    args = ["run", "wait", "--permission-mode", "bypassPermissions", "--output-format", "json"]
    proc = start_cli(args, home=home, project=project, api=fake_api)
    sleeper = pid_from(project / "sleeper.pid")

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
    sleeper = pid_from(project / "sleeper.pid")

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
