"""Skills and commands as one namespace: which file answers to `/name`.

Entries are added in precedence order (skills/loader.py): the first file to claim a name has
it, and a later one of the same name is `shadowed` (listed in /help as hidden). A command in a
subfolder, `tools/x.md`, is `tools:x` and also answers to its short name `/x` (as in Claude
Code), unless a skill or command of that full name exists or an earlier command claimed the
short name first: those `short_names_lost` are shown in /help and still answer to `/tools:x`.
A plugin's `p:x` likewise answers to `/x`, once every short name of the project's and the user's
own files is given out, in the order the plugins are loaded, unless `x` is a built-in command
(`BUILTIN_NAMES`): a plugin never takes `/help`.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.skills.frontmatter import SkillFileError

FORK = "fork"
BUILTIN_NAMES = frozenset(
    {
        "help", "clear", "resume", "rewind", "compact", "cost", "stats", "todos", "agents", "mcp", "sandbox",
        "hooks", "plugin", "model", "permissions", "init", "memory", "exit", "quit",
    }
)  # fmt: skip
"""The REPL's built-in commands (repl/builtins.py checks it has these): a plugin's short name is
never one of them, so `/help` stays the REPL's in every front end."""
BUILT_IN_HOLDER = ""
"""In `short_names_lost`: the short name is a built-in command's."""


@dataclass(frozen=True)
class Skill:
    """A skill folder (`NAME/SKILL.md`) or a command file (`x.md`), ready to run as `/name`."""

    name: str
    """Without the leading slash: a skill's folder name, or a command's path (`git:commit`)."""
    path: Path
    """The file it was read from (SKILL.md for a skill folder)."""
    source: str
    """Where it lives, for /help: `project`, `project (.claude)`, `user`, `user (~/.claude)`."""
    body: str
    description: str
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()
    """Permission rules added for the duration of this skill's turn."""
    model: str | None = None
    disable_model_invocation: bool = False
    """Only the user may run it; the model is not told about it."""
    user_invocable: bool = True
    """False: only the model may run it (`user-invocable: false`); it is left out of /help's list."""
    context: str | None = None
    """`fork`: it runs as a sub-agent of type `agent` (general-purpose when unset)."""
    agent: str | None = None
    folder: Path | None = None
    """A skill folder's path (its supporting files are there); None for a command file."""
    warning: str | None = None
    """How its frontmatter was read, when it was not strict YAML (reported once)."""
    digest: str = ""
    """SHA-256 of the bytes this skill was parsed from (see skills/trust.py)."""
    plugin: str | None = None
    """The plugin it comes from (its name is then `plugin:name`); None for the user's and the project's own."""

    @property
    def kind(self) -> str:
        return "skill" if self.folder is not None else "command"

    @property
    def short_name(self) -> str:
        """A command's file name without `.md` (`tools/x.md` → `x`); a skill's name (without its plugin's)."""
        if self.folder is None:
            return self.path.stem
        return self.name.removeprefix(f"{self.plugin}:") if self.plugin else self.name

    @property
    def forked(self) -> bool:
        return self.context == FORK


@dataclass
class SkillCatalog:
    skills: dict[str, Skill] = field(default_factory=dict)
    """By full name."""
    short_names: dict[str, str] = field(default_factory=dict)
    """`x` → `tools:x`: the short names of commands in subfolders."""
    short_names_lost: list[tuple[Skill, str]] = field(default_factory=list)
    """(command, the name its short name is taken by), for /help."""
    shadowed: list[tuple[Skill, Skill]] = field(default_factory=list)
    """(hidden skill, the skill that hides it), for /help."""
    errors: dict[str, SkillFileError] = field(default_factory=dict)
    """Skill name → why its file cannot be used."""

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name) or self.skills.get(self.short_names.get(name, ""))

    def names(self) -> list[str]:
        """Every name that runs something (or says why it cannot), short names included."""
        return sorted({*self.skills, *self.short_names, *self.errors})

    def full_names(self) -> list[str]:
        """One name per file, as an error message lists them."""
        return sorted({*self.skills, *self.errors})

    def unknown(self, name: str, builtins: Sequence[str] = ()) -> str:
        """What to say about `/name` when nothing answers to it."""
        return unknown_message(name, self.full_names(), builtins, also=list(self.short_names))

    def shown_name(self, skill: Skill) -> str:
        """The name to show and to list for the model: the short name when it answers to it."""
        short = skill.short_name
        return short if self.short_names.get(short) == skill.name else skill.name

    def model_invocable(self) -> list[Skill]:
        """The skills offered to the model, by name."""
        return sorted(
            (s for s in self.skills.values() if not s.disable_model_invocation), key=lambda s: self.shown_name(s)
        )

    def user_invocable(self) -> list[Skill]:
        """The skills /help lists, by name."""
        return sorted((s for s in self.skills.values() if s.user_invocable), key=lambda s: self.shown_name(s))

    def warnings(self) -> list[str]:
        """How files not in strict YAML were read (every file's, hidden ones too)."""
        found = [s.warning for s in self.skills.values() if s.warning]
        return found + [hidden.warning for hidden, _ in self.shadowed if hidden.warning]

    def require(self, name: str) -> Skill:
        """The skill called `name`, or a SkillFileError (UnknownCommand when there is no such skill)."""
        if name in self.errors:
            raise self.errors[name]
        skill = self.get(name)
        if skill is None:
            raise UnknownCommand(name, self.unknown(name))
        return skill

    # ------------------------------------------------------------------ building

    def claims(self, name: str) -> Skill | None:
        """The skill that already has `name`, if one does (or None if a broken file has it)."""
        return self.skills.get(name)

    def taken(self, name: str) -> bool:
        return name in self.skills or name in self.errors

    def add_short_names(self) -> None:
        """Give each command in a subfolder, and each plugin's skill or command, its short name, in
        precedence order, where it is free: the project's and the user's before any plugin's."""
        for skill in sorted(self.skills.values(), key=lambda s: s.plugin is not None):
            short = skill.short_name
            if short == skill.name:
                continue
            holder = short if self.taken(short) else self.short_names.get(short)
            if holder is None and skill.plugin and short in BUILTIN_NAMES:
                holder = BUILT_IN_HOLDER
            if holder is None:
                self.short_names[short] = skill.name
            else:
                self.short_names_lost.append((skill, holder))


class UnknownCommand(SkillFileError):
    """`/name` is not a skill; the message suggests close names or lists the skills."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


NO_SKILLS = "No skills or commands are defined (put Markdown files in .claude/commands/ or .commands/)."


def unknown_message(name: str, skills: list[str], builtins: Sequence[str] = (), also: Sequence[str] = ()) -> str:
    """`Unknown command /modle. Did you mean /model?`, or every command there is.

    `builtins` are the front end's own commands (the REPL's /help, /model, …), suggested and
    listed with the skills; `also` are names only suggested (the short names of commands)."""
    known = list(dict.fromkeys([*builtins, *skills, *also]))
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
