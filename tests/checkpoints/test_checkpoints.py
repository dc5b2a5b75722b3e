"""What a checkpoint records, and what it leaves alone: runs in real work trees (in-process)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from agentcli.checkpoints.config import CheckpointConfig
from agentcli.checkpoints.shadow import shadow_folder
from agentcli.contracts import ModelRequest
from agentcli.providers.scripted import Reply, ScriptedModel, reply, text, tool_use
from agentcli.sessions.store import latest_session
from agentcli.sessions.transcript import TranscriptWriter
from tests.checkpoints.test_rewind_cli import bash, git, make_tree, tree
from tests.conftest import RunAgent, RunMain

BYPASS = "bypassPermissions"


def store_for(project: Path, home: Path) -> object:
    return CheckpointConfig().store(project, home / ".agentcli")


def digest(folder: Path) -> dict[str, str]:
    """Every file under `folder` (a .git) with its bytes and modification time."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            found[str(path.relative_to(folder))] = (
                f"{hashlib.sha256(path.read_bytes()).hexdigest()} {path.stat().st_mtime_ns}"
            )
    return found


def test_the_users_repository_is_never_touched_and_a_branch_switch_is_not_undone(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path
) -> None:
    make_tree(project)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "start")
    (project / "README.md").write_text("staged\n")
    git(project, "add", "README.md")
    git(project, "stash", "-q")
    (project / "src" / "app.py").write_text("x = 3\n")
    git(project, "add", "src/app.py")  # something in the user's index, too
    untouched = digest(project / ".git")
    model.script(reply(bash("echo more >> src/util.py", "toolu_1")), reply(text("ok")))
    assert run_agent("append", permission_mode=BYPASS).returncode == 0
    assert digest(project / ".git") == untouched  # index, refs, config, hooks, stash, reflog: byte for byte

    model.script(reply(bash("git checkout -q -b feature && sed -i s/3/4/ src/app.py", "toolu_2")), reply(text("ok")))
    assert run_agent("branch", permission_mode=BYPASS, continue_session=True).returncode == 0
    assert run_main("rewind", "--to", "2", "--code").returncode == 0
    assert (project / "src" / "app.py").read_text() == "x = 3\n"
    assert git(project, "branch", "--show-current").strip() == "feature"  # .git is not covered: said in the docs


def test_a_turn_that_only_reads_records_nothing_and_an_unchanged_tree_adds_nothing(
    model: ScriptedModel, run_agent: RunAgent, project: Path, home: Path
) -> None:
    make_tree(project)
    model.script(reply(tool_use("Read", {"file_path": "README.md"}, id="toolu_r")), reply(text("read")))
    assert run_agent("read it", permission_mode=BYPASS).returncode == 0
    assert not shadow_folder(project, home / ".agentcli").exists()

    model.script(
        reply(bash("true", "toolu_1")),
        reply(text("nothing")),
        reply(bash("ls", "toolu_2")),
        reply(text("still nothing")),
    )
    assert run_agent("look", permission_mode=BYPASS, continue_session=True).returncode == 0
    objects = shadow_folder(project, home / ".agentcli") / "git" / "objects"
    stored = sorted(str(p) for p in objects.rglob("*") if p.is_file())
    assert run_agent("look again", permission_mode=BYPASS, continue_session=True).returncode == 0
    assert sorted(str(p) for p in objects.rglob("*") if p.is_file()) == stored
    session = latest_session(project).id
    steps = CheckpointConfig().store(project, home / ".agentcli").steps(session)
    assert [s.turn for s in steps] == [2, 3] and steps[0].before == steps[1].before == steps[1].after


def test_outside_a_git_repository(model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    make_tree(plain)
    before = tree(plain)
    model.script(reply(bash("rm -rf src && echo new > README.md", "toolu_1")), reply(text("gone")))
    assert run_agent("clean up", permission_mode=BYPASS, cwd=plain).returncode == 0
    assert not (plain / "src").exists()
    rewound = run_main("rewind", "--to", "1", cwd=plain)
    assert rewound.returncode == 0, rewound.stderr
    assert tree(plain) == before
    assert not (plain / ".git").exists()


def test_bad_files_are_said_once_and_the_turn_goes_on(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path, home: Path
) -> None:
    (home / ".agentcli" / "settings.json").write_text(json.dumps({"checkpointMaxFileSizeMB": 0.001}))
    make_tree(project)
    odd = os.fsencode(project) + b"/caf\xe9.txt"
    with open(odd, "wb") as file:
        file.write(b"latin-1 name\n")
    (project / "big.bin").write_bytes(b"0" * 5000)
    (project / "outside").symlink_to("/etc/hostname")
    os.mkfifo(project / "pipe")
    nested = project / "vendor"
    nested.mkdir()
    git(nested, "init", "-q")
    (nested / "lib.py").write_text("lib\n")
    model.script(
        reply(
            bash(
                "rm -f outside caf*.txt && echo changed > big.bin && echo again > README.md && echo v2 > vendor/lib.py",
                "toolu_1",
            )
        ),
        reply(text("done")),
    )
    ran = run_agent("mess", permission_mode=BYPASS)
    assert ran.returncode == 0 and (project / "big.bin").read_text() == "changed\n"
    assert "big.bin: 5,000 bytes, over the checkpoint size limit of 1,000" in ran.stderr
    assert "vendor: a git repository of its own" in ran.stderr
    assert ran.stderr.count("vendor: a git repository") == 1  # said once, though both checkpoints left it out

    rewound = run_main("rewind", "--to", "1", "--code")
    assert rewound.returncode == 1  # one file could not be put back, and it is named
    assert "not restored: big.bin: left out of that checkpoint" in rewound.stderr
    assert Path(os.fsdecode(odd)).read_bytes() == b"latin-1 name\n"
    assert os.readlink(project / "outside") == "/etc/hostname"
    assert (project / "pipe").exists() and (project / "README.md").read_text() == "hello\n"
    assert (project / "big.bin").read_text() == "changed\n"  # never recorded: left as it is
    assert (nested / "lib.py").read_text() == "v2\n"


def test_a_checkpoint_that_cannot_be_recorded_is_said_and_the_turn_goes_on(
    model: ScriptedModel, run_agent: RunAgent, project: Path, home: Path
) -> None:
    (home / ".agentcli" / "checkpoints").write_text("not a folder")
    model.script(reply(bash("echo changed > a.txt", "toolu_1")), reply(text("written")))
    ran = run_agent("write", permission_mode=BYPASS)
    assert ran.returncode == 0
    assert (project / "a.txt").read_text() == "changed\n"
    assert "Checkpoint not recorded: cannot create" in ran.stderr


def test_a_formatter_run_by_a_hook_is_part_of_its_turn(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path, home: Path
) -> None:
    formatter = "sed -i s/draft/formatted/ notes.txt && echo notes.txt > index.txt"  # and a file the Write did not name
    hook = {"matcher": "Write", "hooks": [{"type": "command", "command": formatter}]}
    (home / ".agentcli" / "settings.json").write_text(json.dumps({"hooks": {"PostToolUse": [hook]}}))
    model.script(
        reply(tool_use("Write", {"file_path": "notes.txt", "content": "draft\n"}, id="toolu_w")),
        reply(text("written")),
    )
    assert run_agent("write notes", permission_mode=BYPASS).returncode == 0
    assert (project / "notes.txt").read_text() == "formatted\n"
    listed = json.loads(run_main("rewind", "--list", "--json").stdout)
    assert listed["turns"][0]["files"] == ["index.txt", "notes.txt"]
    assert run_main("rewind", "--to", "1", "--code").returncode == 0
    assert not (project / "notes.txt").exists() and not (project / "index.txt").exists()


def test_continue_goes_on_from_the_rewound_conversation(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path
) -> None:
    model.script(reply(text("first answer")), reply(text("second answer")), reply(text("third answer")))
    assert run_agent("first question").returncode == 0
    assert run_agent("second question", continue_session=True).returncode == 0
    rewound = run_main("rewind", "--to", "2", "--conversation")
    assert rewound.returncode == 0, rewound.stderr
    assert run_agent("third question", continue_session=True).returncode == 0
    sent = json.dumps(model.requests[-1].messages)
    assert "first question" in sent and "first answer" in sent and "third question" in sent
    assert "second" not in sent
    listed = json.loads(run_main("rewind", "--list", "--json").stdout)
    assert [(t["turn"], t["prompt"]) for t in listed["turns"]] == [(1, "first question"), (3, "third question")]


def test_bad_rewind_requests_are_usage_errors(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path
) -> None:
    none_yet = run_main("rewind", "--list")
    assert none_yet.returncode == 2 and "No earlier session" in none_yet.stderr
    model.script(reply(text("answer")))
    assert run_agent("question").returncode == 0
    for args, said in (
        (["--to", "abc"], "no turn 'abc'"),
        (["--to", "7"], "no turn '7'"),
        (["--to", "1", "--code", "--conversation"], "not both"),
        (["--code"], "go with --to"),
        (["-r", "nope"], "No session 'nope'"),
    ):
        ran = run_main("rewind", *args)
        assert ran.returncode == 2 and said in ran.stderr, (args, ran.stderr)
        assert "Traceback" not in ran.stderr
    nothing = run_main("rewind", "--to", "1", "--code")
    assert nothing.returncode == 0 and "nothing to restore" in nothing.stdout


def test_a_damaged_rewind_record_is_skipped_with_a_note(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    model.script(reply(text("one")), reply(text("two")))
    assert run_agent("question").returncode == 0
    path = latest_session(project).path
    with path.open("a") as file:
        file.write(json.dumps({"type": "rewind", "turn": 9, "conversation": True}) + "\n")
    ran = run_agent("again", continue_session=True)
    assert ran.returncode == 0
    assert "a rewind to turn 9, which is not in the conversation, was ignored" in ran.stderr
    assert "question" in json.dumps(model.requests[-1].messages)


def test_two_processes_checkpointing_one_project_lose_nothing(project: Path, home: Path) -> None:
    make_tree(project)
    script = """
import sys
from pathlib import Path
from agentcli.checkpoints.config import CheckpointConfig
project, home, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
store = CheckpointConfig().store(project, home)
for turn in range(1, 9):
    (project / f"{name}.txt").write_text(f"{turn}\\n")
    with store.repo.locked():
        store.record(name, f"{turn:06d}", "before")
"""
    env = {**os.environ, "AGENTCLI_HOME": str(home / ".agentcli")}
    procs = [
        subprocess.Popen(
            [shutil.which("python3") or "python3", "-c", script, str(project), str(home / ".agentcli"), name],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("one", "two")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    store = CheckpointConfig().store(project, home / ".agentcli")
    for name in ("one", "two"):
        assert [s.turn for s in store.steps(name)] == list(range(1, 9))
    fsck = subprocess.run(
        ["git", "--git-dir", str(store.repo.folder / "git"), "fsck", "--strict"], capture_output=True, text=True
    )
    assert fsck.returncode == 0, fsck.stderr


def test_old_sessions_checkpoints_are_pruned_after_cleanup_period_days(
    model: ScriptedModel, run_agent: RunAgent, project: Path, home: Path
) -> None:
    (home / ".agentcli" / "settings.json").write_text(json.dumps({"cleanupPeriodDays": 2}))
    store = CheckpointConfig().store(project, home / ".agentcli")
    with store.repo.locked():
        store.record("recent", "000001", "before")
    shadow = {**os.environ, "GIT_DIR": str(store.repo.folder / "git")}

    def old_checkpoint(content: str, days_ago: int) -> str:
        blob = subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], input=content, env=shadow, capture_output=True, text=True
        ).stdout.strip()
        tree = subprocess.run(
            ["git", "mktree"], input=f"100644 blob {blob}\told.txt\n", env=shadow, capture_output=True, text=True
        ).stdout.strip()
        dated = {**shadow, "GIT_COMMITTER_DATE": f"{int(time.time()) - days_ago * 86_400} +0000"}
        commit = subprocess.run(
            ["git", "commit-tree", tree, "-m", "old"], env=dated, capture_output=True, text=True, check=True
        ).stdout.strip()
        return commit

    stale = old_checkpoint("stale content\n", days_ago=5)
    kept = old_checkpoint("kept content\n", days_ago=1)
    store.repo.set_refs({"refs/agentcli/stale/000001/before": stale, "refs/agentcli/young/000001/before": kept})
    model.script(reply(bash("echo x > a.txt", "toolu_1")), reply(text("ok")))
    assert run_agent("change", permission_mode=BYPASS).returncode == 0

    assert set(store.sessions()) == {"recent", "young", latest_session(project).id}
    gone = subprocess.run(["git", "cat-file", "-e", stale], env=shadow, capture_output=True)
    assert gone.returncode != 0  # the stale session's objects were deleted with its refs


def test_a_session_open_elsewhere_is_refused_before_any_file_changes(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path
) -> None:
    model.script(reply(bash("echo one > a.txt", "toolu_1")), reply(text("ok")))
    assert run_agent("write", permission_mode=BYPASS).returncode == 0
    holder = TranscriptWriter.existing(latest_session(project).path, print)  # another agentcli has it open
    try:
        refused = run_main("rewind", "--to", "1")
    finally:
        holder.close()
    assert refused.returncode == 2 and "in use by another agentcli process" in refused.stderr
    assert (project / "a.txt").read_text() == "one\n"


def test_a_lock_left_by_a_killed_git_does_not_stop_later_checkpoints(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path, home: Path
) -> None:
    model.script(
        reply(bash("echo one > a.txt", "toolu_1")),
        reply(text("ok")),
        reply(bash("echo two > a.txt", "toolu_2")),
        reply(text("ok")),
    )
    assert run_agent("one", permission_mode=BYPASS).returncode == 0
    (shadow_folder(project, home / ".agentcli") / "git" / "index.lock").write_text("")
    second = run_agent("two", permission_mode=BYPASS, continue_session=True)
    assert second.returncode == 0 and "Checkpoint not recorded" not in second.stderr
    assert run_main("rewind", "--to", "2", "--code").returncode == 0
    assert (project / "a.txt").read_text() == "one\n"


def test_concurrent_sub_agents_changes_belong_to_their_parents_turn(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path, home: Path
) -> None:
    both_asking = threading.Barrier(2, timeout=30)

    def task(prompt: str, id: str) -> Any:
        return tool_use("Task", {"description": prompt, "prompt": prompt, "subagent_type": "general-purpose"}, id=id)

    def serve(request: ModelRequest) -> Reply:
        messages = request.messages
        prompt = json.dumps(messages[0])
        if any(tool["name"] == "Task" for tool in request.tools):  # the parent
            return reply(task("A", "toolu_a"), task("B", "toolu_b")) if len(messages) == 1 else reply(text("done"))
        name = "a" if '"A"' in prompt else "b"
        if len(messages) == 1:
            both_asking.wait()  # both sub-agents run their Bash calls at the same time
            return reply(bash(f"echo {name} > {name}.txt", f"toolu_{name}_bash"))
        return reply(text(f"{name} written"))

    model.script(*[serve] * 6)
    assert run_agent("write both", permission_mode=BYPASS).returncode == 0
    assert (project / "a.txt").exists() and (project / "b.txt").exists()
    steps = CheckpointConfig().store(project, home / ".agentcli").steps(latest_session(project).id)
    assert [step.turn for step in steps] == [1]
    assert run_main("rewind", "--to", "1", "--code").returncode == 0
    assert not (project / "a.txt").exists() and not (project / "b.txt").exists()


def test_many_files_are_recorded_and_restored(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path
) -> None:
    generated = project / "gen"
    generated.mkdir()
    for index in range(2000):  # more names and bytes than a pipe holds, both ways
        (generated / f"file{index}.txt").write_text(f"content of file {index}, long enough to add up\n")
    model.script(reply(bash("rm -rf gen", "toolu_1")), reply(text("gone")))
    assert run_agent("remove gen", permission_mode=BYPASS).returncode == 0
    assert not generated.exists()
    rewound = run_main("rewind", "--to", "1", "--code")
    assert rewound.returncode == 0, rewound.stderr
    assert len(list(generated.iterdir())) == 2000
    assert (generated / "file1999.txt").read_text() == "content of file 1999, long enough to add up\n"


def test_a_turn_given_as_a_digit_python_cannot_read_is_a_usage_error(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path
) -> None:
    model.script(reply(text("ok")))
    assert run_agent("hello").returncode == 0

    done = run_main("rewind", "--to", "²")

    assert done.returncode == 2
    assert "no turn '²' in session" in done.stderr and "Traceback" not in done.stderr
