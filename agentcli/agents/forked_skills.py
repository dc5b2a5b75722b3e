"""Running a `context: fork` skill: its expanded text is the task of a sub-agent of its `agent:` type.

As Claude Code documents it: the sub-agent does not see the conversation, only the skill's
text; its final message is the result (of the Skill call, or, when the user ran `/name`, what
the main agent is told). `agent:` names any type a Task call could start (general-purpose when
unset); the skill's `model:` replaces the type's. The sub-agent shares the session's gate, so
the skill's `allowed-tools`, when in force for the turn, hold for its calls too.
"""

from __future__ import annotations

from dataclasses import replace

from agentcli.agents.subagent import SubagentRunner
from agentcli.agents.task import AgentTypes
from agentcli.contracts import ToolContext, ToolResult
from agentcli.skills.catalog import Skill

DEFAULT_AGENT = "general-purpose"


class ForkedSkills:
    """The sub-agents of `context: fork` skills, for one conversation (`skills.tool.RunsForkedSkills`)."""

    def __init__(self, types: AgentTypes, runner: SubagentRunner) -> None:
        self.types = types
        self.runner = runner

    def run(self, skill: Skill, prompt: str, ctx: ToolContext) -> ToolResult:
        catalog = self.types.catalog()
        name = skill.agent or DEFAULT_AGENT
        agent_type = catalog.get(name)
        if agent_type is None:
            message = (
                f"/{skill.name} runs as a sub-agent of type {name!r} (`agent:` in {skill.path}), and there is "
                f"no such type. The types are: {', '.join(catalog.names())}."
            )
            return ToolResult(message, is_error=True, summary=f"/{skill.name}: no agent type {name!r}")
        if skill.model:
            agent_type = replace(agent_type, model=skill.model)
        return self.runner.run(agent_type, f"/{skill.name}", prompt, ctx)
