"""`agentcli batch --ray`: Ray is optional and said to be missing; the same batch on a real local Ray cluster.

Starting a Ray cluster takes seconds on two cores: one test does it, with a few tasks. It runs
where Ray is installed (CI installs the `ray` extra and sets AGENTCLI_REQUIRE_RAY, so there it
cannot skip; elsewhere AGENTCLI_TEST_RAY=1 scripts/setup installs it).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.batch.ray_engine import NOT_INSTALLED
from tests.batch.agents import results, serve_tasks, task_prompts, write_tasks, writing_task
from tests.conftest import RunCli, RunMain
from tests.fake_anthropic import FakeAnthropic

HAVE_RAY = importlib.util.find_spec("ray") is not None


def test_without_ray_the_batch_says_what_to_install_and_runs_nothing(
    run_main: RunMain, fake_api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as where it is not installed
    (tmp_path / "src").mkdir()
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [writing_task("one")])
    serve_tasks(fake_api)

    ran = run_main("batch", str(tasks_file), "--ray", "--out", str(tmp_path / "out"))

    assert ran.returncode == 2
    assert NOT_INSTALLED in ran.stderr and "pip install 'agentcli[ray]'" in ran.stderr
    assert not (tmp_path / "out").exists()
    assert task_prompts(fake_api) == []


@pytest.mark.skipif(not HAVE_RAY and not os.environ.get("AGENTCLI_REQUIRE_RAY"), reason="Ray is not installed")
def test_a_ray_address_where_nothing_answers_is_refused_at_once(
    run_main: RunMain, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    import socket

    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{unused.getsockname()[1]}"
    (tmp_path / "src").mkdir()
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [writing_task("one")])

    ran = run_main("batch", str(tasks_file), "--ray", address, "--out", str(tmp_path / "out"))

    assert ran.returncode == 2
    assert f"Nothing answers at the Ray cluster's address {address}" in ran.stderr
    assert fake_api.requests == []


def test_ray_is_not_loaded_by_a_batch_on_the_local_pool() -> None:
    loads = (
        "import sys, agentcli.batch.command, agentcli.batch.driver, agentcli.batch.local_pool; "
        "print('ray' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", loads], capture_output=True, text=True, check=True).stdout == "False\n"


@pytest.mark.skipif(
    not HAVE_RAY and not os.environ.get("AGENTCLI_REQUIRE_RAY"),
    reason="Ray is not installed (AGENTCLI_TEST_RAY=1 scripts/setup installs it; CI does)",
)
def test_the_same_batch_runs_on_a_local_ray_cluster(run_cli: RunCli, fake_api: FakeAnthropic, tmp_path: Path) -> None:
    assert HAVE_RAY, "AGENTCLI_REQUIRE_RAY is set but Ray is not installed"
    (tmp_path / "src").mkdir()
    tasks = [writing_task("one"), writing_task("two", check="exit 4"), writing_task("three", setup="exit 1")]
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", tasks)
    serve_tasks(fake_api)
    out = tmp_path / "out"

    done = run_cli("batch", str(tasks_file), "--out", str(out), "--workers", "2", "--ray", timeout=240)

    assert done.returncode == 1, done.stderr
    assert '"workers": "a local Ray cluster of 2 CPUs"' in done.stdout
    by_id = {result["id"]: result for result in results(out)}
    assert {task: result["status"] for task, result in by_id.items()} == {
        "one": "passed",
        "two": "failed",
        "three": "error",
    }
    assert by_id["two"]["check_exit_code"] == 4 and by_id["one"]["cost_usd"] > 0
    assert "+one.txt" in (out / "tasks" / "one" / "diff.patch").read_text()
    assert not any("three" in prompt for prompt in task_prompts(fake_api))

    again = run_cli("batch", str(tasks_file), "--out", str(out), "--ray", timeout=240)  # resumed: nothing left
    assert again.returncode == 1
    assert len(results(out)) == 3
