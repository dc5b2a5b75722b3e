"""One conversation of a session: its context, its agent, its transcript, its compaction.

A `Conversation` is made from the session's parts (`composition.SessionParts`), new or going
on from a loaded transcript (`--continue`, `--resume`, `/resume`: its messages replayed
exactly, so the prompt cache hits). It owns what belongs to one conversation, and changes its
agent only through the agent's methods:

- the context (`context.session.SessionContext`: the system prompt, reminders, skills) and
  the tools' context (`ToolContext`: the session's workspace wrapped in a
  `workspace.checkpointed.CheckpointedWorkspace`, the files read, the user turn);
- its checkpoints (`checkpoints.turns.TurnCheckpoints`): the work tree before the first change
  of each user turn and when the turn ends; from its first request on, the project watched
  (`CheckpointStore.watch`) so that those checkpoints look only at what changed;
- the agent, from `build_agent` with the built-in tools, the web tools (`web.tools`: WebFetch,
  WebSearch), its own (Skill, TodoWrite), the user's (AskUserQuestion, ExitPlanMode: they ask
  through the front end's `ask_user`), Task (`agents.task`: its sub-agents get the built-in,
  web and MCP tools) and the MCP servers' (which
  join at its first request, `tools_ready`, as `Agent.add_tools`);
- its transcript and what keeps track of the agent by subscribing to its events: the
  recorder (`sessions.recorder`), the work log (`sessions.worklog`: the user's requests, the
  files changed and read) and auto-compaction (`sessions.autocompact`), which calls back
  `compact` here (`Agent.replace_conversation` takes the compacted conversation up, carrying
  what `sessions.carry` keeps of the task).

Data flows back up as events (the agent's, to its subscribers and the front end) and as what
the conversation's methods return; the session asks, the conversation answers.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace

from agentcli.agents.build import build_agent
from agentcli.agents.forked_skills import ForkedSkills
from agentcli.agents.subagent import SubagentRunner
from agentcli.agents.task import task_source
from agentcli.budget import Budget
from agentcli.catalog import ModelInfo
from agentcli.checkpoints.store import CheckpointStore
from agentcli.checkpoints.turns import TurnCheckpoints
from agentcli.context.instruction_loads import InstructionsLoad
from agentcli.context.paths import project_state_dir
from agentcli.context.session import PreparedMessage, SessionContext
from agentcli.contracts import JSON, ToolContext, Usage
from agentcli.errors import ModelAPIError, StoppedByHook
from agentcli.events import Event, TurnStarting
from agentcli.hooks import Hooks
from agentcli.loop import LoopConfig, RunResult
from agentcli.mcp.content import mentions_mcp
from agentcli.model_aliases import ModelChoice, unmapped
from agentcli.permissions.gate import Gate
from agentcli.session.composition import SessionModel, SessionParts, resolved_model
from agentcli.session.mode_model import ModelForMode
from agentcli.sessions.autocompact import AutoCompaction
from agentcli.sessions.carry import Budgets, Carried, TaskState, carry
from agentcli.sessions.compact import Compacted, ConversationSize
from agentcli.sessions.compactor import adopt, compact_agent, context_size, last_turn
from agentcli.sessions.recorder import TranscriptRecorder
from agentcli.sessions.store import LoadedTranscript
from agentcli.sessions.transcript import TranscriptWriter, now
from agentcli.sessions.worklog import WorkLog
from agentcli.web.tools import WebTools
from agentcli.workspace.checkpointed import CheckpointedWorkspace


class Conversation:
    """One conversation; `end` it when done (its transcript and its agent's tool threads)."""

    def __init__(
        self, parts: SessionParts, choice: ModelChoice, loaded: LoadedTranscript | None, writer: TranscriptWriter | None
    ) -> None:
        """A new conversation with the model(s) of `choice`, or `loaded` replayed; `writer` is the loaded
        transcript's, already opened (None: opened here). Call `start` once the session holds it."""
        self._parts = parts
        cwd = parts.cwd
        self.context = SessionContext(
            parts.workspace,
            choice.describe(),
            parts.options.append_system_prompt,
            permission_mode=lambda: parts.gate.mode,
            skill_trust=parts.skill_trust,
            outside=parts.outside_files,
            on_notice=parts.notice,
            mcp=parts.mcp_content,
            skill_notices=parts.skill_notices,
            plugins=parts.plugins,
            on_instructions_loaded=self._instructions_loaded,
        )
        self.resumed = loaded
        """The transcript this conversation continues, if it does."""
        self.transcript: TranscriptWriter
        if loaded is None:
            self.id = str(uuid.uuid4())
            self.transcript = TranscriptWriter.new(
                parts.transcripts / f"{self.id}.jsonl",
                session_id=self.id,
                cwd=cwd,
                provider=parts.model.provider,
                model=choice.recorded,
                system=self.context.system,
                on_error=parts.notice,
            )
        else:
            self.id = loaded.session_id
            self.transcript = writer or TranscriptWriter.existing(loaded.path, parts.notice)
            if loaded.system is not None and not parts.options.append_system_prompt:
                self.context.system = loaded.system
            else:  # asked for a different system prompt: the cache prefix changes, say so in the transcript
                self.transcript.write({"type": "system", "time": now(), "system": self.context.system})
            self.context.reminders.restore(loaded.reminders)
            self.context.restore_todos(loaded.todos)
            self.context.restore_plan(loaded.plan)
        self.mcp_tools = parts.mcp.source()
        self.web = WebTools(
            parts.settings,
            parts.model.provider,
            self._model_name,
            parts.model,
            parts.model_info,
            parts.web_pages,
        )
        """WebFetch and WebSearch (`agentcli.web.tools`), for the agent and its sub-agents."""
        self.budget = Budget(parts.token_budget, parts.budget_usd)
        """What this conversation may spend, drawn on by its agent and every sub-agent."""
        self.subagents = SubagentRunner(
            self,
            [parts.builtins, self.web.source(), self.mcp_tools],
            self.context.skill_tools(parts.builtins),
            self.context.facts,
            parts.transcripts / self.id / "subagents",
            parts.on_event,
            self.budget,
            asker=parts.ask_user,
        )
        own_tools = self.context.tool_source(
            parts.gate, parts.builtins, ForkedSkills(parts.agent_types, self.subagents)
        )
        asking = self.context.asking_source(parts.gate, parts.ask_user)
        recording = parts.checkpoints if parts.checkpoint_config.enabled else None
        self.checkpoints = TurnCheckpoints(
            recording, self.id, parts.notice, prune=self._prune, hooks_run_commands=self._hooks_run_commands
        )
        """The work tree before (and after) each user turn that changes it."""
        self.ctx = ToolContext(
            CheckpointedWorkspace(parts.workspace, self.checkpoints), user_turn=loaded.last_turn if loaded else 0
        )
        """The tools' context: the session's workspace (checkpointed), this conversation's files read and user turns."""
        if loaded is not None:
            self.ctx.read_files.restore(loaded.read_files)  # checked against the file before any edit
        self.worklog = (
            WorkLog(parts.workspace)
            if loaded is None
            else WorkLog(
                parts.workspace,
                requests=loaded.requests,
                changed=loaded.changed_files,
                recent=loaded.read_files,
            )
        )
        """The user's requests and the files changed and seen, for a compaction to carry."""
        self.agent = build_agent(
            sources=[
                parts.builtins,
                self.web.source(),
                own_tools,
                asking,
                task_source(parts.agent_types, self.subagents),
                self.mcp_tools,
            ],
            system=self.context.system,
            model=parts.model,
            gate=parts.gate,
            config=parts.loop_config(choice.for_mode(parts.gate.mode)),
            ctx=self.ctx,
            on_event=parts.on_event,
            hooks=parts.hooks,
            budget=self.budget,
        )
        self.recorder = TranscriptRecorder(
            self.transcript,
            self.agent,
            self.context.todos,
            self.ctx.read_files,
            titled=loaded is not None and bool(loaded.title),
            plans=self.context.plans,
            worklog=self.worklog,
        )
        self._model_for_mode = ModelForMode(self.agent, choice, lambda: parts.gate.mode, parts.loop_config)
        self.agent.subscribe(self._model_for_mode)  # first: what follows sees the model of the coming request
        self.agent.subscribe(self.worklog)
        self.agent.subscribe(self.recorder)
        self.agent.subscribe(AutoCompaction(self, parts.notice))
        if recording is not None:
            self.agent.subscribe(self._watch_from_first_request)
        self._size = ConversationSize()
        """The conversation's size, counted as it grows (checked before every request)."""
        if loaded is not None:
            self.agent.replace_conversation(list(loaded.messages), loaded.context_tokens)
            for message in loaded.repairs():
                self.agent.add_message(message)
            if note := loaded.describe_repairs():
                parts.notice(note)

    def _watch_from_first_request(self, event: Event) -> None:
        """The project watched (`CheckpointStore.watch`) from the first request on: the watcher's set-up
        runs while the model answers, not in the way of the session's start."""
        if isinstance(event, TurnStarting):
            self._parts.checkpoints.watch(self._parts.notice)

    def _prune(self, store: CheckpointStore) -> None:
        """Before this process's first checkpoint: drop old sessions' checkpoints (`cleanupPeriodDays`)."""
        store.prune(self._parts.checkpoint_config.cleanup_days, project_state_dir(self._parts.cwd))

    def _hooks_run_commands(self) -> bool:
        """Whether hooks that may change files run during a turn: the session's, or a sub-agent type's own."""
        types = self._parts.agent_types.catalog().types
        return bool(self._parts.hooks.config.commands) or any(t.hooks is not None and t.hooks.commands for t in types)

    def _model_name(self) -> str:
        """The model the agent's requests go to now (WebSearch's provider search asks it)."""
        return self.agent.model_name

    def start(self, source: str) -> None:
        """Run the SessionStart hooks (`source`: startup, resume, clear, compact); what they say
        goes to the model with the next user message."""
        fields = {"source": source, "model": self.agent.model_name}
        for text in self._parts.hooks.run("SessionStart", fields, source).context:
            self.context.reminders.add_once(text)

    def _instructions_loaded(self, loads: list[InstructionsLoad]) -> None:
        """Run the InstructionsLoaded hooks for each file that entered the conversation (for their effects)."""
        for load in loads:
            self._parts.hooks.run("InstructionsLoaded", load.hook_fields(), load.load_reason)

    # ------------------------------------------------------------------ what a sub-agent takes (`subagent.Parent`)

    @property
    def model(self) -> SessionModel:
        return self._parts.model

    @property
    def provider(self) -> str:
        return self._parts.model.provider

    @property
    def gate(self) -> Gate:
        return self._parts.gate

    @property
    def hooks(self) -> Hooks:
        return self._parts.hooks

    def loop_config(self, model: str) -> LoopConfig:
        return self._parts.loop_config(model)

    def resolve_model(self, name: str) -> str | None:
        """The model `name` stands for with this session's provider (an alias resolved); None,
        after a notice saying how to map it, for an alias the provider has no model for (the
        caller goes on with the model it has)."""
        resolved = resolved_model(name, self.provider, self._parts.settings)
        if resolved is None:
            self._parts.notice(unmapped(name, self.provider) + f" Going on with {self.agent.model_name}.")
        return resolved

    # ------------------------------------------------------------------ a user message

    def prepare(self, text: str) -> PreparedMessage:
        """Begin a user turn: run the UserPromptSubmit hooks, expand a /command and add due
        reminders (and what the hooks said). Raises UsageError for an unknown command,
        StoppedByHook when a hook blocked the prompt: then nothing is sent."""
        self.ctx.begin_user_turn()  # a skill's !`cmd` below belongs to this turn already
        said = self._parts.hooks.run("UserPromptSubmit", {"prompt": text})
        if said.stop or said.blocked:
            why = said.stop or said.reason
            raise StoppedByHook(f"A UserPromptSubmit hook blocked this prompt, so nothing was sent: {why}")
        if mentions_mcp(text):
            self.tools_ready()  # its servers approved and connected (as for the first request) before they are asked
        expanding = self._expansion_hooks(text)
        heard = [*self._parts.hooks.take_background(), *said.context, *expanding]  # background hooks: since the last
        prepared = self.context.prepare(text, self.ctx).with_reminders(heard)
        self.recorder.offer_title(text)
        return replace(prepared, request=text)

    def _expansion_hooks(self, text: str) -> tuple[str, ...]:
        """Run the UserPromptExpansion hooks about the `/command` in `text`, before it is expanded
        (its `!` commands run); their context. StoppedByHook when one blocks it."""
        hooks = self._parts.hooks
        if not hooks.config.matching("UserPromptExpansion"):
            return ()
        typed = self.context.typed_command(text)
        if typed is None:
            return ()
        said = hooks.run("UserPromptExpansion", typed.hook_fields(text), typed.name)
        if said.stop or said.blocked:
            why = said.stop or said.reason
            raise StoppedByHook(f"A UserPromptExpansion hook blocked /{typed.name}, so nothing was sent: {why}")
        return said.context

    def tools_ready(self) -> None:
        """Fix this conversation's tools before its first request: the MCP servers connected by
        then (waited for at most the connect timeout) join it; later ones join the next one."""
        if self.mcp_tools.frozen:
            return
        self._parts.mcp.prepare_tools(self.mcp_tools, self.model_info.context_window)
        self.agent.add_tools(self.mcp_tools.tools())

    def run(self, prepared: PreparedMessage) -> RunResult:
        """`prepared` through the loop to the final answer (with the skill's model, if it names one)."""
        self.tools_ready()
        model = self.resolve_model(prepared.model) if prepared.model else None
        self.worklog.note_request(prepared.request)
        self.recorder.prompt_reminders(self.context.reminders.snapshot(), self.ctx.user_turn, prepared.request)
        try:
            with self.context.turn(prepared):
                result = self.agent.run(self.context.forked_content(prepared, self.ctx), model=model)
        except BaseException as stopped:  # an interrupt too: the run record says why it ended
            self.recorder.record_run(stopped)
            if isinstance(stopped, ModelAPIError):
                self._stop_failure(stopped)
            if isinstance(stopped, Exception):
                self.transcript.discard()  # only while the model has never answered: no file to clutter /resume
            raise
        else:
            self.recorder.record_run(None)
        finally:
            self.checkpoints.after(self.ctx.user_turn)
            self.transcript.sync()
        self.transcript.keep()
        return result

    def record_interrupt(self) -> None:
        """After Ctrl-C (or a Halt): the conversation stays valid for the next message; one the
        model never answered leaves no transcript behind."""
        self.agent.record_interrupt()
        self.transcript.discard()

    def use_model(self, provider: str, choice: ModelChoice) -> None:
        """Go on with the model(s) of `choice` (of `provider`) from the next request; the transcript records it."""
        self._model_for_mode.choose(choice)
        self.transcript.write({"type": "model", "time": now(), "provider": provider, "model": choice.recorded})

    def end(self) -> None:
        """Release the transcript (and its lock), the agent's tool threads and the web tools' own clients."""
        self.transcript.close()
        self.agent.close()
        self.web.close()

    # ------------------------------------------------------------------ what it cost

    @property
    def model_info(self) -> ModelInfo:
        """The model of the current request (a skill's, during its turn)."""
        return self._parts.model_info(self.agent.model_name)

    @property
    def usage(self) -> Usage:
        """Tokens this conversation has used, its sub-agents' included: before it was resumed (as
        its transcript recorded them) and since. `agent.usage` counts only the latter (the token
        budget applies to it)."""
        total = Usage()
        if self.resumed is not None:
            total.add(self.resumed.usage)
        total.add(self.agent.usage)
        return total

    def cost_usd(self, usage: Usage) -> float:
        """The price in dollars of `usage`: this conversation's (`usage`) or what a run of it spent,
        its sub-agents' usage included. Each sub-agent's tokens are priced at its own model's rates,
        and so are the tools' own requests (a small model reading a page, a search); the rest at
        the main model's (a resumed conversation's earlier spend too)."""
        by_model: dict[str, Usage] = {}
        for spenders in (self.subagents.usage_by_model(), self.agent.spent_by_tools):
            for name, usage_of_model in spenders.items():
                by_model.setdefault(name, Usage()).add(usage_of_model)
        cost = sum(self._parts.model_info(name).cost_usd(spent) for name, spent in by_model.items())
        main = usage
        for spent in by_model.values():
            main = main.less(spent)
        return cost + self.model_info.cost_usd(main)

    # ------------------------------------------------------------------ compaction (`autocompact.Compactable`)

    def context_size(self) -> int:
        """Tokens the conversation occupies now (measured at the last response, plus an estimate since)."""
        return context_size(self.agent, self._size)

    def auto_compact_threshold(self) -> int | None:
        percent = self._parts.auto_compact_percent
        if percent is None:
            return None
        return int(self.model_info.context_window * percent / 100)

    def compact(self, instructions: str = "", *, auto: bool = False) -> Compacted:
        """Clear old tool results, then summarise: always for /compact; when automatic, only if
        clearing did not bring the conversation under 3/4 of the threshold. Recorded in the
        transcript as a boundary followed by the new conversation."""
        trigger = "auto" if auto else "manual"
        said = self._parts.hooks.run("PreCompact", {"trigger": trigger, "custom_instructions": instructions}, trigger)
        if said.blocked:
            size = self.context_size()
            return Compacted(list(self.agent.messages), size, size, blocked=said.reason)
        instructions = "\n\n".join(part for part in (instructions.strip(), *said.context) if part)
        threshold = self.auto_compact_threshold()
        summarise_above = (threshold or self.model_info.context_window) * 3 // 4 if auto else None
        with self.context.instruction_loads.compacting():
            result = compact_agent(
                self.agent,
                self._parts.model,
                self.context.reminders,
                self.model_info,
                instructions=instructions,
                summarise_above=summarise_above,
                on_notice=self._parts.notice,
                carry=self._carry,
            )
        if result.changed:
            adopt(self.agent, result)
            self.recorder.record_compaction(result, auto=auto, reminders=self.context.reminders.snapshot())
            self._parts.hooks.run("PostCompact", {"trigger": trigger, "compact_summary": result.summary}, trigger)
            self.start("compact")
        return result

    def _carry(self, messages: Sequence[JSON]) -> Carried:
        """What a summarised conversation keeps of `messages` (the conversation it replaces) and of the task."""
        state = TaskState(
            requests=self.worklog.requests,
            changed=self.worklog.changed,
            seen_changed=self.checkpoints.changed_files(self.ctx.user_turn),
            recent=[path for path in self.worklog.recent() if path in self.ctx.read_files],
            skills=self.context.skills_in_force(),
            plan=self.context.plans.latest is not None,
            todos=len(self.context.todos.items),
            last_turn=last_turn(messages),
        )
        budgets = Budgets.for_window(self.model_info.context_window)
        return carry(state, self._parts.workspace, self.worklog.fingerprint, budgets)

    def _stop_failure(self, error: ModelAPIError) -> None:
        """Run the StopFailure hooks for a turn an API error ended (for their effects only)."""
        kind = STOP_FAILURE_KINDS.get(error.status or 0, "server_error" if (error.status or 0) >= 500 else "unknown")
        message = f"API Error: {str(error).splitlines()[0]}"
        fields = {"error": kind, "error_details": str(error), "last_assistant_message": message}
        self._parts.hooks.run("StopFailure", fields, kind)


STOP_FAILURE_KINDS = {
    400: "invalid_request",
    401: "authentication_failed",
    402: "billing_error",
    403: "authentication_failed",
    404: "model_not_found",
    413: "invalid_request",
    429: "rate_limit",
    529: "overloaded",
}
"""The StopFailure hooks' `error` (their matcher's subject) for an API error's HTTP status."""
