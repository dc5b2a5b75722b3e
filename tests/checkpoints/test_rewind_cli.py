"""Checkpoints recorded by real runs in a real work tree, and `agentcli rewind` putting it back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.sessions.store import latest_session, load_transcript
from tests.conftest import RunAgent, RunMain


def bash(command: str, id: str) -> Any:
    return tool_use("Bash", {"command": command}, id=id)


def make_tree(project: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")
    (project / "src" / "util.py").write_text("def f():\n    return 1\n")
    (project / "README.md").write_text("hello\n")


def tree(project: Path) -> dict[str, str]:
    return {
        str(path.relative_to(project)): path.read_text()
        for path in sorted(project.rglob("*"))
        if path.is_file() and ".git" not in path.parts
    }


def git(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, capture_output=True, text=True, check=True).stdout


def test_rewind_restores_what_bash_and_a_subagent_changed(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path
) -> None:
    make_tree(project)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "start")
    before = tree(project)
    user_git = {name: git(project, *args) for name, args in {"status": ["status"], "index": ["ls-files", "-s"]}.items()}
    model.script(
        reply(bash("sed -i 's/1/2/' src/app.py && rm -rf src/util.py", "toolu_1")),
        reply(text("edited")),
        reply(
            tool_use(
                "Task",
                {"description": "write", "prompt": "write notes", "subagent_type": "general-purpose"},
                id="toolu_task",
            )
        ),
        reply(tool_use("Write", {"file_path": str(project / "notes.txt"), "content": "sub\n"}, id="toolu_w")),
        reply(text("wrote notes")),
        reply(text("done")),
        reply(bash("rm -rf src", "toolu_2")),
        reply(text("removed")),
    )
    assert run_agent("edit", permission_mode="bypassPermissions").returncode == 0
    assert run_agent("notes", permission_mode="bypassPermissions", continue_session=True).returncode == 0
    assert run_agent("remove", permission_mode="bypassPermissions", continue_session=True).returncode == 0
    assert not (project / "src").exists()
    assert (project / "notes.txt").read_text() == "sub\n"

    listed = run_main("rewind", "--list", "--json")
    assert listed.returncode == 0, listed.stderr
    turns = json.loads(listed.stdout)["turns"]
    assert [(t["turn"], t["prompt"], t["files"]) for t in turns] == [
        (1, "edit", ["src/app.py", "src/util.py"]),
        (2, "notes", ["notes.txt"]),
        (3, "remove", ["src/app.py"]),
    ]

    undone = run_main("rewind", "--to", "2", "--code")
    assert undone.returncode == 0, undone.stderr
    assert (project / "src" / "app.py").read_text() == "x = 2\n" and not (project / "notes.txt").exists()

    back = run_main("rewind", "--to", "1")
    assert back.returncode == 0, back.stderr
    assert tree(project) == before
    assert {
        name: git(project, *args) for name, args in {"status": ["status"], "index": ["ls-files", "-s"]}.items()
    } == (user_git)  # the user's repository: index and status as they were (the rewind restored exactly the files)
    assert load_transcript(latest_session(project).path).turns == []  # the conversation is back before turn 1


def test_rewind_refuses_when_files_changed_outside_agentcli(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path
) -> None:
    make_tree(project)
    model.script(reply(bash("rm src/app.py", "toolu_1")), reply(text("gone")))
    assert run_agent("remove app", permission_mode="bypassPermissions").returncode == 0
    (project / "README.md").write_text("edited by hand\n")

    refused = run_main("rewind", "--to", "1", "--code")
    assert refused.returncode == 1
    assert "README.md" in refused.stderr and "--force" in refused.stderr
    assert not (project / "src" / "app.py").exists()  # nothing was changed

    forced = run_main("rewind", "--to", "1", "--code", "--force")
    assert forced.returncode == 0, forced.stderr
    assert (project / "src" / "app.py").read_text() == "x = 1\n"
    assert (project / "README.md").read_text() == "hello\n"

    undo = run_main("rewind", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert not (project / "src" / "app.py").exists()
    assert (project / "README.md").read_text() == "edited by hand\n"
