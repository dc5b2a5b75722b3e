from __future__ import annotations

import stat
from pathlib import Path

from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.tools.edit import EditTool
from agentcli.tools.read import ReadTool
from tests.tools.helpers import call, write

EDIT = EditTool()


def read(ctx: ToolContext, name: str) -> None:
    assert not call(ReadTool(), ctx, {"file_path": name}).is_error


def edit(ctx: ToolContext, name: str, old: str, new: str, **extra: object) -> ToolResult:
    return call(EDIT, ctx, {"file_path": name, "old_string": old, "new_string": new, **extra})


APP = "def main():\n    print('hello')\n    return 0\n"


def test_replaces_the_exact_string_and_returns_a_diff(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"src/app.py": APP})
    read(ctx, "src/app.py")
    result = edit(ctx, "src/app.py", "print('hello')", "print('bye')")
    assert not result.is_error
    assert (repo / "src/app.py").read_text() == APP.replace("hello", "bye")
    assert result.summary == "Updated src/app.py: 1 addition, 1 removal"
    assert result.diff == (
        "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n def main():\n"
        "-    print('hello')\n+    print('bye')\n     return 0\n"
    )
    assert result.content.startswith("Updated src/app.py: 1 addition, 1 removal\n\n--- a/src/app.py")


def test_refused_unless_the_file_was_read(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": APP})
    result = edit(ctx, "a.py", "hello", "bye")
    assert result.is_error
    assert "Read it first" in result.content
    assert (repo / "a.py").read_text() == APP


def test_stale_edit_is_refused(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": APP})
    read(ctx, "a.py")
    (repo / "a.py").write_text(APP + "# the user added this\n")
    result = edit(ctx, "a.py", "hello", "bye")
    assert result.is_error
    assert "modified since you read it" in result.content and "Read it again" in result.content
    assert "hello" in (repo / "a.py").read_text()


def test_ambiguous_match_states_the_count_and_lines(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": "x = 1\ny = 2\nx = 1\nx = 1\n"})
    read(ctx, "a.py")
    result = edit(ctx, "a.py", "x = 1", "x = 9")
    assert result.is_error
    assert "occurs 3 times" in result.content and "lines 1, 3, 4" in result.content
    assert "replace_all" in result.content
    assert (repo / "a.py").read_text() == "x = 1\ny = 2\nx = 1\nx = 1\n"


def test_replace_all_changes_every_occurrence(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": "x = 1\ny = 2\nx = 1\n"})
    read(ctx, "a.py")
    result = edit(ctx, "a.py", "x = 1", "x = 9", replace_all=True)
    assert not result.is_error
    assert (repo / "a.py").read_text() == "x = 9\ny = 2\nx = 9\n"
    assert result.summary == "Updated a.py: 2 additions, 2 removals"


def test_identical_strings_are_an_error(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": APP})
    read(ctx, "a.py")
    result = edit(ctx, "a.py", "hello", "hello")
    assert result.is_error and "identical" in result.content


def test_not_found_points_out_indentation_differences(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": APP})
    read(ctx, "a.py")
    result = edit(ctx, "a.py", "def main():\n\tprint('hello')", "x")
    assert result.is_error
    assert "Only whitespace differs from lines 1-2" in result.content
    assert "     2\t    print('hello')" in result.content
    assert "line 2: the file indents with 4 spaces, old_string with 1 tab" in result.content
    assert (repo / "a.py").read_text() == APP


def test_not_found_shows_the_closest_region_with_line_numbers(ctx: ToolContext, repo: Path) -> None:
    body = "".join(f"def f{n}(a, b):\n    return a + {n}\n\n" for n in range(30))
    write(repo, {"m.py": body})
    read(ctx, "m.py")
    result = edit(ctx, "m.py", "def f17(a, c):\n    return a + 17\n", "pass\n")
    assert result.is_error
    assert "The closest match is lines 52-53" in result.content
    assert "    52\tdef f17(a, b):" in result.content
    assert "line 52 reads 'def f17(a, b):' in the file but 'def f17(a, c):' in old_string" in result.content


def test_not_found_without_anything_similar(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": APP})
    read(ctx, "a.py")
    result = edit(ctx, "a.py", "zzzzzzzzzzzzzzzzzzzzzzzzz qqqqqqqqqq", "x")
    assert result.is_error
    assert "No similar text" in result.content


def test_line_number_prefixes_copied_from_read_are_explained(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": APP})
    read(ctx, "a.py")
    result = edit(ctx, "a.py", "     2\t    print('hello')", "x")
    assert result.is_error
    assert "line-number prefixes" in result.content


def test_crlf_file_stays_crlf(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"win.txt": b"one\r\ntwo\r\nthree\r\n"})
    read(ctx, "win.txt")
    result = edit(ctx, "win.txt", "one\ntwo\n", "uno\ndos\ntres\n")
    assert not result.is_error
    assert (repo / "win.txt").read_bytes() == b"uno\r\ndos\r\ntres\r\nthree\r\n"


def test_single_line_edit_in_crlf_file_with_new_lines(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"win.txt": b"a\r\nb\r\n"})
    read(ctx, "win.txt")
    edit(ctx, "win.txt", "b", "b\nc")
    assert (repo / "win.txt").read_bytes() == b"a\r\nb\r\nc\r\n"


def test_encoding_is_preserved(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"l1.txt": "café au lait\n".encode("latin-1"), "bom.txt": "\ufeffname = 1\n".encode()})
    read(ctx, "l1.txt")
    read(ctx, "bom.txt")
    assert not edit(ctx, "l1.txt", "café", "thé").is_error
    assert not edit(ctx, "bom.txt", "1", "2").is_error
    assert (repo / "l1.txt").read_bytes() == "thé au lait\n".encode("latin-1")
    assert (repo / "bom.txt").read_bytes() == b"\xef\xbb\xbfname = 2\n"


def test_unencodable_replacement_is_a_clear_error(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"l1.txt": "café\n".encode("latin-1")})
    read(ctx, "l1.txt")
    result = edit(ctx, "l1.txt", "café", "咖啡")
    assert result.is_error and "latin-1" in result.content
    assert (repo / "l1.txt").read_bytes() == "café\n".encode("latin-1")


def test_unicode_edit(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"u.md": "# Ünïcödé 日本\n"})
    read(ctx, "u.md")
    assert not edit(ctx, "u.md", "日本", "🙂").is_error
    assert (repo / "u.md").read_text(encoding="utf-8") == "# Ünïcödé 🙂\n"


def test_missing_file_suggests_a_path(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"src/main.py": "x"})
    result = edit(ctx, "src/mian.py", "x", "y")
    assert result.is_error and "Did you mean src/main.py?" in result.content


def test_empty_old_string_creates_a_new_file(ctx: ToolContext, repo: Path) -> None:
    result = edit(ctx, "pkg/new.py", "", "x = 1\n")
    assert not result.is_error
    assert (repo / "pkg/new.py").read_text() == "x = 1\n"


def test_empty_old_string_on_a_non_empty_file_is_refused(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": APP})
    read(ctx, "a.py")
    result = edit(ctx, "a.py", "", "x")
    assert result.is_error and "Write" in result.content


def test_binary_file_is_refused(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"b.bin": b"abc\0def"})
    ctx.read_files.clear()
    read_result = call(ReadTool(), ctx, {"file_path": "b.bin"})
    assert read_result.is_error
    result = edit(ctx, "b.bin", "abc", "xyz")
    assert result.is_error
    assert (repo / "b.bin").read_bytes() == b"abc\0def"


def test_edit_through_a_symlink_changes_the_target_and_keeps_the_link(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"real.py": "a = 1\n"})
    (repo / "link.py").symlink_to("real.py")
    read(ctx, "link.py")
    assert not edit(ctx, "link.py", "a = 1", "a = 2").is_error
    assert (repo / "link.py").is_symlink()
    assert (repo / "real.py").read_text() == "a = 2\n"


def test_mode_is_preserved(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"run.sh": "echo 1\n"})
    (repo / "run.sh").chmod(0o755)
    read(ctx, "run.sh")
    edit(ctx, "run.sh", "1", "2")
    assert stat.S_IMODE((repo / "run.sh").stat().st_mode) == 0o755


def test_consecutive_edits_need_no_reread(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": APP})
    read(ctx, "a.py")
    assert not edit(ctx, "a.py", "hello", "one").is_error
    assert not edit(ctx, "a.py", "return 0", "return 1").is_error
    assert (repo / "a.py").read_text() == "def main():\n    print('one')\n    return 1\n"


def test_file_without_final_newline(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "last line"})
    read(ctx, "a.txt")
    result = edit(ctx, "a.txt", "last", "final")
    assert (repo / "a.txt").read_text() == "final line"
    assert result.diff is not None and "\\ No newline at end of file" in result.diff


def test_preview_shows_the_diff_without_writing(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"win.txt": b"a\r\nb\r\n"})
    tool_input: JSON = {"file_path": "win.txt", "old_string": "a\nb", "new_string": "a\nc"}
    assert EDIT.preview(tool_input, ctx) == "--- a/win.txt\n+++ b/win.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
    assert (repo / "win.txt").read_bytes() == b"a\r\nb\r\n"
    assert EDIT.preview({**tool_input, "old_string": "zzz"}, ctx) is None
    created = EDIT.preview({"file_path": "new.txt", "old_string": "", "new_string": "x\n"}, ctx)
    assert created == "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\n"
    assert not (repo / "new.txt").exists()


def test_a_file_replaced_by_a_folder_is_refused(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "abc\n"})
    read(ctx, "a.txt")
    (repo / "a.txt").unlink()
    (repo / "a.txt").mkdir()
    result = edit(ctx, "a.txt", "abc", "x")
    assert result.is_error and "not a regular file" in result.content
