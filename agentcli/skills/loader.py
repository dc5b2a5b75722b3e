"""Finding skills: `.commands/**/*.md`, `.claude/commands/**/*.md`, `$AGENTCLI_HOME/commands/**/*.md`.

`git/commit.md` is the skill `git:commit`. Project folders are looked for from the working
directory up to the top of its git repository, the nearest first. Project skills shadow
user skills of the same name; `.commands/` shadows `.claude/commands/`. A file that cannot be parsed does not stop
the others from loading: it is kept as an error, reported when someone runs it.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.regular_file import read_regular_file
from agentcli.settings import agentcli_home
from agentcli.skills.frontmatter import SkillFileError, split_frontmatter, split_rules

MAX_SKILL_BYTES = 256 * 1024


@dataclass(frozen=True)
class Skill:
    name: str
    """Without the leading slash, e.g. `git:commit`."""
    path: Path
    source: str
    """`project`, `project (.claude)` or `user`."""
    body: str
    description: str
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()
    """Permission rules added for the duration of this skill's turn."""
    model: str | None = None
    disable_model_invocation: bool = False
    digest: str = ""
    """SHA-256 of the bytes this skill was parsed from (see skills/trust.py)."""


@dataclass
class SkillCatalog:
    skills: dict[str, Skill] = field(default_factory=dict)
    shadowed: list[tuple[Skill, Skill]] = field(default_factory=list)
    """(hidden skill, the skill that hides it), for /help."""
    errors: dict[str, SkillFileError] = field(default_factory=dict)
    """Skill name → why its file cannot be used."""

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    def names(self) -> list[str]:
        return sorted({*self.skills, *self.errors})

    def model_invocable(self) -> list[Skill]:
        """The skills offered to the model (sorted by name)."""
        return [s for _, s in sorted(self.skills.items()) if not s.disable_model_invocation]

    def require(self, name: str) -> Skill:
        """The skill called `name`, or a SkillFileError (UnknownCommand when there is no such skill)."""
        if name in self.errors:
            raise self.errors[name]
        skill = self.skills.get(name)
        if skill is None:
            raise UnknownCommand(name, self.names())
        return skill


class UnknownCommand(SkillFileError):
    """`/name` is not a skill; the message suggests close names or lists the skills."""

    def __init__(self, name: str, skills: list[str]) -> None:
        super().__init__(unknown_message(name, skills))
        self.name = name


def unknown_message(name: str, skills: list[str], builtins: Sequence[str] = ()) -> str:
    """`Unknown command /modle. Did you mean /model?`, or every command there is.

    `builtins` are the front end's own commands (the REPL's /help, /model, …), suggested and
    listed with the skills."""
    known = list(dict.fromkeys([*builtins, *skills]))
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    close += [k for k in known if k.startswith(name) and k not in close][: 3 - len(close)]
    message = f"Unknown command /{name}."
    if close:
        return message + " Did you mean " + " or ".join(f"/{c}" for c in close) + "?"
    listed = ", ".join(f"/{k}" for k in skills)
    if builtins:
        message += " Built-in commands: " + ", ".join(f"/{b}" for b in builtins) + "."
        return message + (f" Skills: {listed}." if skills else f" {NO_SKILLS}")
    return message + (f" Available: {listed}." if skills else f" {NO_SKILLS}")


NO_SKILLS = "No skills are defined (put Markdown files in .commands/)."


def skill_folders(cwd: Path, home: Path | None = None) -> list[tuple[Path, str]]:
    """Where skills live, highest precedence first: from `cwd` up to the repository's top, then the user's."""
    home = home or agentcli_home()
    folders: list[tuple[Path, str]] = []
    for root in project_roots(cwd):
        folders.append((root / ".commands", "project"))
        folders.append((root / ".claude" / "commands", "project (.claude)"))
    folders.append((home / "commands", "user"))
    return folders


def project_roots(cwd: Path) -> list[Path]:
    """`cwd` and its parents up to the git work tree's top; just `cwd` outside a repository."""
    chain = [cwd, *cwd.parents]
    for index, folder in enumerate(chain):
        if (folder / ".git").exists():
            return chain[: index + 1]
    return [cwd]


def load_skills(cwd: Path, home: Path | None = None) -> SkillCatalog:
    catalog = SkillCatalog()
    for folder, source in skill_folders(cwd, home):
        for path in _markdown_files(folder):
            name = ":".join(path.relative_to(folder).with_suffix("").parts)
            if name in catalog.skills or name in catalog.errors:
                winner = catalog.skills.get(name)
                if winner is not None:
                    with contextlib.suppress(SkillFileError):  # a broken file that is hidden anyway
                        catalog.shadowed.append((read_skill(path, name, source), winner))
                continue
            try:
                catalog.skills[name] = read_skill(path, name, source)
            except SkillFileError as error:
                catalog.errors[name] = error
    return catalog


def read_skill(path: Path, name: str, source: str) -> Skill:
    try:
        data = read_regular_file(path, MAX_SKILL_BYTES)  # a FIFO is refused, not waited on
    except OSError as error:
        raise SkillFileError(f"Cannot read skill file {path}: {error.strerror}.") from None
    fields, body = split_frontmatter(data.decode("utf-8", errors="replace"), str(path))
    description = _text_field(fields, "description", path) or _first_line(body)
    model = _text_field(fields, "model", path) or None
    disabled = fields.get("disable-model-invocation", False)
    if not isinstance(disabled, bool):
        raise SkillFileError(f"Malformed frontmatter in {path}: disable-model-invocation must be true or false.")
    return Skill(
        name=name,
        path=path,
        source=source,
        body=body,
        description=description,
        argument_hint=_text_field(fields, "argument-hint", path),
        allowed_tools=tuple(split_rules(fields.get("allowed-tools"), str(path))),
        model=model,
        disable_model_invocation=disabled,
        digest=hashlib.sha256(data).hexdigest(),
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


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text
    return ""


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
