"""The user guide holds together: every relative link and `#anchor` in README.md and docs/
resolves (by GitHub's rules for heading anchors), and the settings reference lists exactly the
settings keys the code declares, with their type, default and files."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from urllib.parse import unquote

import pytest

from agentcli.catalog import ModelInfo
from agentcli.setting_keys import SETTING_KEYS, setting
from agentcli.settings import Settings

REPO = Path(__file__).resolve().parent.parent
PAGES = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks (a heading or link inside a fence is not one)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: its text without markup, lower-cased, every character
    but letters, digits, spaces, `-` and `_` dropped, spaces made `-`."""
    visible = CODE_SPAN.sub(lambda m: m.group(2), heading)
    visible = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", visible)
    visible = re.sub(r"(\*\*|__|\*)", "", visible)
    kept = "".join(c for c in visible.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of `page`, repeated ones numbered `-1`, `-2` as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose_lines(page.read_text()):
        if match := HEADING.match(line):
            anchor = github_anchor(match.group(2))
            count = seen.get(anchor, 0)
            found.add(anchor if count == 0 else f"{anchor}-{count}")
            seen[anchor] = count + 1
    return found


def links(page: Path) -> list[str]:
    """The link targets of `page`'s prose (code spans and fenced blocks hold no links)."""
    return [m.group(1) for line in prose_lines(page.read_text()) for m in LINK.finditer(CODE_SPAN.sub("", line))]


def is_external(target: str) -> bool:
    return re.match(r"^[a-z][a-z0-9+.-]*:", target) is not None


def test_github_anchor_follows_githubs_rules() -> None:
    assert github_anchor("`agentcli stats`: how your sessions went") == "agentcli-stats-how-your-sessions-went"
    assert github_anchor("Managing servers: `agentcli mcp`, `/mcp`") == "managing-servers-agentcli-mcp-mcp"
    assert github_anchor("The question (interactive)") == "the-question-interactive"
    assert github_anchor("Read, Write and `Edit_file`") == "read-write-and-edit_file"


def test_the_guide_has_its_pages() -> None:
    names = {page.relative_to(REPO).as_posix() for page in PAGES}

    assert {"docs/README.md", "docs/settings.md", "docs/dev/architecture.md", "docs/dev/protocol.md"} <= names
    assert len(names) > 20


def broken_links(page: Path) -> list[str]:
    """The relative links of `page` whose file, or whose heading anchor, does not exist."""
    broken = []
    for target in links(page):
        if is_external(target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / unquote(path)).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading with that anchor in {linked.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO).as_posix())
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_a_broken_link_or_anchor_is_caught(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# Exists\n\n## `run` options\n\n## Exists\n")
    page = tmp_path / "a.md"
    page.write_text(
        "[ok](b.md#run-options) [again](b.md#exists-1) [here](#top) [web](https://example.com/x.md)\n"
        "# Top\n[gone](c.md) [typo](b.md#run-option) `[code](d.md)`\n```\n[fenced](e.md)\n```\n"
    )

    assert broken_links(page) == [
        "c.md: no such file",
        "b.md#run-option: no heading with that anchor in b.md",
    ]


def reference_rows() -> dict[str, list[str]]:
    """The settings reference's table of every key: the key, then its other cells."""
    text = (REPO / "docs" / "settings.md").read_text()
    table = text.split("## Every key\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if cells and (key := re.fullmatch(r"`([\w.]+)`", cells[0])):
            rows[key.group(1)] = cells[1:]
    return rows


def test_the_settings_reference_lists_exactly_the_declared_keys() -> None:
    rows = reference_rows()

    assert list(rows) == [key.name for key in SETTING_KEYS]
    for key in SETTING_KEYS:
        type_, default, files = rows[key.name][:3]
        assert (type_, default, files) == (key.type, key.default, ", ".join(key.scopes)), key.name


def test_no_key_agentcli_uses_is_listed_among_those_it_does_not() -> None:
    text = (REPO / "docs" / "settings.md").read_text()
    section = text.split("### Claude Code's keys agentcli does not use\n", 1)[1].split("\n#", 1)[0]
    top, _, under_permissions = section.split(". agentcli's own equivalents", 1)[0].partition(
        "and under `permissions`:"
    )
    used = {key.name.partition(".")[0] for key in SETTING_KEYS}
    used_in_permissions = {key.name.partition(".")[2] for key in SETTING_KEYS if key.name.startswith("permissions.")}

    listed = set(re.findall(r"`(\w+)`", top))
    listed_in_permissions = set(re.findall(r"`(\w+)`", under_permissions))
    assert len(listed) > 10 and listed_in_permissions  # the lists were found
    assert sorted(listed & used) == []
    assert sorted(listed_in_permissions & used_in_permissions) == []


def names_read_by_the_code() -> set[str]:
    """Every key the code names with `setting("...")` or `keys_inside("...")`."""
    call = re.compile(r"\b(?:setting|keys_inside)\(\s*\"([\w.]+)\"\s*\)")
    return {name for module in (REPO / "agentcli").rglob("*.py") for name in call.findall(module.read_text())}


def test_every_declared_key_is_read_by_the_code() -> None:
    named = names_read_by_the_code()

    unread = [key.name for key in SETTING_KEYS if key.name.partition(".")[0] not in named]
    assert unread == []


def test_the_code_reads_only_declared_keys() -> None:
    with pytest.raises(LookupError, match="not a declared settings key"):
        setting("noSuchKey")
    with pytest.raises(LookupError, match="not a declared settings key"):
        Settings().get("noSuchKey")
    assert Settings(values={"model": "m"}).get("model") == "m"


def test_the_model_fields_documented_are_the_model_tables() -> None:
    text = (REPO / "docs" / "providers.md").read_text()
    table = text.split("## The model table\n", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `(\w+)` \|", table, re.MULTILINE)

    assert documented == [field.name for field in fields(ModelInfo)]
