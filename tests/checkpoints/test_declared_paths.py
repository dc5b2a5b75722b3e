"""A turn whose only changes are Write and Edit calls records its end from the paths they declared:
what that records, when it falls back to the whole tree, and rewinds across such turns (real work trees)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from agentcli.checkpoints.config import CheckpointConfig
from agentcli.checkpoints.store import CheckpointStore
from agentcli.contracts import ModelRequest
from agentcli.providers.scripted import Reply, ScriptedModel, reply, text, tool_use
from tests.checkpoints.test_rewind_cli import bash, make_tree, tree
from tests.conftest import RunAgent, RunMain

BYPASS = "bypassPermissions"
ORIGINAL = {"README.md": "hello\n", "src/app.py": "x = 1\n", "src/util.py": "def f():\n    return 1\n"}


def test_edit_only_turns_and_a_sed_turn_rewind_exactly_and_keep_what_the_user_changed(
    model: ScriptedModel, run_agent: RunAgent, run_main: RunMain, project: Path
) -> None:
    make_tree(project)
    (project / ".gitignore").write_text("build/\n")

    def the_user_edits_the_readme_meanwhile(request: ModelRequest) -> Reply:
        (project / "README.md").write_text("the user's, during turn 1\n")
        return reply(text("edited"))

    model.script(
        reply(tool_use("Read", {"file_path": "src/app.py"}, id="toolu_r")),
        reply(
            tool_use("Edit", {"file_path": "src/app.py", "old_string": "x = 1", "new_string": "x = 2"}, id="toolu_e"),
            tool_use("Write", {"file_path": "docs/notes.txt", "content": "notes\n"}, id="toolu_w"),
            tool_use("Write", {"file_path": "build/out.txt", "content": "ignored\n"}, id="toolu_b"),
        ),
        the_user_edits_the_readme_meanwhile,
    )
    assert run_agent("edit", permission_mode=BYPASS).returncode == 0
    (project / "src" / "util.py").write_text("def f():\n    return 'user'\n")  # between turns, outside agentcli
    model.script(reply(bash("sed -i s/2/3/ src/app.py", "toolu_s")), reply(text("bumped")))
    assert run_agent("bump", permission_mode=BYPASS, continue_session=True).returncode == 0
    assert (project / "src" / "app.py").read_text() == "x = 3\n"

    listed = json.loads(run_main("rewind", "--list", "--json").stdout)
    assert [turn["files"] for turn in listed["turns"]] == [["docs/notes.txt", "src/app.py"], ["src/app.py"]]

    assert run_main("rewind", "--to", "2", "--code").returncode == 0  # nothing changed outside since turn 2 began
    users = {"README.md": "the user's, during turn 1\n", "src/util.py": "def f():\n    return 'user'\n"}
    assert tree(project) == {
        **ORIGINAL,
        **users,
        ".gitignore": "build/\n",
        "build/out.txt": "ignored\n",
        "docs/notes.txt": "notes\n",
        "src/app.py": "x = 2\n",
    }

    refused = run_main("rewind", "--to", "1", "--code")
    assert refused.returncode == 1
    said = refused.stderr.split("outside agentcli since that checkpoint")[1]
    assert "README.md" in said and "src/util.py" in said and "src/app.py" not in said
    assert tree(project)["README.md"] == users["README.md"]  # nothing was done
    assert run_main("rewind", "--to", "1", "--code", "--force").returncode == 0
    assert tree(project) == {**ORIGINAL, ".gitignore": "build/\n", "build/out.txt": "ignored\n"}


Scenario = Callable[[Path], list[Path]]
"""Changes the project as a turn's Write and Edit calls would; returns the paths they declared."""


def edited(project: Path) -> list[Path]:
    (project / "src" / "app.py").write_text("x = 2\n")
    return [project / "src" / "app.py"]


def created_in_a_new_folder(project: Path) -> list[Path]:
    (project / "new" / "deep").mkdir(parents=True)
    (project / "new" / "deep" / "file.txt").write_text("new\n")
    beside = [project / name for name in ("new.txt", "src.txt", "src-x", "src0")]  # git sorts a folder as `src/`
    for path in beside:
        path.write_text("beside\n")
    return [project / "new" / "deep" / "file.txt", project / "new" / "deep" / "gone.txt", *beside]


def deleted_since(project: Path) -> list[Path]:
    (project / "src" / "util.py").unlink()
    return [project / "src" / "util.py"]


def ignored_and_outside(project: Path) -> list[Path]:
    (project / "build").mkdir()
    (project / "build" / "out.txt").write_text("ignored\n")
    (project / "src" / "app.py").chmod(0o755)
    return [project / "build" / "out.txt", project.parent / "elsewhere.txt", project / "src" / "app.py"]


def beyond_a_symlink(project: Path) -> list[Path]:
    (project / "link").symlink_to("src")
    (project / "src" / "app.py").write_text("x = 2\n")
    return [project / "link" / "app.py"]


def over_the_size_limit(project: Path) -> list[Path]:
    (project / "src" / "app.py").write_bytes(b"x" * 2_000_000)
    return [project / "src" / "app.py"]


def inside_another_repository(project: Path) -> list[Path]:
    (project / "vendor" / ".git").mkdir(parents=True)
    (project / "vendor" / "lib.py").write_text("lib\n")
    return [project / "vendor" / "lib.py"]


def a_folder(project: Path) -> list[Path]:
    (project / "src" / "pkg").mkdir()
    (project / "src" / "pkg" / "mod.py").write_text("m\n")
    return [project / "src" / "pkg"]


@pytest.mark.parametrize(
    ("scenario", "declared_only"),
    [
        (edited, True),
        (created_in_a_new_folder, True),
        (deleted_since, True),
        (ignored_and_outside, True),
        (beyond_a_symlink, False),
        (over_the_size_limit, False),
        (inside_another_repository, False),
        (a_folder, False),
    ],
)
def test_a_declared_paths_snapshot_records_what_a_whole_one_would_or_is_one(
    scenario: Scenario, declared_only: bool, project: Path, home: Path
) -> None:
    """README.md also changes, undeclared (outside agentcli): a snapshot of the declared paths
    leaves it for the next whole snapshot; where the declared paths cannot be recorded alone
    exactly as a whole snapshot would record them, the whole tree is recorded at once."""
    make_tree(project)
    (project / ".gitignore").write_text("build/\n")
    store = CheckpointConfig(max_file_bytes=1_000_000).store(project, home / ".agentcli")
    with store.repo.locked():
        base = store.record("s", "000001", "before").commit
    declared = scenario(project)
    (project / "README.md").write_text("changed outside agentcli\n")

    with store.repo.locked():
        after = store.record_paths("s", "000001", "after", base, declared).commit
        whole = store.repo.snapshot().commit

    assert store.repo.changed_names(after, whole) == (["README.md"] if declared_only else [])
    checked = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], env=shadow_env(store), capture_output=True)
    assert checked.returncode == 0, checked.stderr


def test_a_whole_snapshot_after_a_declared_paths_one_adds_nothing(project: Path, home: Path) -> None:
    make_tree(project)
    store = CheckpointConfig().store(project, home / ".agentcli")
    with store.repo.locked():
        base = store.record("s", "000001", "before").commit
    (project / "src" / "app.py").write_text("x = 2\n")
    with store.repo.locked():
        after = store.record_paths("s", "000001", "after", base, [project / "src" / "app.py"]).commit
    stored = objects(store)

    with store.repo.locked():
        whole = store.record("s", "000002", "before").commit

    assert whole == after and objects(store) == stored


def test_a_declared_paths_snapshot_builds_on_its_own_base_whoever_recorded_since(project: Path, home: Path) -> None:
    make_tree(project)
    store = CheckpointConfig().store(project, home / ".agentcli")
    other = CheckpointConfig().store(project, home / ".agentcli")
    with store.repo.locked():
        base = store.record("s", "000001", "before").commit
    (project / "README.md").write_text("recorded by the other session\n")
    with other.repo.locked():
        other.record("other", "000001", "before")
    (project / "README.md").write_text("changed again\n")
    (project / "src" / "app.py").write_text("x = 2\n")

    with store.repo.locked():
        after = store.record_paths("s", "000001", "after", base, [project / "src" / "app.py"]).commit
        whole = store.repo.snapshot().commit

    assert store.repo.changed_names(base, after) == ["src/app.py"]  # the README: changed outside agentcli
    assert store.repo.changed_names(after, whole) == ["README.md"]


def test_an_unchanged_declared_path_adds_nothing(project: Path, home: Path) -> None:
    make_tree(project)
    store = CheckpointConfig().store(project, home / ".agentcli")
    with store.repo.locked():
        base = store.record("s", "000001", "before").commit
    stored = objects(store)

    with store.repo.locked():
        after = store.record_paths("s", "000001", "after", base, [project / "src" / "app.py"]).commit

    assert after == base and objects(store) == stored


def shadow_env(store: CheckpointStore) -> dict[str, str]:
    return {**os.environ, "GIT_DIR": str(store.repo.folder / "git"), "GIT_CONFIG_GLOBAL": os.devnull}


def objects(store: CheckpointStore) -> int:
    return sum(len(files) for _, _, files in os.walk(store.repo.folder / "git" / "objects"))
