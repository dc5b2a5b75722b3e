from __future__ import annotations

import os
from pathlib import Path

from agentcli.access import Access
from agentcli.contracts import ToolContext, ToolResult
from agentcli.tools.glob import MAX_RESULTS, GlobTool
from tests.tools.helpers import call, write

GLOB = GlobTool()


def glob(ctx: ToolContext, pattern: str, **extra: object) -> ToolResult:
    return call(GLOB, ctx, {"pattern": pattern, **extra})


def names(result: ToolResult) -> list[str]:
    assert not result.is_error, result.content
    return sorted(result.content.split("\n"))


TREE = {
    "setup.py": "",
    "src/app.py": "",
    "src/lib/util.py": "",
    "src/web/view.tsx": "",
    "src/web/model.ts": "",
    "src/web/style.css": "",
    "README.md": "",
    ".github/workflows/ci.yml": "",
}


def test_double_star_spans_folders_and_single_star_does_not(ctx: ToolContext, repo: Path) -> None:
    write(repo, TREE)
    assert names(glob(ctx, "**/*.py")) == ["setup.py", "src/app.py", "src/lib/util.py"]
    assert names(glob(ctx, "*.py")) == ["setup.py"]
    assert names(glob(ctx, "src/*.py")) == ["src/app.py"]


def test_braces_and_character_classes(ctx: ToolContext, repo: Path) -> None:
    write(repo, TREE)
    assert names(glob(ctx, "src/**/*.{ts,tsx}")) == ["src/web/model.ts", "src/web/view.tsx"]
    assert names(glob(ctx, "**/[A-Z]*.md")) == ["README.md"]


def test_path_parameter_and_hidden_folders(ctx: ToolContext, repo: Path) -> None:
    write(repo, TREE)
    assert names(glob(ctx, "*.ts*", path="src/web")) == ["src/web/model.ts", "src/web/view.tsx"]
    assert names(glob(ctx, "**/*.yml")) == [".github/workflows/ci.yml"]


def test_sorted_newest_first(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"a.txt": "", "b.txt": "", "c.txt": ""})
    for age, name in enumerate(["b.txt", "c.txt", "a.txt"]):
        os.utime(repo / name, (10_000 - age, 10_000 - age))
    assert glob(ctx, "*.txt").content == "b.txt\nc.txt\na.txt"


def test_capped_with_a_count_of_the_rest(ctx: ToolContext, repo: Path) -> None:
    write(repo, {f"d/f{n:03}.txt": "" for n in range(MAX_RESULTS + 25)})
    result = glob(ctx, "**/*.txt")
    out = result.content.split("\n")
    assert len(out) == MAX_RESULTS + 2
    assert out[-1] == "[25 more files matched; narrow the pattern or path to see them.]"
    assert result.summary == f"Found {MAX_RESULTS + 25} files"


def test_gitignore_and_git_are_honoured(ctx: ToolContext, repo: Path) -> None:
    write(repo, {".gitignore": "node_modules/\n*.pyc\n", "a.py": "", "a.pyc": "", "node_modules/x/y.py": ""})
    write(repo, {".git/hooks/pre.py": ""})
    assert names(glob(ctx, "**/*.py*")) == ["a.py"]


def test_symlinks_are_not_followed(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"real/a.py": ""})
    (repo / "alias").symlink_to("real")
    assert names(glob(ctx, "**/*.py")) == ["real/a.py"]


def test_no_match_and_missing_folder(ctx: ToolContext, repo: Path) -> None:
    write(repo, {"src/a.py": ""})
    result = glob(ctx, "**/*.rs")
    assert not result.is_error and result.content == "No files match '**/*.rs'."
    missing = glob(ctx, "*.py", path="scr")
    assert missing.is_error and "Did you mean src?" in missing.content


def test_absolute_pattern(ctx: ToolContext, repo: Path, tmp_path: Path) -> None:
    write(tmp_path / "other", {"x/y.md": ""})
    result = glob(ctx, str(tmp_path / "other" / "**" / "*.md"))
    assert result.content == str((tmp_path / "other" / "x" / "y.md").resolve())


def test_glob_is_read_only(ctx: ToolContext) -> None:
    assert GLOB.access({"pattern": "**/*.py"}, ctx).read_only
    assert GLOB.concurrency == "shared"


def test_it_declares_it_reads_the_folder_searched(ctx: ToolContext, repo: Path) -> None:
    assert GLOB.access({"pattern": "**/*.py"}, ctx) == Access(reads=(repo,))
    assert GLOB.access({"pattern": "src/**/*.py", "path": "pkg"}, ctx).reads == (repo / "pkg" / "src",)
    assert GLOB.access({"pattern": "/etc/**/*.conf"}, ctx).reads == (Path("/etc"),)
    assert GLOB.access({"pattern": "../other/*.md"}, ctx).reads == (repo.parent / "other",)
