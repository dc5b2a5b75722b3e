"""CLAUDE.md / CLAUDE.local.md / AGENTS.md discovery and @imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.context.instructions import (
    MAX_IMPORT_DEPTH,
    import_mentions,
    load_instructions,
    render_instructions,
    withheld_imports,
)
from agentcli.context.outside import OutsideFile, OutsideFiles
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
    approved = OutsideFiles(cwd, allowed=[tmp_path / "userhome" / "prefs.md"])  # outside the project

    files = load_instructions(cwd, home, approved)

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


def test_imports_outside_the_project_are_left_out_unless_approved(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    cwd = project / "pkg"
    secret = write(tmp_path / "elsewhere" / "secret.md", "SECRET")
    write(tmp_path / "elsewhere" / "linked.md", "LINKED")
    (project / "docs").mkdir()
    (project / "docs" / "link.md").symlink_to(tmp_path / "elsewhere" / "linked.md")  # inside, pointing outside
    write(project / "docs" / "ok.md", "INSIDE THE REPOSITORY")
    write(cwd / "CLAUDE.md", "@../docs/ok.md @../../elsewhere/secret.md @../docs/link.md")

    files = load_instructions(cwd, home)

    text = render_instructions(files)
    assert "INSIDE THE REPOSITORY" in text  # above the working directory, but in the git work tree
    assert "SECRET" not in text and "LINKED" not in text
    real_link = (tmp_path / "elsewhere" / "linked.md").resolve()
    assert withheld_imports(files) == [
        OutsideFile(secret.resolve(), "../../elsewhere/secret.md", cwd / "CLAUDE.md"),
        OutsideFile(real_link, "../docs/link.md", cwd / "CLAUDE.md"),
    ]
    assert (
        f"[agentcli: @../../elsewhere/secret.md was not imported: it is outside the project and not approved "
        f'({secret.resolve()}; the user can allow it under "allowedExternalImports" in .agentcli/settings.local.json).]'
    ) in text

    approved = load_instructions(cwd, home, OutsideFiles(project, allowed=[secret]))
    assert "SECRET" in render_instructions(approved) and "LINKED" not in render_instructions(approved)
    assert [f.path for f in withheld_imports(approved)] == [real_link]


def test_the_users_own_file_imports_freely_and_parent_folder_files_are_judged(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "top" / "p"
    project.mkdir(parents=True)
    write(home / "CLAUDE.md", "Mine: @notes/a.md")
    write(home / "notes" / "a.md", "NOTE A, and @b.md")
    write(home / "notes" / "b.md", "NOTE B")
    write(tmp_path / "top" / "CLAUDE.md", "PARENT FOLDER RULES, see @extra.md")
    write(tmp_path / "top" / "extra.md", "PARENT EXTRA")

    files = load_instructions(project, home)

    text = render_instructions(files)
    assert "NOTE A" in text and "NOTE B" in text
    assert "PARENT FOLDER RULES" in text  # discovered instruction files load as they always did
    assert "PARENT EXTRA" not in text
    assert [f.mention for f in withheld_imports(files)] == ["extra.md"]
