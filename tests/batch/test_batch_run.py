"""`agentcli batch` end to end on the local pool: tasks checked before anything runs, each task
in a workspace of its own, setup and check, the output folder, resume, budgets, retries."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.batch.agents import results, serve_tasks, task_prompts, write_tasks, writing_task
from tests.conftest import RunMain
from tests.fake_anthropic import FakeAnthropic


@pytest.fixture
def batch_dir(tmp_path: Path) -> Path:
    """A folder with `src/` (what `workdir: src` tasks copy)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kept.txt").write_text("kept\n")
    return tmp_path


def test_bad_task_lines_are_listed_with_their_numbers_and_nothing_runs(
    run_main: RunMain, fake_api: FakeAnthropic, batch_dir: Path
) -> None:
    lines = [
        json.dumps(writing_task("good")),
        "{not json",
        json.dumps({"id": "x", "prompt": "p", "workdir": "src", "colour": "red"}),
        json.dumps(writing_task("good")),
        json.dumps({"id": "y", "prompt": "p"}),
        json.dumps({"id": "z", "prompt": "p", "workdir": "src", "max_turns": 0}),
    ]
    (batch_dir / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    serve_tasks(fake_api)

    ran = run_main("batch", str(batch_dir / "tasks.jsonl"), "--out", str(batch_dir / "out"))

    assert ran.returncode == 2
    for number, said in [(2, "not JSON"), (3, "unknown field"), (4, "already the id of line 1"), (5, "workdir")]:
        assert f"line {number}: " in ran.stderr and said in ran.stderr
    assert "line 6: max_turns must be" in ran.stderr
    assert "line 1:" not in ran.stderr
    assert "nothing was run" in ran.stderr
    assert not (batch_dir / "out").exists()
    assert task_prompts(fake_api) == []


def test_each_task_works_in_its_own_workspace_and_its_result_and_files_are_written(
    run_main: RunMain, fake_api: FakeAnthropic, batch_dir: Path
) -> None:
    tasks = [
        # the check fails if another task's file is in this task's workspace
        writing_task("alpha", check="test -f alpha.txt && ! test -e beta.txt && echo alpha checked"),
        writing_task("beta", check="test -f beta.txt && ! test -e alpha.txt"),
        writing_task("fails", check="echo nope; exit 3"),
        writing_task("broken-setup", setup="echo preparing; exit 7"),
        writing_task("limited", max_turns=1, check="exit 5"),  # stopped early, and its check fails
    ]
    write_tasks(batch_dir / "tasks.jsonl", tasks)
    serve_tasks(fake_api)
    out = batch_dir / "out"

    ran = run_main("batch", str(batch_dir / "tasks.jsonl"), "--out", str(out), "--workers", "2")

    assert ran.returncode == 1, ran.stderr
    by_id = {result["id"]: result for result in results(out)}
    assert {task: by_id[task]["status"] for task in by_id} == {
        "alpha": "passed",
        "beta": "passed",
        "fails": "failed",
        "broken-setup": "error",
        "limited": "failed",
    }
    assert by_id["fails"]["check_exit_code"] == 3
    assert (by_id["limited"]["error_class"], by_id["limited"]["check_exit_code"]) == ("MaxTurnsReached", 5)
    assert by_id["broken-setup"]["error_class"] == "setup_failed"
    assert by_id["alpha"]["turns"] == 2 and by_id["alpha"]["tool_calls"] == 1
    assert by_id["alpha"]["tokens"]["output"] > 0 and by_id["alpha"]["cost_usd"] > 0
    assert not any("broken-setup" in prompt for prompt in task_prompts(fake_api))  # no model call
    assert "+alpha.txt" in (out / "tasks" / "alpha" / "diff.patch").read_text()
    assert "kept.txt" not in (out / "tasks" / "alpha" / "diff.patch").read_text()
    assert (out / "tasks" / "alpha" / "check.log").read_text() == "alpha checked\n"
    assert (out / "tasks" / "broken-setup" / "setup.log").read_text() == "preparing\n"
    (transcript,) = (out / "tasks" / "alpha" / "transcripts").glob("*.jsonl")
    assert "alpha.txt" in transcript.read_text()
    assert not (batch_dir / "src" / "alpha.txt").exists()  # the workdir itself is left alone
    summary = json.loads(ran.stdout.splitlines()[-1])
    assert summary["event"] == "summary" and summary["done"] == 5 and summary["passed"] == 2


def test_running_the_same_batch_again_runs_only_the_tasks_without_a_result(
    run_main: RunMain, fake_api: FakeAnthropic, batch_dir: Path
) -> None:
    tasks_file = write_tasks(batch_dir / "tasks.jsonl", [writing_task("one"), writing_task("two")])
    serve_tasks(fake_api)
    out = batch_dir / "out"
    assert run_main("batch", str(tasks_file), "--out", str(out)).returncode == 0
    first = (out / "results.jsonl").read_text()
    asked = len(task_prompts(fake_api))

    assert run_main("batch", str(tasks_file), "--out", str(out)).returncode == 0
    assert (out / "results.jsonl").read_text() == first
    assert len(task_prompts(fake_api)) == asked

    write_tasks(tasks_file, [writing_task("one"), writing_task("two"), writing_task("three")])
    assert run_main("batch", str(tasks_file), "--out", str(out)).returncode == 0
    assert [result["id"] for result in results(out)][2:] == ["three"]
    assert all("WRITE:three" in prompt for prompt in task_prompts(fake_api)[asked:])

    stats = run_main("stats", str(out), "--json")  # the batch read like a project
    assert stats.returncode == 0, stats.stderr
    figures = json.loads(stats.stdout)
    assert (figures["sessions"], figures["projects"]) == (3, 3)
    shown = run_main("stats", str(out))
    assert "3 sessions in 3 tasks" in " ".join(shown.stdout.split())
    not_a_batch = run_main("stats", str(batch_dir / "src"))
    assert not_a_batch.returncode == 2 and "not a batch's folder" in not_a_batch.stderr


def test_the_batch_budget_stops_starting_tasks(run_main: RunMain, fake_api: FakeAnthropic, batch_dir: Path) -> None:
    tasks_file = write_tasks(batch_dir / "tasks.jsonl", [writing_task(f"t{n}") for n in range(4)])
    serve_tasks(fake_api)
    out = batch_dir / "out"

    ran = run_main("batch", str(tasks_file), "--out", str(out), "--workers", "1", "--max-budget-usd", "0.001")

    assert ran.returncode == 1
    assert len(task_prompts(fake_api)) == 1  # t0's first answer spent it: nothing more was sent
    assert (out / "results.jsonl").read_text() == ""  # t0 was cut short: it runs again
    events = [json.loads(line) for line in ran.stdout.splitlines()]
    assert any(event["event"] == "stopping" and "budget" in event["why"] for event in events)
    assert events[-1]["not_started"] == 4

    ran = run_main("batch", str(tasks_file), "--out", str(out), "--max-budget-usd", "5")
    assert ran.returncode == 0
    assert sorted(result["id"] for result in results(out)) == ["t0", "t1", "t2", "t3"]


def test_a_task_over_its_own_budget_ends_as_budget(run_main: RunMain, fake_api: FakeAnthropic, batch_dir: Path) -> None:
    tasks_file = write_tasks(batch_dir / "tasks.jsonl", [writing_task("dear")])
    serve_tasks(fake_api)
    out = batch_dir / "out"

    ran = run_main("batch", str(tasks_file), "--out", str(out), "--task-budget-usd", "0.0001")

    assert ran.returncode == 1
    (result,) = results(out)
    assert (result["status"], result["error_class"]) == ("budget", "task_budget")
    assert result["check_exit_code"] is None  # not checked


def test_a_crashed_worker_fails_only_its_task_which_is_retried(
    run_main: RunMain, fake_api: FakeAnthropic, batch_dir: Path
) -> None:
    marker = batch_dir / "crashed-once"
    crash_once = f"if [ ! -e {marker} ]; then touch {marker}; kill -9 $PPID; fi"
    tasks = [writing_task("crashes", setup=crash_once), writing_task("calm")]
    tasks_file = write_tasks(batch_dir / "tasks.jsonl", tasks)
    serve_tasks(fake_api)
    out = batch_dir / "out"

    ran = run_main("batch", str(tasks_file), "--out", str(out), "--workers", "2", "--retries", "1")

    assert ran.returncode == 0, ran.stdout
    by_id = {result["id"]: result for result in results(out)}
    assert by_id["crashes"]["status"] == "passed" and by_id["crashes"]["attempts"] == 2
    assert by_id["calm"]["status"] == "passed" and by_id["calm"]["attempts"] == 1
    assert any(json.loads(line).get("event") == "retry" for line in ran.stdout.splitlines())

    marker.unlink()
    (out / "results.jsonl").unlink()
    ran = run_main("batch", str(tasks_file), "--out", str(out), "--retries", "0")
    by_id = {result["id"]: result for result in results(out)}
    assert (by_id["crashes"]["status"], by_id["crashes"]["error_class"]) == ("error", "crashed")
    assert "died" in by_id["crashes"]["error"]
    assert by_id["calm"]["status"] == "passed"


def test_a_task_in_a_git_repository_works_on_a_clone_at_its_commit(
    run_main: RunMain, fake_api: FakeAnthropic, batch_dir: Path
) -> None:
    repo = batch_dir / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    (repo / "v.txt").write_text("one\n")
    git("add", ".")
    git("commit", "-qm", "one")
    first = git("rev-parse", "HEAD")
    (repo / "v.txt").write_text("two\n")
    git("commit", "-qam", "two")
    task = {
        "id": "old",
        "prompt": "WRITE:made.txt",
        "repo": "repo",
        "commit": first,
        "check": "grep -qx one v.txt && test -f made.txt",
        "allowed_tools": ["Write"],
    }
    by_url = {**task, "id": "by-url", "repo": f"file://{repo}", "commit": "HEAD", "check": "grep -qx two v.txt"}
    tasks_file = write_tasks(batch_dir / "tasks.jsonl", [task, by_url])
    serve_tasks(fake_api)

    ran = run_main("batch", str(tasks_file), "--out", str(batch_dir / "out"))

    assert ran.returncode == 0, ran.stdout
    assert "+made.txt" in (batch_dir / "out" / "tasks" / "old" / "diff.patch").read_text()
    assert list((batch_dir / "out" / ".cache").glob("*.git"))  # a URL is cloned once per machine, then shared
    assert git("status", "--porcelain") == "" and (repo / "v.txt").read_text() == "two\n"
