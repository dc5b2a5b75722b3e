"""How a sandboxed command ends, with the real bubblewrap, both ways agentcli can learn of it:
through a pidfd of the command (kernels that keep a reaped process's exit status for its pidfds,
Linux 6.15 and later) and through the supervisor's report (older kernels, forced here). Either
way the exit status comes back as the command left it, and nothing the command started
outlives it, whether it ended by itself or was killed."""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.workspace import sandbox_process
from agentcli.workspace.contract import Command, Finished
from agentcli.workspace.sandbox_settings import SandboxSettings
from agentcli.workspace.sandboxed import SandboxedWorkspace
from tests.sandbox_support import require_sandbox, run_in
from tests.waiting import CEILING, wait_until


@pytest.fixture(params=["as the kernel allows", "reported by the supervisor"])
def sandbox(
    request: pytest.FixtureRequest, project: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SandboxedWorkspace]:
    require_sandbox()
    if request.param == "reported by the supervisor":
        monkeypatch.setattr(sandbox_process, "kernel_keeps_exit_status", lambda: False)
    with SandboxedWorkspace(project, SandboxSettings(enabled=True), home=outside) as workspace:
        yield workspace


def test_exit_statuses_come_back_as_the_command_left_them(sandbox: SandboxedWorkspace) -> None:
    assert run_in(sandbox, "exit 7").exit_code == 7
    assert run_in(sandbox, "sleep 60 & kill -TERM $!; wait $!").exit_code == 128 + 15
    assert run_in(sandbox, "true").exit_code == 0


def _lock_is_free(lock: Path) -> bool:
    with open(lock) as file:
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
    return True


def test_a_background_child_ends_with_the_command(sandbox: SandboxedWorkspace, project: Path) -> None:
    lock = project / "held.lock"
    lock.touch()
    done = run_in(sandbox, "(setsid nohup flock held.lock sleep 600 >/dev/null 2>&1 &); sleep 0.2; echo started")

    assert done.output == "started"
    assert _lock_is_free(lock)  # the flock holder was killed before run() returned


def test_a_cancelled_command_and_its_children_are_gone_when_run_returns(
    sandbox: SandboxedWorkspace, project: Path
) -> None:
    lock = project / "held.lock"
    lock.touch()
    cancel = threading.Event()
    result: list[Finished] = []
    command = Command(["bash", "-c", "(setsid flock held.lock sleep 600 &); echo holding > started; sleep 600"])
    runner = threading.Thread(target=lambda: result.append(sandbox.run(command, timeout=CEILING, cancel=cancel)))
    runner.start()
    wait_until(lambda: (project / "started").exists() and not _lock_is_free(lock), "the command holding the lock")
    cancel.set()
    runner.join(CEILING)

    assert not runner.is_alive()
    assert [r.outcome for r in result] == ["cancelled"]
    assert _lock_is_free(lock)
    assert run_in(sandbox, "echo next").output == "next"  # the sandbox goes on
