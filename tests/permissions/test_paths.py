"""Path patterns (gitignore-style, anchored) and where a path really is."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.permissions.paths import PathRuleError, escape_pattern, is_inside, parse_path_pattern


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text("a")
    (root / ".env").write_text("SECRET=1")
    return root


@pytest.mark.parametrize(
    ("spec", "rel", "expected"),
    [
        ("src/**", "src/pkg/a.py", True),
        ("src/**", "lib/a.py", False),
        ("./src/**", "src/pkg/a.py", True),
        ("/src/**", "src/pkg/a.py", True),
        ("*.py", "src/pkg/a.py", True),
        ("*.py", "src/pkg/a.txt", False),
        (".env", "sub/.env", True),
        ("./.env", ".env", True),
        ("./.env", "sub/.env", False),
        ("src/*.py", "src/pkg/a.py", False),
        ("src/", "src/pkg/a.py", True),
        (".", "anything/at/all", True),
    ],
)
def test_project_patterns(project: Path, spec: str, rel: str, expected: bool) -> None:
    assert parse_path_pattern(spec).matches(project / rel, project) is expected


def test_a_folder_is_covered_when_its_contents_are(project: Path) -> None:
    assert parse_path_pattern("src/**").matches(project / "src", project)
    assert not parse_path_pattern("src/*.py").matches(project / "src", project)


def test_absolute_and_home_patterns(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    absolute = parse_path_pattern(f"/{tmp_path}/shared/**")
    assert absolute.anchor == "root"
    assert absolute.matches(tmp_path / "shared" / "x.txt", project)
    assert not absolute.matches(tmp_path / "other" / "x.txt", project)
    notes = parse_path_pattern("~/notes/**")
    assert notes.matches(home / "notes" / "today.md", project)
    assert not notes.matches(home / "other.md", project)
    # A project pattern never reaches outside the project.
    assert not parse_path_pattern("**").matches(tmp_path / "shared" / "x.txt", project)


@pytest.mark.parametrize(
    ("spec", "problem"),
    [("", "empty"), ("~bob/x", "~user"), ("../x", ".."), ("src/../../x", ".."), ("!secret", "negated")],
)
def test_bad_patterns(spec: str, problem: str) -> None:
    with pytest.raises(PathRuleError, match=problem):
        parse_path_pattern(spec)


def test_dot_dot_is_resolved_before_judging(project: Path, tmp_path: Path) -> None:
    assert not is_inside(project / ".." / "outside.txt", project)
    assert not is_inside(project / "src" / ".." / ".." / "x", project)
    assert is_inside(project / ".." / "project" / "src" / "pkg" / "a.py", project)


def test_symlinks_are_resolved_before_judging(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "escape").symlink_to(outside)
    (outside / "into").symlink_to(project / "src")
    assert not is_inside(project / "escape" / "new-file.txt", project)
    assert is_inside(outside / "into" / "pkg" / "a.py", project)


def test_escaping_makes_a_path_literal(project: Path) -> None:
    weird = project / "src" / "[draft] *notes?.md"
    pattern = parse_path_pattern("./" + escape_pattern("src/[draft] *notes?.md"))
    assert pattern.matches(weird, project)
    assert not pattern.matches(project / "src" / "d notes1.md", project)
