"""The Task tool: the main agent starts a sub-agent, and sees only its final answer.

`Task(description, prompt, subagent_type)` runs one sub-agent (`agents.subagent`) of one of
the types of `agents.definitions`. The tool's description lists those types; it is built again
only when a definition file changes (`AgentTypes`), so the tool manifest stays byte-identical
from request to request and the prompt cache keeps hitting.

Neighbouring Task calls run concurrently (`concurrency = "independent"`): each is a
conversation of its own. The call itself touches nothing (`access.NOTHING`), so the gate lets
it through in every mode; every call its sub-agent makes is judged by the same gate. Only the
session's own agent is offered Task: sub-agents are built without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from agentcli.access import NOTHING, Access
from agentcli.agents.definitions import AgentCatalog, definition_files, definition_folders, load_agent_catalog
from agentcli.agents.sources import ToolList
from agentcli.agents.subagent import SubagentRunner
from agentcli.contracts import JSON, Concurrency, ToolContext, ToolResult
from agentcli.plugins.manifest import Plugin
from agentcli.tree_stamp import TreeStamp

TASK = "task"
"""The name of the Task tool's source."""

INTRODUCTION = """\
Start a sub-agent: a separate conversation with its own instructions and tools that works on a \
task on its own and reports back. You see only its final message (not its tool calls), so your \
conversation stays short; its usage counts against this session's budget.

Use it for a search or investigation that may take many steps (Explore), or for a self-contained \
piece of work (general-purpose). To run several at once, call Task several times in one message: \
they run concurrently. Do not use it for something one Read, Grep or Glob call answers.

The sub-agent does not see this conversation: make `prompt` self-contained (the goal, what you \
know already, which files matter, and exactly what to report back). Its answer is for you, not \
the user: pass on what matters.

Agent types (`subagent_type`):"""


class AgentTypes:
    """The agent types of a session as their files are now, read again only when one changes.

    Before every request the Task tool's description asks for them: a `TreeStamp` of the
    definition folders tells by `stat` alone whether a file was added, edited or removed, so
    the folders are walked and the files read only then. A definition file that cannot be
    used, or whose frontmatter was read leniently, is reported once (`on_notice`), not at
    every request."""

    def __init__(
        self, cwd: Path, home: Path | None, on_notice: Callable[[str], None], plugins: Sequence[Plugin] = ()
    ) -> None:
        """`plugins`: the enabled plugins, whose `agents/` hold more definitions."""
        self.cwd = cwd
        self.home = home
        self.plugins = tuple(plugins)
        self.on_notice = on_notice
        self._catalog: AgentCatalog | None = None
        self._stamp: TreeStamp | None = None
        self._folders: list[Path] | None = None
        self._reported: set[str] = set()

    def catalog(self) -> AgentCatalog:
        if self._catalog is None or self._stamp is None or self._stamp.changed():
            if self._folders is None:
                plugin_folders = [path for plugin in self.plugins for path in plugin.agents if path.is_dir()]
                self._folders = [*definition_folders(self.cwd, self.home), *plugin_folders]
            self._stamp = TreeStamp(self._folders, definition_files(self.cwd, self.home, self.plugins))
            self._catalog = load_agent_catalog(self.cwd, self.home, self.plugins)
            self._report(self._catalog)
        return self._catalog

    def _report(self, catalog: AgentCatalog) -> None:
        notices = [f"Skipped an agent definition: {invalid.problem}" for invalid in catalog.invalid]
        notices.extend(
            f"The agent type {agent_type.name!r} ({agent_type.source}): {'; '.join(agent_type.notes)}."
            for agent_type in catalog.types
            if agent_type.notes
        )
        for text in [*notices, *catalog.warnings()]:
            if text not in self._reported:
                self._reported.add(text)
                self.on_notice(text)


class TaskTool:
    name = "Task"
    concurrency: Concurrency = "independent"
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "What the sub-agent is to do, in 3-5 words."},
            "prompt": {"type": "string", "description": "The task for the sub-agent, in full."},
            "subagent_type": {"type": "string", "description": "The type of sub-agent to start."},
        },
        "required": ["description", "prompt", "subagent_type"],
        "additionalProperties": False,
    }

    def __init__(self, types: AgentTypes, runner: SubagentRunner) -> None:
        self.types = types
        self.runner = runner
        self._description: tuple[AgentCatalog, str] | None = None

    @property
    def description(self) -> str:
        """The introduction and the agent types: the same text while the definitions stay as they are."""
        catalog = self.types.catalog()
        if self._description is None or self._description[0] is not catalog:
            listed = "\n".join(f"- {t.name}: {t.description} (Tools: {t.tools_text}.)" for t in catalog.types)
            self._description = (catalog, f"{INTRODUCTION}\n{listed}")
        return self._description[1]

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        catalog = self.types.catalog()
        name = str(tool_input["subagent_type"])
        agent_type = catalog.get(name)
        if agent_type is None:
            message = f"There is no agent type {name!r}. The types are: {', '.join(catalog.names())}."
            return ToolResult(message, is_error=True, summary=f"No agent type {name!r}")
        prompt = str(tool_input["prompt"])
        if not prompt.strip():
            return ToolResult("The prompt is empty: say what the sub-agent is to do.", is_error=True)
        return self.runner.run(agent_type, " ".join(str(tool_input["description"]).split()), prompt, ctx)

    def interrupted_result(self, call_id: str) -> ToolResult | None:
        """What the sub-agent of an interrupted call had done (`ReportsInterruption`)."""
        return self.runner.interrupted_result(call_id)

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        """The call itself touches nothing: each call of its sub-agent passes the gate."""
        return NOTHING


def task_source(types: AgentTypes, runner: SubagentRunner) -> ToolList:
    """The Task tool as a tool source (for the session's own agent only)."""
    return ToolList(TASK, (TaskTool(types, runner),))
