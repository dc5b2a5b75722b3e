"""Harbor task folders, a task's timeout, and the batch's shared gate for model requests."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from agentcli.batch.admission import BatchAdmission, BatchGate, GateLink
from agentcli.batch.harbor import NOTICE
from agentcli.errors import TransientModelError
from tests.batch.agents import results, serve_tasks, write_tasks
from tests.conftest import RunMain
from tests.fake_anthropic import FakeAnthropic

TEST_SH = """#!/bin/bash
# Harbor's verifier: the workspace at /app, the reward in /logs/verifier
if [ -f hello.txt ] && [ -f seed.txt ] && [ ! -e Dockerfile ] && [ "$GREETING" = '${NOT_EXPANDED}' ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
echo verified
"""


def harbor_task(folder: Path, name: str, instruction: str) -> None:
    task = folder / name
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "instruction.md").write_text(instruction)
    (task / "task.toml").write_text(
        'version = "1.0"\n[agent]\ntimeout_sec = 120.0\n'
        "[verifier]\ntimeout_sec = 60.0\nenv = { GREETING = '${NOT_EXPANDED}' }\n"
    )
    (task / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\n")
    (task / "environment" / "seed.txt").write_text("seed\n")
    (task / "tests" / "test.sh").write_text(TEST_SH)


def test_harbor_tasks_run_in_a_copy_of_their_environment_and_their_tests_are_the_check(
    run_main: RunMain, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    harbor_task(tmp_path / "harbor", "hello", "Create hello.txt: WRITE:hello.txt")
    harbor_task(tmp_path / "harbor", "lazy", "Do nothing at all.")
    serve_tasks(fake_api)
    out = tmp_path / "out"

    ran = run_main("batch", str(tmp_path / "harbor"), "--out", str(out), "--allowed-tools", "Write")

    assert ran.returncode == 1
    assert NOTICE in ran.stderr  # its Docker environment is not built: said so
    by_id = {result["id"]: result for result in results(out)}
    assert (by_id["hello"]["status"], by_id["hello"]["reward"]) == ("passed", 1.0)
    assert (by_id["lazy"]["status"], by_id["lazy"]["reward"]) == ("failed", 0.0)
    assert (out / "tasks" / "hello" / "check.log").read_text() == "verified\n"
    assert not (tmp_path / "harbor" / "hello" / "environment" / "hello.txt").exists()


def test_a_bad_harbor_task_is_named_and_nothing_runs(
    run_main: RunMain, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    harbor_task(tmp_path / "harbor", "good", "WRITE:x")
    harbor_task(tmp_path / "harbor", "bad", "WRITE:y")
    (tmp_path / "harbor" / "bad" / "tests" / "test.sh").unlink()

    ran = run_main("batch", str(tmp_path / "harbor"), "--out", str(tmp_path / "out"))

    assert ran.returncode == 2
    assert "bad: tests/test.sh is missing" in ran.stderr
    assert not (tmp_path / "out").exists() and fake_api.requests == []


def test_a_task_out_of_time_ends_as_timeout_and_the_others_go_on(
    run_main: RunMain, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    (tmp_path / "src").mkdir()
    tasks: list[dict[str, Any]] = [
        {"id": "slow", "prompt": "STALL", "workdir": "src", "timeout": 1, "check": "true"},
        {"id": "quick", "prompt": "hello", "workdir": "src"},
    ]
    serve_tasks(fake_api)

    ran = run_main("batch", str(write_tasks(tmp_path / "tasks.jsonl", tasks)), "--out", str(tmp_path / "out"))

    assert ran.returncode == 1
    by_id = {result["id"]: result for result in results(tmp_path / "out")}
    assert (by_id["slow"]["status"], by_id["slow"]["error_class"]) == ("timeout", "timeout")
    assert by_id["slow"]["check_exit_code"] is None
    assert by_id["quick"]["status"] == "passed"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_overloaded_answer_slows_every_task_of_the_batch_until_the_server_said() -> None:
    clock = Clock()
    gate = BatchGate(clock=clock)
    first, second = (BatchAdmission(GateLink(gate, task), None, lambda: 0.0) for task in ("a", "b"))
    admitted = threading.Event()

    def another_task_asks() -> None:
        with BatchAdmission(GateLink(gate, "c"), None, lambda: 0.0).admit():
            admitted.set()

    with first.admit():
        with pytest.raises(TransientModelError), second.admit():
            raise TransientModelError("Overloaded", fault="overloaded", retry_after=30)
        asker = threading.Thread(target=another_task_asks)
        asker.start()
        assert not admitted.wait(0.3)  # the server asked for 30 s: nobody is let through
        clock.now += 31
    asker.join(30)  # `first` ended: the gate looked again, and the pause is over
    assert admitted.is_set()
    assert (gate.throttled, gate.admitted) == (1, 3)


def test_once_the_batch_has_spent_its_budget_no_request_is_let_through() -> None:
    gate = BatchGate(budget_usd=1.0, spent_before=0.25)
    spending = [0.5]
    admission = BatchAdmission(GateLink(gate, "a"), 1.0, lambda: spending[0])
    with admission.admit():
        pass
    spending[0] = 0.8  # 0.25 earlier + 0.8 now: over
    with pytest.raises(Exception, match=r"budget of \$1\.0000 is spent"), admission.admit():
        pass
    assert gate.budget_spent() and gate.admitted == 1


def test_a_task_that_dies_within_a_request_gives_its_place_back() -> None:
    gate = BatchGate(clock=Clock())
    assert gate.acquire("a") is None
    gate.release("a", True, 0.0)  # overloaded: one request at a time from now on
    assert gate.acquire("dies") is None  # ... and its worker dies before it ends
    gate.finish("dies", 0.0)
    admitted = threading.Event()
    asker = threading.Thread(target=lambda: admitted.set() if gate.acquire("b") is None else None)
    asker.start()
    asker.join(30)
    assert admitted.is_set()


def test_on_a_terminal_one_live_line_counts_the_tasks_and_each_failure_gets_a_line() -> None:
    import io

    from agentcli.batch.progress import Progress
    from agentcli.batch.results import TaskResult

    screen = io.StringIO()
    progress = Progress(3, 1, live=True, out=screen)
    progress.start("2 local workers", 2)
    progress.task_started()
    progress.task_started()
    progress.task_finished(TaskResult("a", "passed", cost_usd=0.5), 0.5)
    progress.task_finished(TaskResult("b", "error", error_class="setup_failed"), 0.75)
    progress.summary(0, "runs/x")

    lines = [line.rsplit("\x1b[K", 1)[-1] for line in screen.getvalue().split("\n")]
    assert lines[0] == "2 task(s) to run, 1 already done; 2 local workers."
    assert "b: error (setup_failed)" in lines
    assert "3/3 done · 1 passed · 1 failed · 0 running · $0.7500" in screen.getvalue()
    assert lines[-2] == "3/3 done (1 error, 1 passed), $0.7500 spent. Results: runs/x/results.jsonl"
