"""Running a skill's `` !`cmd` `` lines: as Bash tool calls, each checked by the permission gate
first and announced to the workspace (`contracts.before_running`) as any allowed call is; the
Bash tool runs it in the workspace."""

from __future__ import annotations

from agentcli.contracts import PermissionGate, Tool, ToolContext, before_running
from agentcli.skills.catalog import Skill
from agentcli.skills.expand import CommandRunner
from agentcli.skills.frontmatter import SkillFileError
from agentcli.skills.rules import allowed_for
from agentcli.truncate import cap_middle
from agentcli.workspace.contract import WorkspaceError

MAX_COMMAND_OUTPUT = 20_000
_OK_STATUS = "Exit code 0"


class GatedShell:
    def __init__(self, gate: PermissionGate, bash: Tool | None) -> None:
        self.gate = gate
        self.bash = bash

    def runner(self, skill: Skill, ctx: ToolContext, withheld: str | None = None) -> CommandRunner:
        """Runs `!` commands for `skill`, with its allowed-tools rules added for the check, unless
        they are `withheld` (the reason, see skills/trust.py): then each command is an ordinary Bash call."""
        rules = () if withheld else skill.allowed_tools

        def run(command: str) -> str:
            if self.bash is None:
                raise SkillFileError(
                    f"/{skill.name} needs the Bash tool for !`{command}`, and Bash is not available in this session."
                )
            tool_input = {"command": command}
            with allowed_for(self.gate, rules, f"/{skill.name}"):
                decision = self.gate.check(self.bash, tool_input, ctx)
            if not decision.allowed:
                how = withheld or (
                    f"To allow it for this skill, add e.g. `allowed-tools: Bash({command.split()[0]}:*)` "
                    f"to the frontmatter of {skill.path}."
                )
                raise SkillFileError(
                    f"/{skill.name} was not run: its command !`{command}` is not allowed. {decision.message}\n{how}"
                )
            try:
                before_running(self.bash, decision, ctx)
            except WorkspaceError as refused:
                raise SkillFileError(
                    f"/{skill.name} was not run: its command !`{command}` was refused: {refused}"
                ) from None
            result = self.bash.run(tool_input, ctx)
            output = result.content.rstrip("\n")
            if not result.is_error and output.endswith(_OK_STATUS):
                output = output[: -len(_OK_STATUS)].rstrip("\n")
            return cap_middle(output, MAX_COMMAND_OUTPUT)

        return run
