"""Grep, run twice over: once through ripgrep (skipped only if rg is absent) and once in pure Python."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from agentcli.access import Access
from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.tools.grep import GrepTool
from agentcli.workspace.local import LocalWorkspace
from tests.tools.helpers import HAVE_RG, call, needs_rg, write

ENGINES = [pytest.param("ripgrep", marks=needs_rg), "python"]


@pytest.fixture(params=ENGINES)
def grep_tool(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> GrepTool:
    monkeypatch.delenv("AGENTCLI_NO_RIPGREP", raising=False)
    return GrepTool(use_ripgrep=None if request.param == "ripgrep" else False)


def grep(tool: GrepTool, ctx: ToolContext, pattern: str, **extra: object) -> ToolResult:
    return call(tool, ctx, {"pattern": pattern, **extra})


def lines(result: ToolResult) -> list[str]:
    assert not result.is_error, result.content
    return result.content.split("\n")


def set_mtimes(root: Path, names: list[str]) -> None:
    """Make `names` newest-first by giving each an older mtime than the one before."""
    for age, name in enumerate(names):
        os.utime(root / name, (1_000_000 - age * 100, 1_000_000 - age * 100))


def test_files_with_matches_is_the_default_newest_first(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"old.py": "needle\n", "mid.py": "needle\n", "new.py": "x = 'needle'\n", "none.py": "hay\n"})
    set_mtimes(repo, ["new.py", "mid.py", "old.py"])
    result = grep(grep_tool, ctx, "needle")
    assert lines(result) == ["new.py", "mid.py", "old.py"]
    assert result.summary == "Found 3 files"


def test_content_mode_shows_path_line_and_text(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": "import os\ndef run():\n    os.exit()\n", "b/c.py": "def other():\n"})
    assert lines(grep(grep_tool, ctx, r"def \w+\(", output_mode="content")) == [
        "a.py:2:def run():",
        "b/c.py:1:def other():",
    ]
    assert lines(grep(grep_tool, ctx, r"def \w+\(", output_mode="content", **{"-n": False})) == [
        "a.py:def run():",
        "b/c.py:def other():",
    ]


def test_context_lines_and_separators(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(
        repo, {"a.txt": "".join(f"line{n}\n" for n in range(1, 11)).replace("line3", "HIT3").replace("line8", "HIT8")}
    )
    assert lines(grep(grep_tool, ctx, "HIT", output_mode="content", **{"-C": 1})) == [
        "a.txt-2-line2",
        "a.txt:3:HIT3",
        "a.txt-4-line4",
        "--",
        "a.txt-7-line7",
        "a.txt:8:HIT8",
        "a.txt-9-line9",
    ]
    assert lines(grep(grep_tool, ctx, "HIT3", output_mode="content", **{"-A": 2, "-B": 0})) == [
        "a.txt:3:HIT3",
        "a.txt-4-line4",
        "a.txt-5-line5",
    ]


def test_count_mode(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "x\nx x\ny\n", "b.txt": "x\n", "c.txt": "none\n"})
    result = grep(grep_tool, ctx, "x", output_mode="count")
    assert lines(result) == ["a.txt:2", "b.txt:1"]
    assert result.summary == "Found 3 matching lines in 2 files"


def test_ignore_case(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "Hello\n", "b.txt": "hello\n"})
    assert lines(grep(grep_tool, ctx, "HELLO", output_mode="count", **{"-i": True})) == ["a.txt:1", "b.txt:1"]
    assert grep(grep_tool, ctx, "HELLO").content == "No matches found."


def test_glob_filters_file_names(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": "k\n", "web/b.ts": "k\n", "web/c.tsx": "k\n", "web/d.js": "k\n", "e.md": "k\n"})
    assert sorted(lines(grep(grep_tool, ctx, "k", glob="*.py"))) == ["a.py"]
    assert sorted(lines(grep(grep_tool, ctx, "k", glob="**/*.{ts,tsx}"))) == ["web/b.ts", "web/c.tsx"]
    assert sorted(lines(grep(grep_tool, ctx, "k", glob="web/*.js"))) == ["web/d.js"]
    assert sorted(lines(grep(grep_tool, ctx, "k", glob="!*.py"))) == ["e.md", "web/b.ts", "web/c.tsx", "web/d.js"]


def test_type_filters_by_language(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": "k\n", "b.pyi": "k\n", "c.rs": "k\n", "d.go": "k\n"})
    assert sorted(lines(grep(grep_tool, ctx, "k", type="py"))) == ["a.py", "b.pyi"]
    assert sorted(lines(grep(grep_tool, ctx, "k", type="rust"))) == ["c.rs"]
    assert sorted(lines(grep(grep_tool, ctx, "k", type="go", glob="*.py"))) == ["No matches found."]


def test_unknown_type_lists_the_known_ones(grep_tool: GrepTool, ctx: ToolContext) -> None:
    result = grep(grep_tool, ctx, "k", type="klingon")
    assert result.is_error and "Known types:" in result.content and "py" in result.content


def test_head_limit_caps_entries_and_says_how_many_more(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {f"f{n:02}.txt": "k\n" for n in range(12)})
    out = lines(grep(grep_tool, ctx, "k", head_limit=5))
    assert len(out) == 7 and out[5] == ""
    assert out[6].startswith("[Showing 5 of 12 files.")
    content = lines(grep(grep_tool, ctx, "k", output_mode="content", head_limit=3))
    assert content[:3] == ["f00.txt:1:k", "f01.txt:1:k", "f02.txt:1:k"]
    assert content[-1].startswith("[Showing 3 of 12 lines.")


def test_multiline(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.py": "class A:\n    x = 1\n\nclass B:\n    pass\n"})
    without = grep(grep_tool, ctx, r"A:\n\s+x")
    assert without.is_error and "Set multiline to true" in without.content
    assert lines(grep(grep_tool, ctx, r"A:\n\s+x", output_mode="content", multiline=True)) == [
        "a.py:1:class A:",
        "a.py:2:    x = 1",
    ]
    assert lines(grep(grep_tool, ctx, r"class A.*pass", output_mode="count", multiline=True)) == ["a.py:5"]


def test_invalid_regex_is_a_clear_error(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "f(x)\n"})
    result = grep(grep_tool, ctx, "f(x")
    assert result.is_error
    assert result.content.startswith("Invalid regular expression 'f(x':")
    assert "Escape" in result.content


def test_look_around_works(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "foobar\nfoobaz\n"})
    assert lines(grep(grep_tool, ctx, "foo(?=baz)", output_mode="content")) == ["a.txt:2:foobaz"]


def test_binary_files_are_skipped(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"img.bin": b"needle\0\x01\x02", "text.txt": "needle\n"})
    assert lines(grep(grep_tool, ctx, "needle")) == ["text.txt"]


def test_gitignored_files_and_folders_and_git_are_skipped(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(
        repo,
        {
            ".gitignore": "build/\n*.log\n!keep.log\nnode_modules\n/generated.py\n",
            "src/app.py": "needle\n",
            "src/generated.py": "needle\n",
            "generated.py": "needle\n",
            "build/out.py": "needle\n",
            "node_modules/lib/index.js": "needle\n",
            "debug.log": "needle\n",
            "keep.log": "needle\n",
            "pkg/.gitignore": "local_*.py\n",
            "pkg/local_x.py": "needle\n",
            "pkg/shared.py": "needle\n",
            ".git/config": "needle\n",
            ".github/workflows/ci.yml": "needle\n",
        },
    )
    assert sorted(lines(grep(grep_tool, ctx, "needle"))) == [
        ".github/workflows/ci.yml",
        "keep.log",
        "pkg/shared.py",
        "src/app.py",
        "src/generated.py",
    ]
    # A glob selects among non-ignored files only (ripgrep alone would let it re-include them).
    for glob in ("*.py", "**/*.py", "{src,pkg}/**/*.py"):
        assert sorted(lines(grep(grep_tool, ctx, "needle", glob=glob))) == [
            "pkg/shared.py",
            "src/app.py",
            "src/generated.py",
        ]


def test_a_nul_after_a_match_still_counts_the_lines_before_it(
    grep_tool: GrepTool, ctx: ToolContext, repo: Path
) -> None:
    # rg --count alone leaves such a file out; Grep counts it as its content mode shows it.
    write(repo, {"late.log": "needle\n" + "x" * 70_000 + "\n\0needle\n", "plain.txt": "needle\nneedle\n"})
    result = grep(grep_tool, ctx, "needle", output_mode="count")
    assert lines(result) == ["late.log:1", "plain.txt:2"]
    assert result.summary == "Found 3 matching lines in 2 files"
    assert lines(grep(grep_tool, ctx, "needle", output_mode="content")) == [
        "late.log:1:needle",
        "plain.txt:1:needle",
        "plain.txt:2:needle",
    ]


def test_file_names_with_line_breaks(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"two\nlines.txt": "needle\n", "a.txt": "needle here\n"})
    assert lines(grep(grep_tool, ctx, "needle", output_mode="count")) == ["a.txt:1", "two", "lines.txt:1"]
    assert lines(grep(grep_tool, ctx, "needle", output_mode="content")) == [
        "a.txt:1:needle here",
        "two",
        "lines.txt:1:needle",
    ]


def test_a_folder_around_the_project_lists_files_inside_it_relative(
    grep_tool: GrepTool, tmp_path: Path, repo: Path
) -> None:
    write(repo, {"src/in.txt": "needle\n", "top.txt": "needle\n", "src/zz.txt": "needle\n"})
    result = grep(grep_tool, ToolContext(LocalWorkspace(repo / "src")), "needle", path=str(repo), output_mode="count")
    assert lines(result) == [f"{repo.resolve()}/top.txt:1", "in.txt:1", "zz.txt:1"]


def test_an_ignored_folder_named_as_path_is_searched(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {".gitignore": "build/\n", "build/out.py": "needle\n"})
    assert lines(grep(grep_tool, ctx, "needle", path="build")) == ["build/out.py"]


def test_gitignore_applies_only_inside_a_git_repository(grep_tool: GrepTool, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    write(plain, {".gitignore": "*.log\n", "a.log": "needle\n"})
    assert lines(grep(grep_tool, ToolContext(LocalWorkspace(plain)), "needle")) == ["a.log"]


def test_symlinks_are_not_followed(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"real/a.txt": "needle\n"})
    (repo / "alias").symlink_to("real")
    (repo / "link.txt").symlink_to("real/a.txt")
    assert lines(grep(grep_tool, ctx, "needle")) == ["real/a.txt"]


def test_single_file_path(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "one\ntwo\n", "b.txt": "two\n"})
    assert lines(grep(grep_tool, ctx, "two", path="a.txt", output_mode="content")) == ["2:two"]
    assert lines(grep(grep_tool, ctx, "two", path=str(repo / "a.txt"))) == ["a.txt"]


def test_missing_path_suggests_one(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"src/x.py": ""})
    result = grep(grep_tool, ctx, "x", path="scr")
    assert result.is_error and "Did you mean src?" in result.content


def test_crlf_and_unicode(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"win.txt": b"alpha\r\nbeta\r\n", "u.txt": "naïve café 日本\n"})
    assert lines(grep(grep_tool, ctx, "^beta$", output_mode="content")) == ["No matches found."]
    assert lines(grep(grep_tool, ctx, "^beta", output_mode="content")) == ["win.txt:2:beta"]
    assert lines(grep(grep_tool, ctx, "caf. 日", output_mode="content")) == ["u.txt:1:naïve café 日本"]


def test_huge_line_is_clipped(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(repo, {"min.js": "a" * 10_000 + "needle" + "b" * 10_000 + "\n"})
    (line,) = lines(grep(grep_tool, ctx, "needle", output_mode="content"))
    assert line.startswith("min.js:1:aaaa") and line.endswith("[... 19,506 more characters]")


def test_long_lines_are_clipped_alike_in_every_spelling(grep_tool: GrepTool, ctx: ToolContext, repo: Path) -> None:
    write(
        repo,
        {
            "wide.txt": "é" * 1_000 + "needle\r\n" + "x" * 600 + " needle context\n",
            "tail.txt": "y" * 700 + "needle",  # no line break at the end
            "marker.txt": "needle [... omitted end of long line]\n",  # short: shown as written
        },
    )
    shown = lines(grep(grep_tool, ctx, "needle", output_mode="content"))
    assert shown[0] == "marker.txt:1:needle [... omitted end of long line]"
    assert shown[1] == "tail.txt:1:" + "y" * 500 + " [... 206 more characters]"
    assert shown[2] == "wide.txt:1:" + "é" * 500 + " [... 506 more characters]"
    assert shown[3] == "wide.txt:2:" + "x" * 500 + " [... 115 more characters]"


@needs_rg
def test_a_huge_line_never_passes_through_memory_whole(ctx: ToolContext, repo: Path) -> None:
    size = 30_000_000
    with open(repo / "bundle.min.js", "wb") as file:
        file.write(b"a" * (size // 2) + b"needle" + b"b" * (size // 2) + b"\n")
    tool = GrepTool(use_ripgrep=None)

    tracemalloc.start()
    try:
        result = grep(tool, ctx, "needle", output_mode="content")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert lines(result) == ["bundle.min.js:1:" + "a" * 500 + f" [... {size + 6 - 500:,} more characters]"]
    assert peak < 8_000_000  # before: rg's whole output, split and decoded, several times the line


def test_searching_outside_the_project_shows_absolute_paths(
    grep_tool: GrepTool, ctx: ToolContext, tmp_path: Path
) -> None:
    write(tmp_path / "elsewhere", {"x.txt": "needle\n"})
    assert lines(grep(grep_tool, ctx, "needle", path=str(tmp_path / "elsewhere"))) == [
        str((tmp_path / "elsewhere" / "x.txt").resolve())
    ]


def test_grep_is_read_only_and_touches_its_path(ctx: ToolContext, repo: Path) -> None:
    tool = GrepTool()
    assert tool.concurrency == "shared" and tool.access({"pattern": "x"}, ctx).read_only
    assert tool.access({"pattern": "x"}, ctx) == Access(reads=(repo,))
    assert tool.access({"pattern": "x", "path": "src"}, ctx) == Access(reads=(repo / "src",))


# ------------------------------------------------------------------ the ripgrep path itself


@needs_rg
def test_env_var_forces_the_python_engine(ctx: ToolContext, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # \pL is valid for ripgrep's regex engine but not for Python's: which engine ran shows.
    write(repo, {"a.txt": "word\n"})
    monkeypatch.delenv("AGENTCLI_NO_RIPGREP", raising=False)
    assert lines(call(GrepTool(), ctx, {"pattern": r"\pL+"})) == ["a.txt"]
    monkeypatch.setenv("AGENTCLI_NO_RIPGREP", "1")
    result = call(GrepTool(), ctx, {"pattern": r"\pL+"})
    assert result.is_error and "Invalid regular expression" in result.content


@needs_rg
def test_a_glob_ripgrep_rejects_is_a_clear_error_in_every_mode(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "needle\n"})
    for mode in ("files_with_matches", "content", "count"):
        result = call(GrepTool(), ctx, {"pattern": "needle", "glob": "a{", "output_mode": mode})
        assert result.is_error and result.content.startswith("Search failed: "), (mode, result.content)
        assert "unclosed alternate group" in result.content


@pytest.mark.skipif(not os.environ.get("AGENTCLI_REQUIRE_RIPGREP"), reason="set AGENTCLI_REQUIRE_RIPGREP=1 (CI does)")
def test_ripgrep_is_installed_where_required() -> None:
    """In CI the ripgrep half of this file must run, not skip."""
    assert HAVE_RG, "AGENTCLI_REQUIRE_RIPGREP is set but rg is not on PATH"


SAME_TREE: dict[str, str | bytes] = {
    ".gitignore": "dist/\n*.min.js\n!vendor.min.js\n",
    "src/app.py": "import os\n\ndef main(argv):\n    return run(argv)  # TODO\n\n\ndef run(args):\n    pass\n",
    "src/util.py": "def helper():\n    '''Return TODO items.'''\n    return [1, 2]\n",
    "src/ui/view.tsx": "export function View() {\n  return <div>todo</div>;\n}\n",
    "src/ui/model.ts": "export interface Model {\n  id: number;\n}\n// TODO: more\n",
    "web/app.min.js": "var a=1;// TODO\n",
    "web/vendor.min.js": "var b=2;// TODO\n",
    "dist/bundle.js": "TODO\n",
    "docs/README.md": "# Title\n\nSee TODO list.\r\nDone.\r\n",
    "data/blob.bin": b"TODO\0\0\0binary",
    "notes/unicode.txt": "Überprüfung: TODO — café\n",
    ".config/settings.json": '{"todo": true}\n',
    "bom.txt": "\ufeffTODO at the start\n",
    "late_nul.log": "TODO early\n" + "x" * 70_000 + "\n\0TODO after the NUL\n",
    "src/pkg/.gitignore": "secret_*.py\n",
    "src/pkg/secret_key.py": "TODO\n",
    # Names that look like ripgrep's own output: spaces, colons, a line-number prefix, a dash.
    "odd names/with space: and colon.txt": "TODO: odd\n12:34\n",
    "odd names/12:34-5.txt": "x\nTODO\n",
    "odd names/-dash.py": "def dash():\n    return TODO\n",
    "context.txt": "".join(f"HIT {n}\n" if n in (1, 3, 9, 10, 20) else f"plain {n}\n" for n in range(1, 25)),
}
QUERIES: list[JSON] = [
    {"pattern": "TODO"},
    {"pattern": "todo", "-i": True, "output_mode": "content"},
    {"pattern": "TODO", "output_mode": "count"},
    {"pattern": r"def \w+\(", "output_mode": "content", "-C": 1},
    {"pattern": "return", "output_mode": "content", "-B": 2, "glob": "*.py"},
    {"pattern": "export", "glob": "**/*.{ts,tsx}", "output_mode": "content"},
    {"pattern": "TODO", "type": "js"},
    {"pattern": r"main\(argv\):\n\s+return", "multiline": True, "output_mode": "content"},
    {"pattern": "^Done", "output_mode": "content"},
    {"pattern": "TODO", "path": "src", "output_mode": "content", "head_limit": 2},
    {"pattern": "café", "output_mode": "content"},
    {"pattern": "x^", "output_mode": "content"},
    {"pattern": "^TODO", "output_mode": "content"},
    {"pattern": "TODO", "glob": "!*.md", "output_mode": "count"},
    {"pattern": "[^\\n]TODO", "output_mode": "count"},
    {"pattern": "a\\w*", "multiline": True, "output_mode": "count"},
    {"pattern": "return", "path": "src/app.py", "output_mode": "content", "-A": 1},
    {"pattern": "def", "type": "py", "output_mode": "content", "-n": False},
    {"pattern": "TODO", "head_limit": 3},
    {"pattern": "TODO", "path": "data/blob.bin"},
    {"pattern": "TODO", "path": "data/blob.bin", "output_mode": "content"},
    {"pattern": "TODO", "path": "late_nul.log", "output_mode": "content"},
    {"pattern": "TODO", "path": "late_nul.log", "output_mode": "count"},
    {"pattern": "TODO|12", "path": "odd names", "output_mode": "content", "-C": 1},
    {"pattern": "TODO", "path": "odd names", "output_mode": "count"},
    {"pattern": "HIT", "output_mode": "content", "-A": 1, "-B": 3},
    {"pattern": "HIT", "output_mode": "content", "-C": 2, "head_limit": 9},
    {"pattern": "HIT", "output_mode": "count", "-C": 2},
    {"pattern": r"def \w+\(\):\n\s+return", "multiline": True, "output_mode": "content", "-C": 1},
    {"pattern": "early\\n", "multiline": True, "output_mode": "count"},
    {"pattern": "TODO", "glob": "*.txt", "output_mode": "content"},
    {"pattern": "TODO", "glob": "**/*.{py,txt}", "output_mode": "count"},
    {"pattern": "TODO", "glob": "*.py", "type": "py"},
    {"pattern": "TODO", "path": "bom.txt", "type": "py"},
    {"pattern": "TODO", "path": "bom.txt", "glob": "*.md", "output_mode": "content"},
]


@needs_rg
@pytest.mark.parametrize("query", QUERIES, ids=lambda q: str(q))
def test_ripgrep_and_python_give_identical_results(query: JSON, ctx: ToolContext, repo: Path) -> None:
    write(repo, SAME_TREE)
    set_mtimes(repo, sorted(name for name in SAME_TREE))
    with_rg = call(GrepTool(use_ripgrep=None), ctx, query)
    in_python = call(GrepTool(use_ripgrep=False), ctx, query)
    assert with_rg == in_python
