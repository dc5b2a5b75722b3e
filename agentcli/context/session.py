"""The context of one session: the frozen system prompt, and each new user message.

`SessionContext` is what a front end (`agentcli run`, the REPL) talks to before handing
a message to the agent loop:

    context = SessionContext(workspace, model, append)
    own = context.tool_source(gate, builtins)     # the Skill and TodoWrite tools
    asking = context.asking_source(gate, asker)   # AskUserQuestion and ExitPlanMode
    agent = build_agent(sources=[builtins, own, asking], system=context.system, ...)
    prepared = context.prepare(text, agent.ctx)   # /commands expanded, reminders added
    with context.turn(prepared):                  # the skill's allowed-tools, for this turn
        agent.run(prepared.content)
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from agentcli.agents.sources import SESSION, ToolList, ToolSource
from agentcli.asking import AsksTheUser
from agentcli.context.facts import gather_facts
from agentcli.context.instruction_loads import InstructionLoads, InstructionsLoad
from agentcli.context.instructions import MAX_IMPORT_DEPTH, InstructionFile, load_instructions, withheld_imports
from agentcli.context.outside import OutsideFiles, project_top
from agentcli.context.reminders import ReminderSource, ReminderTracker, system_reminder
from agentcli.context.system_prompt import build_system_prompt
from agentcli.contracts import JSON, PermissionGate, ToolContext
from agentcli.conversation import text_block
from agentcli.errors import UsageError
from agentcli.mcp.content import McpContent
from agentcli.plugins.manifest import Plugin
from agentcli.settings import agentcli_home, claude_home
from agentcli.skills.catalog import Skill, SkillCatalog
from agentcli.skills.invoke import SkillInvoker
from agentcli.skills.listing import render_skill_list
from agentcli.skills.loader import load_skills
from agentcli.skills.notices import SkillNotices
from agentcli.skills.rules import folder_read_rule
from agentcli.skills.tool import RunsForkedSkills, SkillTools
from agentcli.skills.trust import SkillTrust
from agentcli.tools.ask_user import AskUserQuestionTool
from agentcli.tools.exit_plan import ApprovedPlan, ApprovedPlans, ExitPlanModeTool, ModeSwitch
from agentcli.tools.exit_plan import render_for_model as render_plan
from agentcli.tools.read import ReadTool
from agentcli.tools.todo import Todo, TodoList, TodoWriteTool, render_for_model
from agentcli.workspace.contract import Workspace

PLAN_MODE = (
    "Plan mode is on: the user wants a plan before any change. Only read-only tools run; anything that "
    "changes files or runs commands is refused. Investigate the code (ask the user with AskUserQuestion "
    "where a decision is theirs to make), then present a concise plan (what you would change and where, and "
    "how you would check it) by calling ExitPlanMode with it: the user approves it or says what to change."
)
PLAN_MODE_ENDED = (
    "Plan mode is off: you may now change files and run commands, within the user's permissions. "
    "If the user approved a plan, carry it out."
)

_SLASH = re.compile(r"/(?P<name>-*\w[\w.:-]*)(?:\s+(?P<args>.*))?", re.DOTALL)


@dataclass(frozen=True)
class PreparedMessage:
    """A user message ready for the loop, and the skill it came from (if it was a /command)."""

    content: list[JSON]
    skill: Skill | None = None
    fork: str | None = None
    """For a `context: fork` skill: its expanded text, the task of the sub-agent that runs it
    when the turn starts (`SessionContext.forked_content`); `content` then ends with what the
    main agent is told of it, and the sub-agent's report is added after."""
    request: str = ""
    """The user's words as typed (a /command with its arguments), which a compaction keeps verbatim."""

    @property
    def model(self) -> str | None:
        """The skill's `model` frontmatter: the model for this turn, if it asks for one."""
        return self.skill.model if self.skill else None

    def with_reminders(self, bodies: Sequence[str]) -> PreparedMessage:
        """The message with a `<system-reminder>` for each of `bodies` before its text (a hook's context)."""
        if not bodies:
            return self
        *before, text = self.content
        return replace(self, content=[*before, *(system_reminder(body) for body in bodies), text])


@dataclass(frozen=True)
class TypedCommand:
    """A `/command` the user typed that expands into a prompt: what the UserPromptExpansion hooks are told."""

    name: str
    args: str
    expansion_type: str
    """`slash_command` (a skill or a command file) or `mcp_prompt`."""
    source: str
    """Where it comes from, as Claude Code names it: `projectSettings`, `userSettings`, `plugin` or `mcp`."""

    def hook_fields(self, prompt: str) -> JSON:
        return {
            "expansion_type": self.expansion_type,
            "command_name": self.name,
            "command_args": self.args,
            "command_source": self.source,
            "prompt": prompt,
        }


def parse_command(text: str) -> tuple[str, str] | None:
    """`/git:commit fix typo` → ("git:commit", "fix typo"); None for ordinary text (or `/usr/bin/x …`)."""
    match = _SLASH.fullmatch(text.strip())
    if match is None:
        return None
    return match.group("name"), match.group("args") or ""


class SessionContext:
    def __init__(
        self,
        workspace: Workspace,
        model: str,
        append_system_prompt: str | None = None,
        *,
        home: Path | None = None,
        today: datetime.date | None = None,
        permission_mode: Callable[[], str] = lambda: "default",
        skill_trust: SkillTrust | None = None,
        outside: OutsideFiles | None = None,
        on_notice: Callable[[str], None] = lambda text: None,
        mcp: McpContent | None = None,
        claude: Path | None = None,
        skill_notices: SkillNotices | None = None,
        plugins: Sequence[Plugin] = (),
        on_instructions_loaded: Callable[[list[InstructionsLoad]], None] = lambda loads: None,
    ) -> None:
        """`workspace`: the session's (its root is the project; the facts' git runs in it);
        `plugins`: the enabled plugins, whose skills and commands are read too;
        `on_instructions_loaded` hears which instruction files entered the conversation, and why."""
        self.plugins = tuple(plugins)
        cwd = self.cwd = workspace.root
        self.mcp = mcp
        """MCP prompts (`/mcp__server__prompt`) and resources (`@server:uri`), when servers are configured."""
        self.home = home or agentcli_home()
        self.claude = claude or claude_home()
        """Claude Code's user folder (`~/.claude`): its skills and commands are read too."""
        self.skill_notices = skill_notices or SkillNotices(on_notice)
        """What was said about the skill files (read leniently, a command hidden by a skill): said once."""
        self.outside = outside or OutsideFiles(project_top(cwd), on_notice=on_notice)
        """Which files outside the project `@` imports may read, and asking about the rest."""
        self.facts = gather_facts(workspace, model, today, self.home)
        self.system: list[JSON] = build_system_prompt(cwd, model, append_system_prompt, self.facts)
        """Byte-identical for every request of the session."""
        self.instruction_loads = InstructionLoads(on_instructions_loaded)
        """Which instruction files the model was sent (a compaction tells it `compacting`)."""
        self.reminders = ReminderTracker(
            [
                ReminderSource(
                    "instructions",
                    lambda: self.instruction_loads.render(self.instruction_files()),
                    changed="The instruction files changed during this session. Their current content follows "
                    "and replaces what was shown earlier.",
                    removed="The instruction files shown earlier were removed or emptied; disregard them.",
                    on_sent=self.instruction_loads.sent,
                ),
                ReminderSource(
                    "skills",
                    lambda: render_skill_list(self._reported_skills()),
                    changed="The skills changed during this session; this list replaces the earlier one.",
                    removed="No skills are available any more.",
                ),
                ReminderSource(
                    "mode",
                    lambda: PLAN_MODE if permission_mode() == "plan" else "",
                    changed="",
                    removed=PLAN_MODE_ENDED,
                ),
                # Only ever sent after a compaction dropped the TodoWrite calls: every change the
                # model makes itself is marked as already known (see `attach`).
                ReminderSource(
                    "tasks",
                    lambda: render_for_model(self.todos.items),
                    changed="",
                    removed="Your task list is now empty.",
                ),
                # Likewise: the approval and a resume mark it known, so only a compaction sends it.
                ReminderSource(
                    "plan",
                    lambda: render_plan(self.plans.latest),
                    changed="",
                    removed="The plan approved earlier no longer applies.",
                ),
            ]
        )
        self.todos = TodoList()
        """The model's task list (TodoWrite) for this conversation."""
        self.plans = ApprovedPlans()
        """The plan the user last approved in this conversation (ExitPlanMode)."""
        self.skill_trust = skill_trust or SkillTrust()
        """Which skill files may grant their allowed-tools to the model (shared by a Session's conversations)."""
        self.skill_trust.begin(self.skills)
        self.on_notice = on_notice
        self._invoker: SkillInvoker | None = None
        self._forks: RunsForkedSkills | None = None
        self._skill_tools: SkillTools | None = None
        self._reported_unreadable: set[Path] = set()

    def instruction_files(self) -> list[InstructionFile]:
        """The instruction files (CLAUDE.md and the rest) as they are on disk now, with their imports."""
        return load_instructions(self.cwd, self.home, self.outside)

    def skills(self) -> SkillCatalog:
        """Skills as they are on disk now (files are re-read, so edits show up)."""
        return load_skills(self.cwd, self.home, self.claude, self.plugins)

    def _reported_skills(self) -> SkillCatalog:
        """`skills()`, after saying once what there is to say about their files."""
        catalog = self.skills()
        self.skill_notices.report(catalog)
        return catalog

    def skill_tools(self, alongside: ToolSource) -> SkillTools:
        """What this conversation's Skill tools are made from (the main agent's and each sub-agent's):
        a skill's `!` commands run with the Bash tool of `alongside`, and its files are read with
        its Read tool. Made on the first call."""
        if self._skill_tools is None:
            tools = {tool.name: tool for tool in alongside.tools()}
            read = tools.get("Read") or ReadTool()
            self._skill_tools = SkillTools(self.skills, tools.get("Bash"), read, self.skill_trust, self.outside)
        return self._skill_tools

    def tool_source(
        self, gate: PermissionGate, alongside: ToolSource, forks: RunsForkedSkills | None = None
    ) -> ToolList:
        """This conversation's own tools, Skill and TodoWrite, as a tool source. Each `!` command of
        a skill is checked by `gate` as a Bash call (see `skill_tools`); `forks` runs `context: fork`
        skills (without it they cannot run). Needed before `prepare` runs a /command."""
        skill = self.skill_tools(alongside).tool(gate, self.on_notice, forks)
        self._invoker = skill.invoker
        self._forks = forks
        todo = TodoWriteTool(self.todos, on_change=lambda: self.reminders.mark_sent("tasks"))
        return ToolList(SESSION, (skill, todo))

    def skills_in_force(self) -> list[tuple[str, str]]:
        """(name, instructions) of the skills run in this conversation, the most recent first."""
        return self._invoker.in_force.latest_first() if self._invoker is not None else []

    def asking_source(self, modes: ModeSwitch, asker: AsksTheUser | None) -> ToolList:
        """AskUserQuestion and ExitPlanMode, asking the user through `asker` (None: nobody can
        answer); an approved plan switches `modes` (the gate) and needs no mode or plan reminder
        after (the model wrote the plan and is told of the mode)."""
        ask = AskUserQuestionTool(asker)
        exit_plan = ExitPlanModeTool(modes, asker, self.plans, on_approved=self._plan_approved)
        return ToolList(SESSION, (ask, exit_plan))

    def _plan_approved(self) -> None:
        self.reminders.mark_sent("mode")
        self.reminders.mark_sent("plan")

    def restore_plan(self, plan: ApprovedPlan | None) -> None:
        """The approved plan of a resumed conversation (its messages or last reminder already show it)."""
        self.plans.restore(plan)
        self.reminders.mark_sent("plan")

    def restore_todos(self, todos: tuple[Todo, ...]) -> None:
        """The task list of a resumed conversation (its messages or last reminder already show it)."""
        self.todos.replace(todos)
        self.reminders.mark_sent("tasks")

    def user_message(self, text: str) -> list[JSON]:
        """Content for a new user message: any due reminders, then `text`."""
        return [*self.reminders.next_blocks(), text_block(text)]

    def prepare(self, text: str, ctx: ToolContext) -> PreparedMessage:
        """Expand a `/command` (raising UsageError when unknown, malformed or not allowed) and add reminders.

        Nothing about the session changes when this raises: the next message still carries
        every reminder that is due. Instruction imports outside the project that were not
        decided yet are asked about first (or, with nobody to ask, left out with a notice).
        """
        self._settle_imports()
        command = parse_command(text)
        if command is None:
            return PreparedMessage(self._with_resources(text))
        name, args = command
        prompt = self.mcp.expand_prompt(name, args) if self.mcp is not None else None
        if prompt is not None:
            return PreparedMessage([*self.reminders.next_blocks(), *prompt])
        skill = self._reported_skills().require(name)
        if self._invoker is None:
            raise RuntimeError("SessionContext.tool_source() must be called before running skills")
        if not skill.user_invocable:
            raise UsageError(
                f"/{name} is for the model only (user-invocable: false in {skill.path}); ask for it in plain words."
            )
        if skill.forked and self._forks is None:
            raise UsageError(f"/{name} runs as a sub-agent (context: fork), and sub-agents cannot be started here.")
        expanded = self._invoker.for_user(skill, args, ctx)
        if skill.forked:
            told = f"The user ran /{name}{' ' + args if args else ''}, which runs as a sub-agent. Its report:"
            return PreparedMessage(self.user_message(told), skill, fork=expanded)
        return PreparedMessage(self.user_message(expanded), skill)

    def typed_command(self, text: str) -> TypedCommand | None:
        """The `/command` in `text` that `prepare` would expand; None for ordinary text, or a
        command `prepare` refuses (it says why)."""
        command = parse_command(text)
        if command is None:
            return None
        name, args = command
        if self.mcp is not None and name in self.mcp.prompts():
            return TypedCommand(name, args, "mcp_prompt", "mcp")
        skill = self._reported_skills().get(name)
        if skill is None or not skill.user_invocable:
            return None
        source = "plugin" if skill.plugin else "userSettings" if skill.source.startswith("user") else "projectSettings"
        return TypedCommand(name, args, "slash_command", source)

    def forked_content(self, prepared: PreparedMessage, ctx: ToolContext) -> list[JSON]:
        """The message for the main agent: `prepared`'s, after a forked skill's sub-agent ran
        (within the turn, so the skill's rules hold for it) and its report was added."""
        if prepared.fork is None or prepared.skill is None or self._forks is None:
            return prepared.content
        report = self._forks.run(prepared.skill, prepared.fork, ctx)
        self.on_notice(f"/{prepared.skill.name} ran as a sub-agent: {report.summary or 'done'}.")
        return [*prepared.content, text_block(report.content)]

    def _with_resources(self, text: str) -> list[JSON]:
        """`text` as a user message, each `@server:uri` it mentions attached after it."""
        if self.mcp is None:
            return self.user_message(text)
        attached, notices = self.mcp.attach_resources(text)
        for notice in notices:
            self.on_notice(notice)
        return [*self.user_message(text), *attached]

    def _settle_imports(self) -> None:
        for _ in range(MAX_IMPORT_DEPTH + 1):  # a file just approved may import further outside files
            files = load_instructions(self.cwd, self.home, self.outside)
            self._report_unreadable(files)
            if not self.outside.settle(withheld_imports(files)):
                return

    def _report_unreadable(self, files: list[InstructionFile]) -> None:
        """Tell the user once about each instruction file that could not be read (the model sees a note)."""
        for item in files:
            if item.unreadable and item.path not in self._reported_unreadable:
                self._reported_unreadable.add(item.path)
                self.on_notice(f"Skipped the instruction file {item.path}: {item.unreadable}.")

    @contextmanager
    def turn(self, prepared: PreparedMessage) -> Iterator[None]:
        """The user turn for `prepared`: its skill's allowed-tools rules hold until the turn ends."""
        rules = self._invoker.turn_rules if self._invoker else None
        if rules is not None and prepared.skill is not None:
            label = f"/{prepared.skill.name}"
            rules.add([*prepared.skill.allowed_tools, *folder_read_rule(prepared.skill)], label)
        try:
            yield
        finally:
            if rules is not None:
                rules.end()
