"""The glob/.gitignore pattern compiler and the ignore rules, checked against git's documented semantics."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.tools.globs import AnchoredGlob, GitPatternList, PathFilter, expand_braces, literal_prefix
from agentcli.tools.ignore import IgnoreRules, walk_files
from tests.tools.helpers import write


def test_expand_braces() -> None:
    assert expand_braces("*.{ts,tsx}") == ["*.ts", "*.tsx"]
    assert expand_braces("{a,b}/{c,d}") == ["a/c", "a/d", "b/c", "b/d"]
    assert expand_braces("x{a,{b,c}}") == ["xa", "xb", "xc"]
    assert expand_braces("plain") == ["plain"]


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "expected"),
    [
        ("*.log", "debug.log", False, True),
        ("*.log", "deep/in/debug.log", False, True),
        ("/*.log", "deep/debug.log", False, None),
        ("/*.log", "debug.log", False, True),
        ("build/", "build", True, True),
        ("build/", "build", False, None),
        ("build/", "src/build", True, True),
        ("doc/*.txt", "doc/a.txt", False, True),
        ("doc/*.txt", "doc/sub/a.txt", False, None),
        ("doc/*.txt", "x/doc/a.txt", False, None),
        ("**/logs", "a/b/logs", True, True),
        ("logs/**", "logs/a/b.txt", False, True),
        ("a/**/b", "a/b", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("file[0-9].txt", "file7.txt", False, True),
        ("file[!0-9].txt", "filex.txt", False, True),
        ("file[!0-9].txt", "file7.txt", False, None),
        ("\\#hash", "#hash", False, True),
        ("# comment", "# comment", False, None),
        ("trailing   ", "trailing", False, True),
    ],
)
def test_gitignore_pattern_semantics(pattern: str, path: str, is_dir: bool, expected: bool | None) -> None:
    assert GitPatternList([pattern]).match(path, is_dir) is expected


def test_last_matching_pattern_wins() -> None:
    patterns = GitPatternList(["*.log", "!keep.log", "keep.log.d/"])
    assert patterns.match("a.log", False) is True
    assert patterns.match("keep.log", False) is False
    assert patterns.match("other.txt", False) is None


def test_path_filter_follows_ripgrep_glob_rules() -> None:
    only_py = PathFilter("*.py")
    assert only_py.accepts_file("a/b.py") and not only_py.accepts_file("a/b.js")
    assert not only_py.excludes_dir("a")
    no_tests = PathFilter("!tests")
    assert no_tests.excludes_dir("tests") and no_tests.accepts_file("src/a.py")


def test_anchored_glob_and_literal_prefix() -> None:
    assert AnchoredGlob("*.py").matches("a.py") and not AnchoredGlob("*.py").matches("x/a.py")
    assert AnchoredGlob("**/*.py").matches("a.py") and AnchoredGlob("**/*.py").matches("x/y/a.py")
    assert AnchoredGlob("*.py").max_depth == 1 and AnchoredGlob("**/*.py").max_depth is None
    assert literal_prefix("src/app/**/*.ts") == ("src/app", "**/*.ts")
    assert literal_prefix("*.py") == ("", "*.py")


def test_nested_gitignore_and_info_exclude(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".git/info/exclude": "*.tmp\n",
            ".gitignore": "*.log\n",
            "sub/.gitignore": "!important.log\n",
            "a.log": "",
            "a.tmp": "",
            "sub/important.log": "",
            "sub/other.log": "",
            "keep.txt": "",
        },
    )
    found = sorted(rel for _, rel in walk_files(str(tmp_path), IgnoreRules()))
    assert found == [".gitignore", "keep.txt", "sub/.gitignore", "sub/important.log"]


def test_a_nested_repository_starts_afresh(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".git/HEAD": "",
            ".gitignore": "*.log\n",
            "vendor/lib/.git/HEAD": "",
            "vendor/lib/x.log": "",
            "vendor/z.log": "",
            "y.log": "",
        },
    )
    found = sorted(rel for _, rel in walk_files(str(tmp_path), IgnoreRules()))
    assert found == [".gitignore", "vendor/lib/x.log"]  # what ripgrep reports for this tree


def test_gitignore_above_the_repository_is_not_used(tmp_path: Path) -> None:
    write(tmp_path, {".gitignore": "*.txt\n", "repo/.git/HEAD": "", "repo/a.txt": ""})
    assert [rel for _, rel in walk_files(str(tmp_path / "repo"), IgnoreRules())] == ["a.txt"]
