"""Running a skill for the user (/name) or for the model (the Skill tool), and what each may use.

| | the user types /name | the model calls Skill |
|---|---|---|
| `allowed-tools` | for its `!` commands and the rest of the turn | the same, if the file is trusted (skills/trust.py) |

Either way a skill's rules last until the user turn ends (`turn_rules.end()`).
"""

from __future__ import annotations

from collections.abc import Callable

from agentcli.contracts import PermissionGate, Tool, ToolContext
from agentcli.skills.expand import expand_skill
from agentcli.skills.loader import Skill
from agentcli.skills.rules import TurnRules
from agentcli.skills.shell import GatedShell
from agentcli.skills.trust import SkillTrust

Notify = Callable[[str], None]


class SkillInvoker:
    def __init__(self, gate: PermissionGate, bash: Tool | None, trust: SkillTrust, on_notice: Notify) -> None:
        self.shell = GatedShell(gate, bash)
        self.turn_rules = TurnRules(gate)
        """Rules of skills run in the current user turn; the front end ends them with the turn."""
        self.trust = trust
        self.on_notice = on_notice

    def for_user(self, skill: Skill, args: str, ctx: ToolContext) -> str:
        """The text of /name typed by the user (raises SkillFileError). Its rules are added by
        the caller for the turn it starts; this content is trusted from now on."""
        text = expand_skill(skill, args, ctx.cwd, self.shell.runner(skill, ctx))
        self.trust.trust(skill)
        return text

    def for_model(self, skill: Skill, args: str, ctx: ToolContext) -> str:
        """The text for a Skill tool call (raises SkillFileError); adds its rules to the turn if it is trusted."""
        granted = self.trust.grants(skill)
        withheld = None if granted or not skill.allowed_tools else self.trust.not_in_force(skill, ctx.cwd)
        if withheld:
            self.on_notice(withheld)
        text = expand_skill(skill, args, ctx.cwd, self.shell.runner(skill, ctx, withheld))
        if granted:
            self.turn_rules.add(skill.allowed_tools, f"/{skill.name}")
        return f"{withheld}\n\n{text}" if withheld else text
