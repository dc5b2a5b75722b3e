from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from agentcli.contracts import ToolContext
from agentcli.tools.edit import EditTool
from agentcli.tools.read import ReadTool
from agentcli.tools.write import WriteTool
from tests.tools.helpers import call, write

WRITE = WriteTool()


def test_creates_a_file_and_missing_parent_folders(ctx: ToolContext, repo: Path) -> None:
    result = call(WRITE, ctx, {"file_path": "a/b/c/new.py", "content": "print('hi')\nx = 1\n"})
    assert not result.is_error
    assert (repo / "a/b/c/new.py").read_text() == "print('hi')\nx = 1\n"
    assert result.content == "Created a/b/c/new.py (2 lines, 18 bytes)."
    assert result.diff is not None and result.diff.startswith("--- /dev/null\n+++ b/a/b/c/new.py\n")


def test_new_file_gets_the_usual_permissions(ctx: ToolContext, repo: Path) -> None:
    call(WRITE, ctx, {"file_path": "n.txt", "content": "x"})
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((repo / "n.txt").stat().st_mode) == 0o666 & ~umask


def test_refuses_to_overwrite_a_file_not_read(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"keep.txt": "precious\n"})
    result = call(WRITE, ctx, {"file_path": "keep.txt", "content": "gone\n"})
    assert result.is_error
    assert "has not been read" in result.content and "Read it first" in result.content
    assert (repo / "keep.txt").read_text() == "precious\n"


def test_overwrites_after_read(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"f.txt": "old\n"})
    call(ReadTool(), ctx, {"file_path": "f.txt"})
    result = call(WRITE, ctx, {"file_path": "f.txt", "content": "new\n"})
    assert not result.is_error
    assert (repo / "f.txt").read_text() == "new\n"
    assert result.summary == "Overwrote f.txt: 1 addition, 1 removal"
    assert result.diff is not None and "-old\n+new\n" in result.diff


def test_refuses_when_the_file_changed_since_it_was_read(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"f.txt": "v1\n"})
    call(ReadTool(), ctx, {"file_path": "f.txt"})
    (repo / "f.txt").write_text("v2 from the user\n")
    result = call(WRITE, ctx, {"file_path": "f.txt", "content": "v3\n"})
    assert result.is_error
    assert "modified since you read it" in result.content and "Read it again" in result.content
    assert (repo / "f.txt").read_text() == "v2 from the user\n"


def test_a_touched_but_unchanged_file_may_be_overwritten(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"f.txt": "same\n"})
    call(ReadTool(), ctx, {"file_path": "f.txt"})
    os.utime(repo / "f.txt", ns=(1, 1))
    assert not call(WRITE, ctx, {"file_path": "f.txt", "content": "next\n"}).is_error


def test_keeps_the_file_mode(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"run.sh": "echo 1\n"})
    (repo / "run.sh").chmod(0o751)
    call(ReadTool(), ctx, {"file_path": "run.sh"})
    call(WRITE, ctx, {"file_path": "run.sh", "content": "echo 2\n"})
    assert stat.S_IMODE((repo / "run.sh").stat().st_mode) == 0o751


def test_write_is_atomic_replace_and_leaves_no_temp_files(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"f.txt": "old\n"})
    before = (repo / "f.txt").stat().st_ino
    call(ReadTool(), ctx, {"file_path": "f.txt"})
    call(WRITE, ctx, {"file_path": "f.txt", "content": "new\n"})
    assert (repo / "f.txt").stat().st_ino != before  # a new inode renamed over the old one
    assert sorted(p.name for p in repo.iterdir()) == [".git", "f.txt"]


def test_a_failed_write_leaves_the_original_intact(
    ctx: ToolContext, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(repo, {"f.txt": "original\n"})
    call(ReadTool(), ctx, {"file_path": "f.txt"})

    def broken_rename(src: str, dst: str, **dir_fds: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "rename", broken_rename)
    result = call(WRITE, ctx, {"file_path": "f.txt", "content": "new\n"})
    assert result.is_error
    assert "No space left on device" in result.content
    assert (repo / "f.txt").read_text() == "original\n"
    assert sorted(p.name for p in repo.iterdir()) == [".git", "f.txt"]


def test_existing_crlf_file_stays_crlf(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"win.txt": b"a\r\nb\r\n"})
    call(ReadTool(), ctx, {"file_path": "win.txt"})
    call(WRITE, ctx, {"file_path": "win.txt", "content": "x\ny\nz\n"})
    assert (repo / "win.txt").read_bytes() == b"x\r\ny\r\nz\r\n"


def test_existing_latin1_file_keeps_its_encoding(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"l1.txt": "café\n".encode("latin-1")})
    call(ReadTool(), ctx, {"file_path": "l1.txt"})
    call(WRITE, ctx, {"file_path": "l1.txt", "content": "crème brûlée\n"})
    assert (repo / "l1.txt").read_bytes() == "crème brûlée\n".encode("latin-1")


def test_unicode_content_is_written_as_utf8(ctx: ToolContext, repo: Path) -> None:
    call(WRITE, ctx, {"file_path": "u.txt", "content": "日本語 🙂\n"})
    assert (repo / "u.txt").read_bytes() == "日本語 🙂\n".encode()


def test_writing_through_a_symlink_changes_the_target(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"real.txt": "old\n"})
    (repo / "link.txt").symlink_to("real.txt")
    call(ReadTool(), ctx, {"file_path": "link.txt"})
    assert not call(WRITE, ctx, {"file_path": "link.txt", "content": "new\n"}).is_error
    assert (repo / "link.txt").is_symlink()
    assert (repo / "real.txt").read_text() == "new\n"


def test_a_folder_cannot_be_written(ctx: ToolContext, repo: Path) -> None:
    (repo / "src").mkdir()
    result = call(WRITE, ctx, {"file_path": "src", "content": "x"})
    assert result.is_error
    assert "not a regular file" in result.content


def test_a_file_in_the_way_of_a_folder_is_a_clear_error(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"notdir": "x"})
    result = call(WRITE, ctx, {"file_path": "notdir/f.txt", "content": "x"})
    assert result.is_error
    assert "Could not write notdir/f.txt" in result.content


def test_own_write_counts_as_read_for_the_next_edit(ctx: ToolContext, repo: Path) -> None:
    call(WRITE, ctx, {"file_path": "f.py", "content": "a = 1\n"})
    result = call(EditTool(), ctx, {"file_path": "f.py", "old_string": "a = 1", "new_string": "a = 2"})
    assert not result.is_error
    assert (repo / "f.py").read_text() == "a = 2\n"


def test_same_content_is_not_rewritten(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"f.txt": "same\n"})
    call(ReadTool(), ctx, {"file_path": "f.txt"})
    before = (repo / "f.txt").stat().st_ino
    result = call(WRITE, ctx, {"file_path": "f.txt", "content": "same\n"})
    assert not result.is_error and "nothing written" in result.content
    assert (repo / "f.txt").stat().st_ino == before


def test_preview_shows_the_diff_without_writing(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"f.txt": "old\n"})
    diff = WRITE.preview({"file_path": "f.txt", "content": "new\n"}, ctx)
    assert diff == "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-old\n+new\n"
    assert (repo / "f.txt").read_text() == "old\n"


def test_os_errors_are_reported_without_a_traceback(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(self: WriteTool, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", "/srv/locked.txt")

    monkeypatch.setattr(WriteTool, "_plan", denied)
    result = call(WRITE, ctx, {"file_path": "/srv/locked.txt", "content": "x"})
    assert result.is_error
    assert result.content == "Write failed: Permission denied: /srv/locked.txt."


def test_a_path_longer_than_path_max_is_refused_before_any_folder_is_made(ctx: ToolContext, repo: Path) -> None:
    deep = "a/" * 2100 + "f.txt"  # each name is short; the whole is over 4,096 bytes

    result = call(WRITE, ctx, {"file_path": deep, "content": "x"})

    made = (repo / "a").exists()
    if made:  # what is being refused: pytest's own clean-up (shutil.rmtree) would overflow its stack on it
        subprocess.run(["rm", "-rf", str(repo / "a")], check=True)
    assert not made
    assert result.is_error
    assert "this system takes paths of at most 4,095 (PATH_MAX)" in result.content
    assert "Use a shorter path, with fewer or shorter folder names. Nothing was written." in result.content
    assert len(result.content) < 600  # the path is not quoted whole


def test_a_name_longer_than_name_max_is_refused_before_any_folder_is_made(ctx: ToolContext, repo: Path) -> None:
    result = call(WRITE, ctx, {"file_path": "new/" + "y" * 300 + "/f.txt", "content": "x"})

    assert result.is_error
    assert "is 300 bytes long, and this file system takes names of at most 255 (NAME_MAX)" in result.content
    assert "Use a shorter file or folder name." in result.content
    assert not (repo / "new").exists()
    longest = "z" * 255
    assert not call(WRITE, ctx, {"file_path": longest, "content": "x"}).is_error
    assert (repo / longest).read_text() == "x"
