"""`agentcli batch` with the sandbox (the real bubblewrap): each task's commands, and its check,
run in a sandbox whose one writable folder is the task's own workspace, where no other task's
workspace and not the batch's folder can be seen; a Harbor task's tests, which run outside it,
are said to; where bubblewrap is missing, the sandbox's one line (once), or with
failIfUnavailable no task runs. And without it: a batch task's session records no checkpoints,
and a copied workdir that holds the batch's folder is copied without it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from agentcli.batch.harbor import OUTSIDE_THE_SANDBOX
from tests.batch.agents import prompt_of, results, serve_tasks, write_tasks
from tests.batch.test_batch_kinds import harbor_task
from tests.conftest import RunMain
from tests.context.helpers import GIT_ENV
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, reply, text, tool_use
from tests.sandbox_support import require_sandbox
from tests.test_sandbox_session import path_without_bwrap

WAIT = "for i in $(seq 3000); do [ -e {0} ] && break; sleep 0.02; done"
"""A setup that waits (a minute at most) for the file {0}."""
MISSING = "bubblewrap (bwrap) is not installed"


def bash_or_done(commands: dict[str, str], after_bash: Path | None = None) -> Any:
    """Answers: a task's first request gets a Bash call of the command its prompt names, the
    next one "done" (touching `after_bash` first, when given)."""

    def answer(request: RecordedRequest) -> Reply:
        prompt = prompt_of(request)
        command = next((line for word, line in commands.items() if word in prompt), None)
        if command is not None and len(request.body["messages"]) == 1:
            return reply(tool_use("Bash", {"command": command}))
        if command is not None and after_bash is not None:
            after_bash.touch()
        return reply(text("done"))

    return answer


def tool_output(api: FakeAnthropic, word: str) -> str:
    """What the Bash call of the task whose prompt holds `word` printed, as the model was sent it."""
    for request in api.requests:
        if request.path != "/v1/messages" or word not in prompt_of(request):
            continue
        for message in request.body["messages"][1:]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result":
                    return json.dumps(block["content"])
    raise AssertionError(f"no tool result for {word}")


@pytest.mark.parametrize("temporary", ["/tmp", "elsewhere"])
def test_a_sandboxed_task_sees_and_writes_only_its_own_workspace_and_its_check_runs_there_too(
    run_main: RunMain,
    fake_api: FakeAnthropic,
    tmp_path: Path,
    outside: Path,
    monkeypatch: pytest.MonkeyPatch,
    temporary: str,
) -> None:
    """With the machine's temporary folder elsewhere than /tmp (TMPDIR), which the sandbox does
    not make private, the other tasks' workspaces are hidden all the same."""
    require_sandbox()
    if temporary == "elsewhere":
        monkeypatch.setattr(tempfile, "tempdir", str(outside))  # as TMPDIR=/var/tmp/... would
    (tmp_path / "src").mkdir()
    out = tmp_path / "out"
    victim_ready, go = tmp_path / "victim-ready", tmp_path / "go"
    sibling = "../../victim.1/workspace"
    attack = (
        "echo mine > mine.txt; ls ../.. | sed s/^/SEEN:/; "
        f"cat {sibling}/secret.txt; echo x > {sibling}/intruder.txt && echo WROTE-SIBLING; "
        f"ls -a {out} | sed s/^/OUT:/; echo x > {out}/intruder.txt && echo WROTE-OUT"
    )
    tasks = [
        {
            "id": "victim",
            "prompt": "nothing to do",
            "workdir": "src",
            "setup": f"echo victim-secret > secret.txt; touch {victim_ready}; {WAIT.format(go)}",
        },
        {
            "id": "attacker",
            "prompt": "please ATTACK",
            "workdir": "src",
            "setup": WAIT.format(victim_ready),  # the victim's workspace exists while the attacker works
            "check": 'test -f mine.txt && test "$AGENTCLI_SANDBOX" = 1',
        },
    ]
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    fake_api.script(*[bash_or_done({"ATTACK": attack}, after_bash=go)] * 10)

    ran = run_main("batch", str(tmp_path / "tasks.jsonl"), "--out", str(out), "--workers", "2", "--sandbox")

    assert ran.returncode == 0, ran.stdout + ran.stderr
    by_id = {result["id"]: result for result in results(out)}
    assert by_id["attacker"]["status"] == "passed"  # its check ran in the sandbox
    assert by_id["attacker"]["sandboxed"] is True and by_id["victim"]["sandboxed"] is True
    said = tool_output(fake_api, "ATTACK")
    assert "SEEN:attacker.1" in said and "SEEN:victim.1" not in said  # its own folder, no other
    assert "victim-secret" not in said and "OUT:results.jsonl" not in said and "OUT:.lock" not in said
    assert "WROTE-SIBLING" not in said and "WROTE-OUT" not in said
    assert not (out / "intruder.txt").exists()
    victim_diff = (out / "tasks" / "victim" / "diff.patch").read_text()
    assert "+victim-secret" in victim_diff and "intruder" not in victim_diff
    assert "+mine" in (out / "tasks" / "attacker" / "diff.patch").read_text()


def test_a_harbor_tasks_tests_run_outside_the_sandbox_and_the_batch_says_so(
    run_main: RunMain, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    require_sandbox()
    harbor_task(tmp_path / "harbor", "hello", "Create hello.txt: WRITE:hello.txt")
    serve_tasks(fake_api)
    out = tmp_path / "out"

    ran = run_main("batch", str(tmp_path / "harbor"), "--out", str(out), "--allowed-tools", "Write", "--sandbox")

    assert ran.returncode == 0, ran.stdout + ran.stderr
    [result] = results(out)
    assert (result["status"], result["reward"], result["sandboxed"]) == ("passed", 1.0, True)
    notices = [event["text"] for event in map(json.loads, ran.stdout.splitlines()) if event["event"] == "notice"]
    assert notices == [OUTSIDE_THE_SANDBOX]


def test_where_bubblewrap_is_missing_the_batch_says_so_once_and_tasks_run_with_the_usual_questions(
    run_main: RunMain, fake_api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path))
    (tmp_path / "src").mkdir()
    tasks = [{"id": f"t{n}", "prompt": f"please TOUCH{n}", "workdir": "src"} for n in range(2)]
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    fake_api.script(*[bash_or_done({f"TOUCH{n}": "touch made.txt" for n in range(2)})] * 10)
    out = tmp_path / "out"

    ran = run_main("batch", str(tmp_path / "tasks.jsonl"), "--out", str(out), "--workers", "1", "--sandbox")

    notices = [event for event in map(json.loads, ran.stdout.splitlines()) if event["event"] == "notice"]
    assert len(notices) == 1, ran.stdout  # the same line from both tasks, said once
    assert notices[0]["text"].startswith(f"The sandbox is off for this session: {MISSING}: install bubblewrap")
    assert [result["sandboxed"] for result in results(out)] == [False, False]
    assert "Permission denied" in tool_output(fake_api, "TOUCH0")  # asked about as usual: nobody says yes
    assert "made.txt" not in (out / "tasks" / "t0" / "diff.patch").read_text()


def test_with_fail_if_unavailable_no_task_runs_without_the_sandbox(
    run_main: RunMain, fake_api: FakeAnthropic, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = {"sandbox": {"enabled": True, "failIfUnavailable": True}}
    (home / ".agentcli" / "settings.json").write_text(json.dumps(settings))
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path))
    (tmp_path / "src").mkdir()
    write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "p", "workdir": "src"}])
    out = tmp_path / "out"

    ran = run_main("batch", str(tmp_path / "tasks.jsonl"), "--out", str(out), "--retries", "0")

    assert ran.returncode == 1
    [result] = results(out)
    assert (result["status"], result["error_class"]) == ("error", "sandbox_unavailable")
    assert f"The sandbox cannot start: {MISSING}" in result["error"]
    assert "sandbox.failIfUnavailable is set" in result["error"]
    assert fake_api.requests == []


def test_a_copied_workdir_leaves_out_the_batchs_folder_and_a_task_records_no_checkpoints(
    run_main: RunMain, fake_api: FakeAnthropic, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "kept.txt").write_text("kept\n")
    out = tmp_path / "mine" / "runs" / "today"  # inside the folder every task copies
    alone = "test -f kept.txt && ! test -e runs/today"  # no earlier task's result, diff or workspace
    tasks: list[dict[str, Any]] = [
        {"id": "t0", "prompt": "please WRITE:new.txt", "workdir": "mine", "check": alone, "allowed_tools": ["Write"]},
        {"id": "t1", "prompt": "nothing to do", "workdir": "mine", "check": alone},
    ]
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    serve_tasks(fake_api)

    ran = run_main("batch", str(tmp_path / "tasks.jsonl"), "--out", str(out), "--workers", "1")

    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert [result["status"] for result in results(out)] == ["passed", "passed"]
    assert "+new.txt" in (out / "tasks" / "t0" / "diff.patch").read_text()  # the task did change its workspace
    assert not (home / ".agentcli" / "checkpoints").exists()


@pytest.mark.parametrize("planted", ["link", "open"])
def test_a_scratch_folder_someone_else_could_reach_is_refused(
    run_main: RunMain, tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    """On a shared machine another user may make the batch's scratch folder first (a link to
    their own, or one anyone may write): the batch stops rather than put workspaces there."""
    monkeypatch.setattr(tempfile, "tempdir", str(outside))
    out = tmp_path / "out"
    name = outside / f"agentcli-batch-{hashlib.sha256(str(out).encode()).hexdigest()[:16]}"
    theirs = outside / "theirs"
    theirs.mkdir()
    if planted == "link":
        name.symlink_to(theirs)
    else:
        name.mkdir(mode=0o777)
        name.chmod(0o777)
    (tmp_path / "src").mkdir()
    write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "hi", "workdir": "src"}])

    ran = run_main("batch", str(tmp_path / "tasks.jsonl"), "--out", str(out))

    assert ran.returncode == 2
    assert f"{name} is not a private folder of yours" in ran.stderr and "Traceback" not in ran.stderr
    assert list(theirs.iterdir()) == []


def test_a_task_cloned_from_a_url_can_use_git_in_its_sandbox(
    run_main: RunMain, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    """Its clone shares the objects of the batch's cache of that URL: the sandbox must let git
    read them, though the rest of the batch's folder is hidden."""
    require_sandbox()
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "one"]):
        (repo / "v.txt").write_text("one\n")
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env={**os.environ, **GIT_ENV})
    task = {"id": "url", "prompt": "please LOG", "repo": f"file://{repo}", "commit": "HEAD", "check": "git log -1"}
    write_tasks(tmp_path / "tasks.jsonl", [task])
    fake_api.script(*[bash_or_done({"LOG": "git log --format=LOGGED:%s -1 && git status --short && echo GIT-OK"})] * 4)

    ran = run_main("batch", str(tmp_path / "tasks.jsonl"), "--out", str(tmp_path / "out"), "--sandbox")

    assert ran.returncode == 0, ran.stdout + ran.stderr
    said = tool_output(fake_api, "LOG")
    assert "LOGGED:one" in said and "GIT-OK" in said, said
    [result] = results(tmp_path / "out")
    assert result["status"] == "passed"  # its check's git too
