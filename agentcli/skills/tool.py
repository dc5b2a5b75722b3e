"""The Skill tool: lets the model run a skill when the user asks for it in plain words.

Each agent of a conversation has its own Skill tool (`SkillTools.tool`), judged by its own
gate: a skill a sub-agent runs grants its allowed-tools to that sub-agent's calls only
(`permissions.gate.AgentGate`), for as long as it runs. Which skill files may grant at all
(`skills.trust`) and which outside files were approved are the conversation's, shared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentcli.context.outside import OutsideFiles
from agentcli.contracts import JSON, PermissionGate, Tool, ToolContext, ToolResult
from agentcli.skills.frontmatter import SkillFileError
from agentcli.skills.invoke import Notify, SkillInvoker
from agentcli.skills.listing import render_skill_list
from agentcli.skills.loader import SkillCatalog, unknown_message
from agentcli.skills.trust import SkillTrust
from agentcli.tools.base import BuiltinTool, ToolError


class SkillTool(BuiltinTool):
    name = "Skill"
    # The tool itself only reads skill files; each `!` command inside a skill is checked
    # by the permission gate as a Bash call of its own.
    read_only = True
    concurrency_safe = False  # it may add the skill's rules to the turn
    description = (
        "Run one of the user's skills (slash commands listed in a <system-reminder> as /name). "
        "Use it when the user asks in plain words for something a listed skill does, e.g. "
        '"commit this" → skill "commit". Returns the skill\'s instructions, expanded with args; '
        "then carry them out. Only listed skills can be run; not for built-in commands like /help."
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": 'Skill name without the slash, e.g. "commit" or "git:push"'},
            "args": {"type": "string", "description": "Arguments, as the user would type them after /name"},
        },
        "required": ["skill"],
        "additionalProperties": False,
    }

    def __init__(self, load: Callable[[], SkillCatalog], invoker: SkillInvoker) -> None:
        self.load = load
        self.invoker = invoker

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        name = str(tool_input["skill"]).strip().removeprefix("/")
        catalog = self.load()
        offered = [s.name for s in catalog.model_invocable()]
        if name in catalog.errors:
            raise ToolError(str(catalog.errors[name]))
        skill = catalog.get(name)
        if skill is None:
            raise ToolError(unknown_message(name, offered))
        if skill.disable_model_invocation:
            raise ToolError(f"/{name} can only be run by the user (it sets disable-model-invocation).")
        try:
            text = self.invoker.for_model(skill, str(tool_input.get("args") or ""), ctx)
        except SkillFileError as error:
            raise ToolError(str(error)) from None
        return ToolResult(f"Skill /{name} ({skill.path}):\n\n{text}", summary=f"Loaded /{name}")


@dataclass(frozen=True)
class SkillTools:
    """What the Skill tools of one conversation share; `tool` makes one for an agent."""

    load: Callable[[], SkillCatalog]
    """The skills as they are on disk now."""
    bash: Tool | None
    """What a skill's `!` commands run with (each checked by the agent's gate as a Bash call)."""
    read: Tool
    """What a model-supplied `@path` is checked as."""
    trust: SkillTrust
    outside: OutsideFiles

    def tool(self, gate: PermissionGate, on_notice: Notify) -> SkillTool:
        """A Skill tool whose skills' `!` commands and allowed-tools go through `gate`."""
        return SkillTool(self.load, SkillInvoker(gate, self.bash, self.read, self.trust, self.outside, on_notice))

    def listing(self) -> str:
        """The body of the skills <system-reminder> (see `render_skill_list`); "" when there are none."""
        return render_skill_list(self.load())
