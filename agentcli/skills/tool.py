"""The Skill tool: the model runs a skill or command, as the user would with `/name args`.

The skills are listed in a <system-reminder> (skills/listing.py): names and descriptions only.
A call returns the skill's full instructions, expanded with its arguments, headed by its
folder's path for a skill folder, so the model can Read the supporting files it needs and run
its scripts (each a Bash call judged by the gate). A `context: fork` skill runs as a sub-agent
instead (agents/forked_skills.py), and the call returns that sub-agent's report.

Each agent of a conversation has its own Skill tool (`SkillTools.tool`), judged by its own
gate: a skill a sub-agent runs grants its allowed-tools to that sub-agent's calls only
(`permissions.gate.AgentGate`), for as long as it runs. Which skill files may grant at all
(`skills.trust`) and which outside files were approved are the conversation's, shared. Only
the main agent's tool runs forked skills: sub-agents cannot start sub-agents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from agentcli.access import NOTHING, Access
from agentcli.context.outside import OutsideFiles
from agentcli.contracts import JSON, PermissionGate, Tool, ToolContext, ToolResult
from agentcli.skills.catalog import Skill, SkillCatalog, unknown_message
from agentcli.skills.frontmatter import SkillFileError
from agentcli.skills.invoke import Notify, SkillInvoker
from agentcli.skills.listing import render_skill_list
from agentcli.skills.trust import SkillTrust
from agentcli.tools.base import BuiltinTool, ToolError


class RunsForkedSkills(Protocol):
    def run(self, skill: Skill, prompt: str, ctx: ToolContext, /) -> ToolResult:
        """Run `skill` (`context: fork`), its text expanded to `prompt`, as a sub-agent; its report."""
        ...


class SkillTool(BuiltinTool):
    name = "Skill"
    concurrency = "exclusive"  # it may add the skill's rules to the turn
    description = (
        "Run one of the skills or commands listed in the skills <system-reminder> (as /name). Use it when "
        'the user asks in plain words for something a listed skill does ("commit this" → skill "commit"), '
        "or when your task matches a skill's description. The list shows only names and descriptions: the "
        "call returns the skill's full instructions, expanded with args; carry them out. A skill with "
        "supporting files comes with its folder's path: Read the files its instructions point to, and run "
        "its scripts with Bash. Some skills run as a sub-agent and return its report. Only listed skills "
        "can be run; not for built-in commands like /help."
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

    def __init__(
        self, load: Callable[[], SkillCatalog], invoker: SkillInvoker, forks: RunsForkedSkills | None = None
    ) -> None:
        self.load = load
        self.invoker = invoker
        self.forks = forks

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        """The tool itself only reads skill files (agentcli's own configuration); each `!` command
        inside a skill is judged as a Bash call of its own, a model-supplied `@path` as a Read."""
        return NOTHING

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        name = str(tool_input["skill"]).strip().removeprefix("/")
        catalog = self.load()
        if name in catalog.errors:
            raise ToolError(str(catalog.errors[name]))
        skill = catalog.get(name)
        if skill is None:
            offered = [catalog.shown_name(s) for s in catalog.model_invocable()]
            raise ToolError(unknown_message(name, offered))
        if skill.disable_model_invocation:
            raise ToolError(f"/{name} can only be run by the user (it sets disable-model-invocation).")
        if skill.forked and self.forks is None:
            raise ToolError(f"/{name} runs as a sub-agent (context: fork), and sub-agents cannot be started here.")
        try:
            text = self.invoker.for_model(skill, str(tool_input.get("args") or ""), ctx)
        except SkillFileError as error:
            raise ToolError(str(error)) from None
        if skill.forked and self.forks is not None:
            return self.forks.run(skill, text, ctx)
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

    def tool(self, gate: PermissionGate, on_notice: Notify, forks: RunsForkedSkills | None = None) -> SkillTool:
        """A Skill tool whose skills' `!` commands and allowed-tools go through `gate`; `forks`
        runs its `context: fork` skills (the main agent's only)."""
        invoker = SkillInvoker(gate, self.bash, self.read, self.trust, self.outside, on_notice)
        return SkillTool(self.load, invoker, forks)

    def listing(self) -> str:
        """The body of the skills <system-reminder> (see `render_skill_list`); "" when there are none."""
        return render_skill_list(self.load())
