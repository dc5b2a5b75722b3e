"""CLAUDE.md / CLAUDE.local.md / AGENTS.md discovery and @imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.context.instructions import (
    MAX_IMPORT_DEPTH,
    import_mentions,
    load_instructions,
    render_instructions,
)
from tests.context.helpers import write


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "agentcli-home"


def test_load_order_user_then_walk_down_then_agents(tmp_path: Path, home: Path) -> None:
    top = tmp_path / "top"
    cwd = top / "mid" / "leaf"
    cwd.mkdir(parents=True)
    write(home / "CLAUDE.md", "user")
    write(top / "AGENTS.md", "agents top")
    write(cwd / "AGENTS.md", "agents leaf")
    write(cwd / "CLAUDE.md", "leaf")
    write(top / "mid" / "CLAUDE.local.md", "mid local")
    write(top / "CLAUDE.md", "top")
    write(top / "CLAUDE.local.md", "top local")
    write(top / "mid" / "other" / "CLAUDE.md", "not on the walk")

    files = load_instructions(cwd, home)

    assert [f.text for f in files] == ["user", "top", "top local", "mid local", "leaf", "agents top", "agents leaf"]
    assert files[0].kind.startswith("the user's private global")
    assert "not checked in" in files[2].kind


def test_imports_relative_home_nested_and_not_in_code(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    write(tmp_path / "userhome" / "prefs.md", "PREFS")
    cwd = tmp_path / "p"
    write(
        cwd / "CLAUDE.md",
        "Style: @docs/style.md, and @~/prefs.md.\n"
        "Mail me at me@example.com. `@docs/code.md` is code.\n"
        "```\n@docs/fenced.md\n```\n",
    )
    write(cwd / "docs" / "style.md", "STYLE, see @more/deep.md")
    write(cwd / "docs" / "more" / "deep.md", "DEEP")
    for name in ("code.md", "fenced.md"):
        write(cwd / "docs" / name, "MUST NOT APPEAR")

    files = load_instructions(cwd, home)

    assert [f.path.name for f in files] == ["CLAUDE.md", "style.md", "deep.md", "prefs.md"]
    assert files[1].imported_by == cwd / "CLAUDE.md"
    assert files[2].imported_by == cwd / "docs" / "style.md"
    text = render_instructions(files)
    assert "MUST NOT APPEAR" not in text
    assert f"Contents of {cwd / 'docs' / 'style.md'} (imported by {cwd / 'CLAUDE.md'}):\n\nSTYLE" in text
    assert all(not f.notes for f in files)


def test_missing_cycle_folder_and_depth_are_reported_inline(tmp_path: Path, home: Path) -> None:
    cwd = tmp_path / "p"
    write(cwd / "CLAUDE.md", "@a.md @missing/file.md @docs @alice")
    (cwd / "docs").mkdir()
    write(cwd / "a.md", "A imports @CLAUDE.md and @l1.md")
    for level in range(1, MAX_IMPORT_DEPTH + 2):
        write(cwd / f"l{level}.md", f"level {level} @l{level + 1}.md")

    files = load_instructions(cwd, home)
    text = render_instructions(files)

    root, a = files[0], files[1]
    assert any("missing/file.md was not imported" in n and "does not exist" in n for n in root.notes)
    assert any("@docs was not imported" in n and "folder" in n for n in root.notes)
    assert not any("alice" in n for n in root.notes)  # a plain @mention, not a path
    assert any("import cycle (CLAUDE.md → a.md → CLAUDE.md)" in n for n in a.notes)
    loaded_levels = [f.path.name for f in files if f.path.name.startswith("l")]
    assert loaded_levels == [f"l{n}.md" for n in range(1, MAX_IMPORT_DEPTH)]
    assert f"nest at most {MAX_IMPORT_DEPTH} levels deep" in text
    assert "[agentcli: @missing/file.md was not imported" in text


def test_same_file_twice_is_included_once(tmp_path: Path, home: Path) -> None:
    cwd = tmp_path / "p"
    write(cwd / "CLAUDE.md", "see @AGENTS.md")
    write(cwd / "AGENTS.md", "AGENTS RULES")
    write(cwd / "CLAUDE.local.md", "also @AGENTS.md")

    files = load_instructions(cwd, home)

    assert [f.path.name for f in files] == ["CLAUDE.md", "AGENTS.md", "CLAUDE.local.md"]
    assert render_instructions(files).count("AGENTS RULES") == 1
    assert "already included above" in files[2].notes[0]


def test_symlinked_agents_md_is_not_repeated(tmp_path: Path, home: Path) -> None:
    cwd = tmp_path / "p"
    write(cwd / "CLAUDE.md", "ONE")
    (cwd / "AGENTS.md").symlink_to(cwd / "CLAUDE.md")
    assert [f.text for f in load_instructions(cwd, home)] == ["ONE"]


def test_no_files_no_reminder(tmp_path: Path, home: Path) -> None:
    assert render_instructions(load_instructions(tmp_path, home)) == ""


def test_mentions_skip_emails_and_strip_punctuation() -> None:
    text = "a@b.c (@x.md) [@y/z], @w.md.\n~~~\n@no.md\n~~~\n`@no2.md` @last"
    assert list(import_mentions(text)) == ["x.md", "y/z", "w.md", "last"]
