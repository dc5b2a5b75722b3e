"""The system prompt: core, memory folder, environment, git snapshot, --append-system-prompt last."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest

from agentcli.context.facts import MAX_LINE_CHARS, gather_facts
from agentcli.context.paths import memory_dir, project_slug
from agentcli.context.system_prompt import CORE, build_system_prompt
from agentcli.workspace.local import LocalWorkspace
from tests.context.helpers import git, write

TODAY = datetime.date(2026, 3, 14)


@pytest.fixture(autouse=True)
def agentcli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "agentcli-home"
    monkeypatch.setenv("AGENTCLI_HOME", str(home))
    return home


def test_project_slug_is_readable_and_tells_apart_paths_that_read_the_same() -> None:
    slug = project_slug(Path("/work/my app.v2/x_y"))
    assert re.fullmatch(r"-work-my-app-v2-x-y-[0-9a-f]{8}", slug)
    assert project_slug(Path("/x/proj-a")) != project_slug(Path("/x/proj_a"))
    assert project_slug(Path("/x/proj-a")) == project_slug(Path("/x/proj-a"))
    deep = project_slug(Path("/" + "/".join(["folder"] * 60)))
    assert len(deep) <= 255 and "folder-folder" in deep


def test_the_slug_follows_the_real_path(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert project_slug(tmp_path / "link") == project_slug(tmp_path / "real")


def test_system_prompt_parts_in_order_with_append_last(tmp_path: Path, agentcli_home: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "trunk")
    for n in range(1, 7):
        write(repo / f"f{n}.txt", str(n))
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", f"commit number {n}")
    write(repo / "new.txt", "x")
    write(repo / "f1.txt", "changed")

    facts = gather_facts(LocalWorkspace(repo), "claude-test-1", TODAY)
    core, session = (block["text"] for block in build_system_prompt(repo, "m", "ALWAYS ANSWER IN FRENCH", facts))

    assert core == CORE
    assert "never force-push" in core.lower() and "Use Read, Edit" in core
    expected_memory = agentcli_home / "projects" / project_slug(repo) / "memory"
    assert memory_dir(repo) == expected_memory
    assert f"{expected_memory}/" in session
    assert f"Working directory: {repo}" in session
    assert "Model: claude-test-1" in session
    assert "Today's date: 2026-03-14" in session
    assert "Shell: bash" in session
    assert "Branch: trunk" in session
    assert " M f1.txt" in session and "?? new.txt" in session
    subjects = [f"commit number {n}" for n in range(6, 1, -1)]
    positions = [session.index(s) for s in subjects]
    assert positions == sorted(positions)  # newest first
    assert "commit number 1" not in session  # only the last five
    assert session.rstrip().endswith("ALWAYS ANSWER IN FRENCH")
    assert session.index("# Memory") < session.index("# Environment") < session.index("# Git")


def test_outside_git_says_so(tmp_path: Path) -> None:
    [_, session] = build_system_prompt(tmp_path, "m", None, gather_facts(LocalWorkspace(tmp_path), "m", TODAY))
    assert "Not a git repository." in session["text"]


def test_empty_repository_has_no_commits_yet(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    text = build_system_prompt(tmp_path, "m", None, gather_facts(LocalWorkspace(tmp_path), "m", TODAY))[1]["text"]
    assert "No commits yet on main" in text and "(no commits yet)" in text and "(clean)" in text


def test_core_block_is_the_same_for_every_project_and_model(tmp_path: Path) -> None:
    a = build_system_prompt(tmp_path, "model-a", "x", gather_facts(LocalWorkspace(tmp_path), "model-a", TODAY))
    b = build_system_prompt(
        tmp_path / "..", "model-b", None, gather_facts(LocalWorkspace(tmp_path / ".."), "model-b", TODAY)
    )
    assert a[0] == b[0]
    assert a[1] != b[1]


def test_long_status_is_capped(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    for n in range(45):
        write(tmp_path / f"u{n:02}.txt", "x")
    text = gather_facts(LocalWorkspace(tmp_path), "m", TODAY).git
    assert "... and 15 more (run `git status` for all)" in text


def test_a_huge_commit_subject_and_status_are_cut_while_read(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    subject = "S" * 2_000_000
    (tmp_path / "message.txt").write_text(subject)
    git(tmp_path, "commit", "-q", "--allow-empty", "-F", str(tmp_path / "message.txt"))
    for n in range(400):  # 25 KB of status, past the 16 KiB read
        write(tmp_path / f"untracked-file-with-a-rather-long-name-{n:04}.txt", "x")

    text = gather_facts(LocalWorkspace(tmp_path), "m", TODAY).git

    assert len(text) < 20_000
    (commit,) = [line for line in text.splitlines() if "SSS" in line]
    assert re.fullmatch(r"[0-9a-f]+ S+…", commit) and len(commit) == MAX_LINE_CHARS + 1
    assert "... and many more (run `git status` for all)" in text
