from __future__ import annotations

import os
import re
import tracemalloc
from pathlib import Path

import pytest

from agentcli.access import Access
from agentcli.contracts import ToolContext
from agentcli.tools.edit import EditTool
from agentcli.tools.read import DEFAULT_LIMIT, MAX_LINE, MAX_OUTPUT, MAX_WHOLE_FILE, ReadTool
from tests.tools.helpers import call, write

READ = ReadTool()


def read(ctx: ToolContext, file_path: str, **extra: int) -> tuple[str, bool]:
    result = call(READ, ctx, {"file_path": file_path, **extra})
    return result.content, result.is_error


def test_lines_are_numbered_like_cat_n(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": "import os\n\nprint(os.getcwd())\n"})
    result = call(READ, ctx, {"file_path": "a.py"})
    assert result.content == "     1\timport os\n     2\t\n     3\tprint(os.getcwd())"
    assert not result.is_error
    assert result.summary == "Read 3 lines"


def test_absolute_path_works(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "x\n"})
    assert read(ctx, str(repo / "a.txt")) == ("     1\tx", False)


def test_offset_and_limit_read_a_slice_and_say_how_long_the_file_is(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "".join(f"line {n}\n" for n in range(1, 11))})
    content, error = read(ctx, "a.txt", offset=4, limit=2)
    assert not error
    assert content.startswith("     4\tline 4\n     5\tline 5\n")
    assert "[Showing lines 4-5 of 10. Use offset/limit to read more.]" in content


def test_default_limit_is_2000_lines(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"long.txt": "".join(f"{n}\n" for n in range(1, 2501))})
    content, _ = read(ctx, "long.txt")
    assert f"{DEFAULT_LIMIT:6}\t{DEFAULT_LIMIT}" in content
    assert f"\t{DEFAULT_LIMIT + 1}\n" not in content
    assert "of 2500" in content


def test_offset_past_the_end_is_an_error_with_the_line_count(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "1\n2\n"})
    content, error = read(ctx, "a.txt", offset=5)
    assert error
    assert "has 2 lines" in content


def test_huge_line_is_cut_with_a_marker(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"min.js": "x" * (MAX_LINE + 500) + "\nshort\n"})
    content, _ = read(ctx, "min.js")
    first, second = content.split("\n")
    assert first == f"{1:6}\t" + "x" * MAX_LINE + " [... line cut: 500 more characters]"
    assert second == "     2\tshort"


def test_output_stays_under_the_cap_and_says_where_to_continue(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"wide.txt": "".join(f"{n:04} " + "y" * 200 + "\n" for n in range(1, 1001))})
    content, error = read(ctx, "wide.txt")
    assert not error
    assert len(content) < MAX_OUTPUT + 300
    shown = sum(1 for line in content.split("\n") if re.match(r"\s*\d+\t", line))
    assert shown > 50
    assert f"Continue with offset {shown + 1}" in content


def test_huge_file_needs_offset_and_limit(ctx: ToolContext, repo: Path) -> None:
    line = "z" * 99 + "\n"
    write(repo, {"big.log": line * (MAX_WHOLE_FILE // 100 + 50)})
    content, error = read(ctx, "big.log")
    assert error
    assert "offset and limit" in content and "Grep" in content
    total = MAX_WHOLE_FILE // 100 + 50
    content, error = read(ctx, "big.log", offset=total - 1, limit=5)
    assert not error
    assert content.startswith(f"{total - 1:6}\t" + "z" * 99)
    assert f"[Showing lines {total - 1}-{total} of {total}." in content


def test_empty_file_says_so(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"empty.txt": ""})
    result = call(READ, ctx, {"file_path": "empty.txt"})
    assert not result.is_error
    assert "empty" in result.content
    assert (repo / "empty.txt").resolve() in ctx.read_files


def test_directory_is_an_error_that_points_to_glob(ctx: ToolContext, repo: Path) -> None:
    (repo / "src").mkdir()
    content, error = read(ctx, "src")
    assert error
    assert "is a directory" in content and "Glob" in content


def test_binary_file_is_refused_with_advice(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"logo.png": b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256))})
    content, error = read(ctx, "logo.png")
    assert error
    assert "binary" in content and "Bash" in content


def test_missing_file_names_the_nearest_existing_path(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"src/main.py": "", "src/util.py": "", "docs/readme.md": ""})
    content, error = read(ctx, "src/mian.py")
    assert error
    assert content == "File not found: src/mian.py. Did you mean src/main.py?"


def test_missing_folder_component_is_fixed_too(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"src/main.py": ""})
    content, _ = read(ctx, "scr/main.py")
    assert "Did you mean src/main.py?" in content


def test_missing_file_finds_the_same_name_elsewhere(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"pkg/deep/config.yaml": "", "other.txt": ""})
    content, _ = read(ctx, "config.yaml")
    assert "pkg/deep/config.yaml" in content


def test_missing_file_with_nothing_similar(ctx: ToolContext, repo: Path) -> None:
    content, error = read(ctx, "zzz/qqq.bin")
    assert error
    assert "not found" in content and "Glob" in content


def test_crlf_lines_show_without_carriage_returns(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"win.txt": b"one\r\ntwo\r\n"})
    assert read(ctx, "win.txt") == ("     1\tone\n     2\ttwo", False)


def test_unicode_round_trips(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"u.txt": "héllo ✓ 日本語 🙂\n"})
    assert read(ctx, "u.txt") == ("     1\théllo ✓ 日本語 🙂", False)


def test_latin1_and_utf16_files_are_decoded(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"l1.txt": "café\n".encode("latin-1"), "u16.txt": "naïve\n".encode("utf-16")})
    assert read(ctx, "l1.txt") == ("     1\tcafé", False)
    assert read(ctx, "u16.txt") == ("     1\tnaïve", False)


def test_form_feed_does_not_split_a_line(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"f.txt": "a\x0cb\nc\n"})
    content, _ = read(ctx, "f.txt")
    assert content == "     1\ta\x0cb\n     2\tc"


def test_read_is_recorded_for_the_edit_guard(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "abc\n"})
    read(ctx, "a.txt")
    record = ctx.read_files[(repo / "a.txt").resolve()]
    assert record.size == 4
    assert record.mtime_ns == (repo / "a.txt").stat().st_mtime_ns


def test_symlink_is_read_and_recorded_as_its_target(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"real.txt": "target\n"})
    (repo / "link.txt").symlink_to("real.txt")
    assert read(ctx, "link.txt") == ("     1\ttarget", False)
    assert (repo / "real.txt").resolve() in ctx.read_files


def test_broken_symlink_says_where_it_points(ctx: ToolContext, repo: Path) -> None:
    (repo / "dangling").symlink_to("nowhere.txt")
    content, error = read(ctx, "dangling")
    assert error
    assert "broken symlink" in content and "nowhere.txt" in content


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_refused_instead_of_blocking(ctx: ToolContext, repo: Path) -> None:
    os.mkfifo(repo / "pipe")
    content, error = read(ctx, "pipe")
    assert error
    assert "not a regular file" in content


def test_it_declares_it_reads_the_resolved_file(ctx: ToolContext, repo: Path) -> None:
    assert READ.access({"file_path": "a/b.txt"}, ctx) == Access(reads=(repo / "a" / "b.txt",))


# ------------------------------------------------------------------ huge files, bounded memory

MEMORY_CEILING = 64 * 1024 * 1024
"""Generous: a bounded read of any file peaks at a few megabytes."""


def read_measured(ctx: ToolContext, file_path: str, **extra: int) -> tuple[str, bool, int]:
    """Read's result and the peak memory Python allocated while it ran."""
    tracemalloc.start()
    try:
        content, error = read(ctx, file_path, **extra)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return content, error, peak


def sparse_file(path: Path, head: str, size: int, tail: str = "") -> None:
    """`head`, then a hole (zero bytes on disk) up to `size`, then `tail`."""
    with path.open("wb") as handle:
        handle.write(head.encode())
        handle.truncate(size)
        handle.seek(size)
        handle.write(tail.encode())


def test_a_slice_of_a_2_gib_file_is_read_without_reading_the_rest(ctx: ToolContext, repo: Path) -> None:
    sparse_file(repo / "huge.log", "".join(f"line {n}\n" for n in range(1, 2001)), 2 << 30)
    content, error, peak = read_measured(ctx, "huge.log", offset=5, limit=5)
    assert peak < MEMORY_CEILING, peak
    assert not error, content
    assert content.split("\n")[:5] == [f"{n:6}\tline {n}" for n in range(5, 10)]
    assert content.endswith("\n\n[Showing lines 5-9; the file continues beyond line 9. Use offset/limit to read more.]")
    content, error, peak = read_measured(ctx, "huge.log", offset=1, limit=10**9)
    assert peak < MEMORY_CEILING, peak
    assert not error and len(content) < MAX_OUTPUT + 200
    assert re.search(
        r"\[Showing lines 1-\d+: output limit of 25,000 characters reached. Continue with offset \d+.\]$", content
    )


def test_one_giant_line_is_kept_only_in_part(ctx: ToolContext, repo: Path) -> None:
    size = 256 << 20
    sparse_file(repo / "min.js", "x" * 10_000, size, "\nsecond\n")
    first, error, peak = read_measured(ctx, "min.js", offset=1, limit=1)
    assert peak < MEMORY_CEILING, peak
    assert not error, first[:200]
    assert first.startswith(f"     1\t{'x' * MAX_LINE} [... line cut: {size - MAX_LINE:,} more characters]")
    assert first.endswith("[Showing lines 1-1; the file continues beyond line 1. Use offset/limit to read more.]")
    second, error, peak = read_measured(ctx, "min.js", offset=2, limit=1)
    assert peak < MEMORY_CEILING, peak
    assert (second, error) == ("     2\tsecond\n\n[Showing lines 2-2 of 2. Use offset/limit to read more.]", False)


def big_text(lines: int) -> str:
    return "".join(f"row {n:05}\n" for n in range(1, lines + 1))


def test_reading_a_big_file_to_its_end_knows_its_length(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"big.txt": big_text(40_000)})  # 400,000 bytes: over the whole-file limit
    assert (repo / "big.txt").stat().st_size > MAX_WHOLE_FILE
    content, error = read(ctx, "big.txt", offset=39_999, limit=10)
    assert not error
    assert content == (
        " 39999\trow 39999\n 40000\trow 40000\n\n[Showing lines 39999-40000 of 40000. Use offset/limit to read more.]"
    )
    content, error = read(ctx, "big.txt", offset=40_001)
    assert error and "has 40,000 lines; offset 40,001 is past the end" in content


def test_a_big_file_keeps_crlf_latin1_and_utf16_lines_as_the_whole_file_path_does(ctx: ToolContext, repo: Path) -> None:
    filler = "".join(f"{n}\r\n" for n in range(100_000))
    write(
        repo,
        {
            "crlf.txt": filler.encode() + "café\r\n".encode("latin-1"),
            "utf16.txt": ("".join(f"{n}\n" for n in range(100_000)) + "ünï\n").encode("utf-16"),
        },
    )
    content, _ = read(ctx, "crlf.txt", offset=100_001, limit=1)
    assert content.startswith("100001\tcafé\n")
    content, _ = read(ctx, "utf16.txt", offset=100_001, limit=1)
    assert content.startswith("100001\tünï\n")


def test_edit_after_a_partial_read_works_while_the_file_is_unchanged_and_is_refused_after(
    ctx: ToolContext, repo: Path
) -> None:
    write(repo, {"big.txt": big_text(40_000)})
    read(ctx, "big.txt", offset=1, limit=10)
    record = ctx.read_files[(repo / "big.txt").resolve()]
    assert record.sha256 is None  # only part was read: no whole-file hash to vouch for it
    edited = call(EditTool(), ctx, {"file_path": "big.txt", "old_string": "row 00003\n", "new_string": "row three\n"})
    assert not edited.is_error, edited.content
    read(ctx, "big.txt", offset=1, limit=10)
    os.utime(repo / "big.txt", ns=(1, 1))  # touched: with no hash to compare, it counts as changed
    refused = call(EditTool(), ctx, {"file_path": "big.txt", "old_string": "row 00004\n", "new_string": "row four\n"})
    assert refused.is_error and "was modified since you read it" in refused.content
    assert "row 00004\n" in (repo / "big.txt").read_text()
