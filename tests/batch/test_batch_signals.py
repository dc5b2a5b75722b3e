"""What only a process shows: `kill -9` of the driver at random moments loses no result and writes
none twice; Ctrl-C stops starting tasks, a second one stops the running ones; the folder resumes."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from tests.batch.agents import results, serve_tasks, write_tasks, writing_task
from tests.conftest import AGENTCLI, cli_env
from tests.fake_anthropic import FakeAnthropic

CEILING_S = 60.0


def start_batch(home: Path, api: FakeAnthropic, tasks: Path, out: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [AGENTCLI, "batch", str(tasks), "--out", str(out), *args],
        env=cli_env(home, api.url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def lines_of(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _written(out: Path, count: int) -> bool:
    return lines_of(out / "results.jsonl") >= count


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + CEILING_S
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.02)


def test_kill_9_of_the_driver_at_random_moments_loses_and_repeats_no_result(
    fake_api: FakeAnthropic, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "src").mkdir()
    ids = [f"t{n}" for n in range(8)]
    tasks = write_tasks(tmp_path / "tasks.jsonl", [writing_task(task) for task in ids])
    serve_tasks(fake_api)
    out = tmp_path / "out"
    chance = random.Random()
    for trial in range(3):
        before = lines_of(out / "results.jsonl")
        target = min(len(ids), before + chance.randint(0, 2))
        driver = start_batch(home, fake_api, tasks, out, "--workers", "2")
        wait_for(lambda: _written(out, target) or driver.poll() is not None, "results")  # noqa: B023
        driver.kill()
        driver.communicate()
        # every line whole and a result (no file: it was killed before it opened the folder)
        written = results(out) if (out / "results.jsonl").exists() else []
        counts = Counter(result["id"] for result in written)
        assert max(counts.values(), default=1) == 1, f"trial {trial}: a result written twice: {counts}"

    finish = start_batch(home, fake_api, tasks, out, "--workers", "2")
    _, stderr = finish.communicate(timeout=CEILING_S)
    assert finish.returncode == 0, stderr
    final = results(out)
    assert sorted(result["id"] for result in final) == ids
    assert all(result["status"] == "passed" for result in final)


def test_ctrl_c_stops_starting_tasks_and_a_second_one_stops_the_running_ones(
    fake_api: FakeAnthropic, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "src").mkdir()
    started, go = tmp_path / "started", tmp_path / "go"
    wait_for_go = f"touch {started}; while [ ! -e {go} ]; do sleep 0.02; done"
    tasks = write_tasks(tmp_path / "tasks.jsonl", [writing_task("first", setup=wait_for_go), writing_task("second")])
    serve_tasks(fake_api)
    out = tmp_path / "out"

    driver = start_batch(home, fake_api, tasks, out, "--workers", "1")
    wait_for(started.exists, "the first task's setup")
    driver.send_signal(signal.SIGINT)
    wait_for(lambda: _said_stopping(driver), "the driver to say it stops")
    go.touch()  # the running task finishes and is kept; the other is not started
    stdout, _ = driver.communicate(timeout=CEILING_S)
    assert driver.returncode == 130
    assert [result["id"] for result in results(out)] == ["first"]
    assert json.loads(stdout.splitlines()[-1])["not_started"] == 1

    go.unlink()
    started.unlink()
    write_tasks(tasks, [writing_task("first"), writing_task("second", setup=wait_for_go)])
    driver = start_batch(home, fake_api, tasks, out, "--workers", "1")
    wait_for(started.exists, "the second task's setup")
    driver.send_signal(signal.SIGINT)
    wait_for(lambda: _said_stopping(driver), "the driver to say it stops")
    driver.send_signal(signal.SIGINT)  # the running task is stopped: no result for it
    driver.communicate(timeout=CEILING_S)
    assert driver.returncode == 130
    assert [result["id"] for result in results(out)] == ["first"]

    go.touch()
    driver = start_batch(home, fake_api, tasks, out)
    driver.communicate(timeout=CEILING_S)
    assert driver.returncode == 0
    assert [result["id"] for result in results(out)] == ["first", "second"]


def _said_stopping(driver: subprocess.Popen[str]) -> bool:
    """True once the driver's stdout has its `stopping` event (read line by line as it comes)."""
    assert driver.stdout is not None
    line = driver.stdout.readline()
    return '"event": "stopping"' in line
