"""Ctrl-C of a batch on a real Ray cluster (`--ray ADDRESS`, one cluster started for the test):
the first stops starting tasks and lets the running ones finish, the second cancels the ones
still running; results.jsonl has every finished task once, and the same command resumes the rest.

Ray is large and slow to start on two cores: this test starts one cluster and joins it twice.
It runs where Ray is installed (CI sets AGENTCLI_REQUIRE_RAY, so there it cannot skip)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.batch.agents import results, serve_tasks, write_tasks, writing_task
from tests.batch.test_batch_signals import CEILING_S, _said_stopping, lines_of, start_batch, wait_for
from tests.conftest import cli_env
from tests.fake_anthropic import FakeAnthropic

HAVE_RAY = importlib.util.find_spec("ray") is not None
CLUSTER = """
import sys, ray
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
print(ray.get_runtime_context().gcs_address, flush=True)
sys.stdin.read()
ray.shutdown()
"""
"""A Ray cluster on this machine, its address printed, until its stdin closes."""

pytestmark = pytest.mark.skipif(
    not HAVE_RAY and not os.environ.get("AGENTCLI_REQUIRE_RAY"),
    reason="Ray is not installed (AGENTCLI_TEST_RAY=1 scripts/setup installs it; CI does)",
)


@pytest.fixture
def ray_cluster(fake_api: FakeAnthropic, home: Path) -> Iterator[str]:
    """The address of a Ray cluster whose workers have the test's environment (the fake server)."""
    assert HAVE_RAY, "AGENTCLI_REQUIRE_RAY is set but Ray is not installed"
    cluster = subprocess.Popen(
        [sys.executable, "-c", CLUSTER],
        env={**cli_env(home, fake_api.url), "RAY_AUTH_MODE": "disabled"},  # the driver joins without a token
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert cluster.stdin is not None and cluster.stdout is not None
    try:
        address = cluster.stdout.readline().strip()
        assert address, "the Ray cluster did not start"
        yield address
    finally:
        cluster.stdin.close()
        try:
            cluster.wait(CEILING_S)
        except subprocess.TimeoutExpired:
            os.killpg(cluster.pid, signal.SIGKILL)
            cluster.wait()
        cluster.stdout.close()


def test_ctrl_c_on_ray_lets_running_tasks_finish_then_cancels_them_and_the_batch_resumes(
    ray_cluster: str, fake_api: FakeAnthropic, home: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    (tmp_path / "src").mkdir()
    flags = {name: tmp_path / name for name in ("s1-started", "s2-started", "s1-go", "s2-go")}

    def held(task: str) -> str:  # a setup that says it started, then waits (a minute at most) to be let go
        go = flags[f"{task}-go"]
        return f"touch {flags[f'{task}-started']}; for i in $(seq 3000); do [ -e {go} ] && break; sleep 0.02; done"

    tasks = [writing_task("q1"), writing_task("s1", setup=held("s1")), writing_task("s2", setup=held("s2"))]
    tasks += [writing_task("n1"), writing_task("n2")]
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", tasks)
    serve_tasks(fake_api)
    out = tmp_path / "out"
    ray_args = ("--workers", "2", "--ray", ray_cluster)

    driver = start_batch(home, fake_api, tasks_file, out, *ray_args)
    request.addfinalizer(lambda: _end(driver))
    wait_for(lambda: lines_of(out / "results.jsonl") == 1 and flags["s2-started"].exists(), "q1's result, s1 and s2")
    driver.send_signal(signal.SIGINT)  # first: start nothing more (n1, n2), let s1 and s2 finish
    wait_for(lambda: _said_stopping(driver), "the driver to say it stops")
    flags["s1-go"].touch()
    wait_for(lambda: lines_of(out / "results.jsonl") == 2, "s1's result")
    driver.send_signal(signal.SIGINT)  # second: s2, still in its setup, is cancelled and keeps no result
    stdout, stderr = driver.communicate(timeout=CEILING_S)
    assert driver.returncode == 130, stderr
    assert [result["id"] for result in results(out)] == ["q1", "s1"]
    assert json.loads(stdout.splitlines()[-1])["not_started"] == 3

    flags["s2-go"].touch()
    again = start_batch(home, fake_api, tasks_file, out, *ray_args)
    request.addfinalizer(lambda: _end(again))
    _, stderr = again.communicate(timeout=CEILING_S * 2)
    assert again.returncode == 0, stderr
    final = [result["id"] for result in results(out)]
    assert sorted(final) == ["n1", "n2", "q1", "s1", "s2"]  # each once: none lost, none twice
    assert final[:2] == ["q1", "s1"]


def _end(driver: subprocess.Popen[str]) -> None:
    """A driver a failed test left running is killed (before its cluster ends)."""
    if driver.poll() is None:
        driver.kill()
    driver.communicate()
