"""Running a skill for the user (/name) or for the model (the Skill tool), and what each may use.

- `allowed-tools`: for the skill's `!` commands and the rest of the user turn. When the model
  runs it, only if the file is trusted (skills/trust.py).
- `@path` written in the skill's text, outside the project: attached only if approved, like a
  CLAUDE.md import (context/outside.py), whoever runs it; within the skill's own folder
  (a user skill's supporting files), attached.
- A skill folder's files may be Read for the rest of the turn (`folder_read_rule`), whoever
  runs it: the model is told the folder's path to read them (deny rules still win).
- `@$1` filled in from the arguments: when the user typed them, attached (their own
  request); when the model supplied them, a Read by the model, checked by the gate.

Either way a skill's rules last until the user turn ends (`turn_rules.end()`); its instructions
(the expanded text, unless it runs as a sub-agent) stay in force for the conversation, and are
noted in `in_force` for a compaction to carry over.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from agentcli.context.outside import OutsideFile, OutsideFiles, real_path
from agentcli.contracts import PermissionGate, Tool, ToolContext
from agentcli.skills.catalog import Skill
from agentcli.skills.expand import (
    CommandRunner,
    MentionCheck,
    approved_only,
    expand_skill,
    fixed_mentions,
    mention_path,
)
from agentcli.skills.frontmatter import SkillFileError
from agentcli.skills.rules import TurnRules, folder_read_rule
from agentcli.skills.shell import GatedShell
from agentcli.skills.trust import SkillTrust

Notify = Callable[[str], None]


class SkillsInForce:
    """The instructions of the skills run in a conversation (each skill's latest), most recent last. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._texts: dict[str, str] = {}

    def note(self, skill: Skill, text: str) -> None:
        if skill.forked:  # a sub-agent ran it: its instructions were never the conversation's
            return
        with self._lock:
            self._texts.pop(skill.name, None)
            self._texts[skill.name] = text

    def latest_first(self) -> list[tuple[str, str]]:
        """(name, instructions) of each skill run, the most recent first."""
        with self._lock:
            return list(reversed(self._texts.items()))


class SkillInvoker:
    def __init__(
        self,
        gate: PermissionGate,
        bash: Tool | None,
        read: Tool,
        trust: SkillTrust,
        outside: OutsideFiles,
        on_notice: Notify,
    ) -> None:
        self.gate = gate
        self.read = read
        """The tool a model-supplied `@path` is checked as."""
        self.shell = GatedShell(gate, bash)
        self.turn_rules = TurnRules(gate)
        """Rules of skills run in the current user turn; the front end ends them with the turn."""
        self.trust = trust
        self.outside = outside
        self.on_notice = on_notice
        self.in_force = SkillsInForce()
        """The skills run through this invoker, for a compaction to carry."""

    def for_user(self, skill: Skill, args: str, ctx: ToolContext) -> str:
        """The text of /name typed by the user (raises SkillFileError). Its rules are added by
        the caller for the turn it starts; this content is trusted from now on."""
        text = self._expand(skill, args, ctx, self.shell.runner(skill, ctx), by_model=False)
        self.trust.trust(skill)
        self.in_force.note(skill, text)
        return text

    def for_model(self, skill: Skill, args: str, ctx: ToolContext) -> str:
        """The text for a Skill tool call (raises SkillFileError); adds its rules to the turn if it is trusted."""
        granted = self.trust.grants(skill)
        withheld = None if granted or not skill.allowed_tools else self.trust.not_in_force(skill, ctx.cwd)
        if withheld:
            self.on_notice(withheld)
        text = self._expand(skill, args, ctx, self.shell.runner(skill, ctx, withheld), by_model=True)
        self.turn_rules.add(folder_read_rule(skill), f"/{skill.name}")
        if granted:
            self.turn_rules.add(skill.allowed_tools, f"/{skill.name}")
        self.in_force.note(skill, text)
        return f"{withheld}\n\n{text}" if withheld else text

    def _expand(self, skill: Skill, args: str, ctx: ToolContext, run: CommandRunner, by_model: bool) -> str:
        paths = [(mention, mention_path(mention, ctx.cwd)) for mention in fixed_mentions(skill)]
        outside = [(m, p) for m, p in paths if p.exists() and not _in_folder(skill, p)]
        self.outside.settle([OutsideFile(real_path(p), mention, skill.path) for mention, p in outside])
        return expand_skill(skill, args, ctx.cwd, run, self._mention_check(skill, ctx, by_model))

    def _mention_check(self, skill: Skill, ctx: ToolContext, by_model: bool) -> MentionCheck:
        written_in_skill = approved_only(self.outside)

        def check(mention: str, path: Path, from_arguments: bool) -> str | None:
            if not from_arguments:
                return None if _in_folder(skill, path) else written_in_skill(mention, path, from_arguments)
            if not by_model:
                return None
            decision = self.gate.check(self.read, {"file_path": str(path)}, ctx)
            if decision.allowed:
                return None
            raise SkillFileError(f"/{skill.name}: @{mention} was not attached. {decision.message}")

        return check


def _in_folder(skill: Skill, path: Path) -> bool:
    """Whether `path`, symlinks resolved, is one of a skill folder's own files."""
    if skill.folder is None:
        return False
    folder = real_path(skill.folder)
    return folder in real_path(path).parents
