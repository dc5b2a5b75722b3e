"""Finding skills and commands, and reading their files.

- Skills: folders `NAME/SKILL.md` (with any supporting files beside it) in `.agentcli/skills/`
  and `.claude/skills/`, then `$AGENTCLI_HOME/skills/` and `~/.claude/skills/`. The folder's
  name is the skill's name.
- Commands: `*.md` files in `.commands/` and `.claude/commands/`, then `$AGENTCLI_HOME/commands/`
  and `~/.claude/commands/`; `git/commit.md` is `git:commit`, also `/commit` (skills/catalog.py).

- Plugins' (`plugins.manifest`): a plugin `p`'s skill `s` is `p:s`, its command `x.md` is `p:x`;
  each also answers to its short name (`/s`, `/x`) when nothing else has it (skills/catalog.py).

Project folders are looked for from the working directory up to the top of its git repository,
the nearest first. Precedence, first wins: every skill before every command (a skill beats a
command of the same name, as in Claude Code), the project before the user before the plugins
(in the order given), agentcli's own folder before Claude Code's. A file that cannot be parsed
does not stop the others from loading: it is kept as an error, reported when someone runs it.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from agentcli.plugins.manifest import ROOT_VARIABLE, Plugin
from agentcli.regular_file import read_regular_file
from agentcli.settings import agentcli_home, claude_home
from agentcli.skills.catalog import Skill, SkillCatalog
from agentcli.skills.frontmatter import SkillFileError, read_frontmatter, split_rules

MAX_SKILL_BYTES = 256 * 1024
SKILL_FILE = "SKILL.md"
INHERIT = "inherit"
"""`model: inherit`: the session's model, as if unset."""
CLAUDE_USER = "user (~/.claude)"


def project_roots(cwd: Path) -> list[Path]:
    """`cwd` and its parents up to the git work tree's top; just `cwd` outside a repository."""
    chain = [cwd, *cwd.parents]
    for index, folder in enumerate(chain):
        if (folder / ".git").exists():
            return chain[: index + 1]
    return [cwd]


def skill_folders(cwd: Path, home: Path | None = None, claude: Path | None = None) -> list[tuple[Path, str]]:
    """Folders holding `NAME/SKILL.md` skills, highest precedence first, with their source label."""
    folders = [
        item
        for root in project_roots(cwd)
        for item in ((root / ".agentcli" / "skills", "project"), (root / ".claude" / "skills", "project (.claude)"))
    ]
    return [
        *folders,
        ((home or agentcli_home()) / "skills", "user"),
        ((claude or claude_home()) / "skills", CLAUDE_USER),
    ]


def command_folders(cwd: Path, home: Path | None = None, claude: Path | None = None) -> list[tuple[Path, str]]:
    """Folders holding `*.md` commands, highest precedence first, with their source label."""
    folders = [
        item
        for root in project_roots(cwd)
        for item in ((root / ".commands", "project"), (root / ".claude" / "commands", "project (.claude)"))
    ]
    return [
        *folders,
        ((home or agentcli_home()) / "commands", "user"),
        ((claude or claude_home()) / "commands", CLAUDE_USER),
    ]


def load_skills(
    cwd: Path, home: Path | None = None, claude: Path | None = None, plugins: Sequence[Plugin] = ()
) -> SkillCatalog:
    """Every skill and command there is now (files are read each time, so edits show up)."""
    catalog = SkillCatalog()
    for folder, source in skill_folders(cwd, home, claude):
        for path in _skill_files(folder):
            _add(catalog, path.parent.name, path, source, skill_folder=True)
    for plugin in plugins:
        for name, path in plugin_skill_files(plugin):
            _add(catalog, name, path, plugin.label, True, plugin)
    for folder, source in command_folders(cwd, home, claude):
        for path in _markdown_files(folder):
            _add(catalog, ":".join(path.relative_to(folder).with_suffix("").parts), path, source, skill_folder=False)
    for plugin in plugins:
        for name, path in plugin_command_files(plugin):
            _add(catalog, name, path, plugin.label, False, plugin)
    catalog.add_short_names()
    return catalog


def plugin_skill_files(plugin: Plugin) -> list[tuple[str, Path]]:
    """(`plugin:skill`, its SKILL.md) for each skill folder the plugin brings."""
    found: list[tuple[str, Path]] = []
    for folder in plugin.skills:
        files = [folder / SKILL_FILE] if (folder / SKILL_FILE).is_file() else _skill_files(folder)
        found.extend((f"{plugin.name}:{path.parent.name}", path) for path in files)
    return found


def plugin_command_files(plugin: Plugin) -> list[tuple[str, Path]]:
    """(`plugin:command`, its file) for each command file the plugin brings (`plugin:sub:x` in a subfolder)."""
    found: list[tuple[str, Path]] = []
    for folder in plugin.commands:
        files = [(folder.parent, folder)] if folder.is_file() else [(folder, p) for p in _markdown_files(folder)]
        found.extend(
            (":".join((plugin.name, *path.relative_to(top).with_suffix("").parts)), path) for top, path in files
        )
    return found


def _add(
    catalog: SkillCatalog, name: str, path: Path, source: str, skill_folder: bool, plugin: Plugin | None = None
) -> None:
    if catalog.taken(name):
        winner = catalog.claims(name)
        if winner is not None:
            with contextlib.suppress(SkillFileError):  # a broken file that is hidden anyway
                hidden = read_skill(path, name, source, skill_folder=skill_folder, plugin=plugin)
                catalog.shadowed.append((hidden, winner))
        return
    try:
        catalog.skills[name] = read_skill(path, name, source, skill_folder=skill_folder, plugin=plugin)
    except SkillFileError as error:
        catalog.errors[name] = error


def read_skill(
    path: Path, name: str, source: str, *, skill_folder: bool = False, plugin: Plugin | None = None
) -> Skill:
    """The skill in `path` (a SKILL.md when `skill_folder`, else a command file); SkillFileError if
    unusable. A plugin's has `${CLAUDE_PLUGIN_ROOT}` replaced by the plugin's folder everywhere
    (its text, its `!` commands, its `allowed-tools` rules), as Claude Code does."""
    try:
        data = read_regular_file(path, MAX_SKILL_BYTES)  # a FIFO is refused, not waited on
    except OSError as error:
        raise SkillFileError(f"Cannot read skill file {path}: {error.strerror}.") from None
    text = data.decode("utf-8", errors="replace")
    if plugin is not None:
        text = text.replace(f"${{{ROOT_VARIABLE}}}", str(plugin.root))
    front = read_frontmatter(text, str(path))
    fields, body = front.fields, front.body
    description = _text_field(fields, "description", path) or _first_line(body)
    model = _text_field(fields, "model", path)
    context = _text_field(fields, "context", path)
    return Skill(
        name=name,
        path=path,
        source=source,
        body=body,
        description=description,
        argument_hint=_text_field(fields, "argument-hint", path),
        allowed_tools=tuple(split_rules(fields.get("allowed-tools"), str(path))),
        model=None if model in ("", INHERIT) else model,
        disable_model_invocation=_flag(fields, "disable-model-invocation", False, path),
        user_invocable=_flag(fields, "user-invocable", True, path),
        context=context or None,
        agent=_text_field(fields, "agent", path) or None,
        folder=path.parent if skill_folder else None,
        warning=front.warning,
        digest=hashlib.sha256(data).hexdigest(),
        plugin=plugin.name if plugin else None,
    )


def _text_field(fields: dict[str, object], key: str, path: Path) -> str:
    value = fields.get(key)
    if value is None:
        return ""
    if isinstance(value, list):  # `argument-hint: [file]` is YAML for a list
        return " ".join(f"[{item}]" for item in value)
    if not isinstance(value, (str, int, float)):
        raise SkillFileError(f"Malformed frontmatter in {path}: {key} must be text.")
    return " ".join(str(value).split())


def _flag(fields: dict[str, object], key: str, default: bool, path: Path) -> bool:
    value = fields.get(key, default)
    if isinstance(value, str) and value.lower() in ("true", "false"):  # quoted, or read leniently
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise SkillFileError(f"Malformed frontmatter in {path}: {key} must be true or false.")
    return value


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text
    return ""


def _skill_files(folder: Path) -> Iterator[Path]:
    """`folder/NAME/SKILL.md` for each skill folder (hidden folders left out), by name."""
    with contextlib.suppress(OSError):  # no such folder (the usual case), or unreadable
        for entry in sorted(folder.iterdir()):
            skill_file = entry / SKILL_FILE
            if not entry.name.startswith(".") and entry.is_dir() and skill_file.exists():
                yield skill_file


def _markdown_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(  # not only regular files: a FIFO or device shows up as an unusable skill, saying why
        path
        for path in folder.rglob("*.md")
        if path.exists()
        and not path.is_dir()
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )
