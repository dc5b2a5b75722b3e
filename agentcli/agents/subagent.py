"""Running a sub-agent: one Task call's own conversation, from its prompt to its final text.

A sub-agent is an `Agent` built like any other (`build_agent`), with what its type says
(`definitions.AgentType`): its system prompt followed by the session's environment facts, its
tools (the parent's shared sources and a Skill tool and task list of its own, minus any the type
leaves out; never Task, so sub-agents cannot start sub-agents, nor ExitPlanMode), its model and
its turn limit. AskUserQuestion only when its type names it in `tools` (the general-purpose type,
offered every tool, does not ask, as in Claude Code): its questions go to the user through the
session's front end, and say which agent asks.
With the Skill tool, its first message lists the skills, as the parent's did. The rest it
shares with its parent:

- the permission gate, so the same mode and rules apply and its questions queue with everyone
  else's (the question names it: `ToolContext.agent_label`); the allowed-tools of a skill it
  runs hold for its own calls only, until it ends (`permissions.gate.AgentGate`), and only when
  the skill file is trusted (`skills.trust`), as for the parent;
- the run's budget (`agentcli.budget`): its requests draw on the same tokens and dollars as the
  parent's and its siblings', as they are made; what it used is added to the parent's usage
  when it ends (so `Session.usage`, `/cost` and the json `usage` include it);
- the interrupt: its cancel event is linked to the parent's (`Cancellation.linked`);
- the workspace, and the user turn its calls belong to (`ToolContext.user_turn`);
- the hooks: SubagentStart before its first request (what they say is a reminder in its first
  message), PreToolUse and PostToolUse for its calls, SubagentStop when it would end; every
  input also names it (`agent_id`, `agent_type`, `agent_transcript_path`), and its
  definition's own hooks run too, while it runs.

Its events carry its own id and go straight to the front end, not through the parent's
subscribers (the parent's transcript and auto-compaction never see them), between the parent's
`SubagentStarted` and `SubagentFinished`. Its conversation is written to its own transcript,
`<session id>/subagents/<sub-agent id>.jsonl` beside the session's (a folder, so `/resume` does
not list it), whose path `SubagentFinished.transcript` carries into the parent's transcript.

The parent sees only the `ToolResult`: the final text and a footer line with the turns, tool
calls and tokens; or, when the sub-agent failed, hit a limit or was interrupted, an error
saying so and what it had done by then.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from agentcli.agents.build import build_agent
from agentcli.agents.definitions import BUILT_IN, AgentType
from agentcli.agents.sources import ToolList, ToolSource, collect_tools
from agentcli.agents.tool_choice import choose_tools
from agentcli.asking import AsksTheUser
from agentcli.budget import Budget
from agentcli.context.facts import SessionFacts
from agentcli.context.reminders import system_reminder
from agentcli.context.system_prompt import environment_text
from agentcli.contracts import JSON, Model, PermissionGate, ToolContext, ToolResult, Usage
from agentcli.conversation import text_block, text_of
from agentcli.errors import AgentcliError, BudgetExceeded, Cancelled, CostBudgetExceeded, MaxTurnsReached
from agentcli.events import (
    AssistantMessage,
    Event,
    EventSink,
    Notice,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
)
from agentcli.hooks import Hooks
from agentcli.loop import Agent, LoopConfig, RunResult
from agentcli.permissions.gate import AgentGate
from agentcli.permissions.modes import check_mode
from agentcli.sessions.recorder import TranscriptRecorder
from agentcli.sessions.transcript import TranscriptWriter
from agentcli.skills.tool import SkillTool, SkillTools
from agentcli.tools.ask_user import NAME as ASK_USER
from agentcli.tools.ask_user import AskUserQuestionTool
from agentcli.tools.registry import ToolRegistry
from agentcli.tools.todo import TodoList, TodoWriteTool

LAST_TEXT_CHARS = 500
"""Of the sub-agent's last text, quoted in an error result."""
SUBAGENT = "subagent"
SKILL_TOOL = "Skill"
INTERRUPTED = "it was interrupted by the user"


class Parent(Protocol):
    """What a sub-agent takes from the conversation that starts it (`session.conversation.Conversation`),
    as it is now."""

    @property
    def agent(self) -> Agent:
        """The parent's agent: its model name, its usage, and its events."""
        ...

    @property
    def model(self) -> Model: ...

    @property
    def provider(self) -> str:
        """The name of the provider `model` talks to (`agentcli.providers`), for the transcript."""
        ...

    @property
    def gate(self) -> PermissionGate: ...

    @property
    def hooks(self) -> Hooks: ...

    def loop_config(self, model: str) -> LoopConfig:
        """The loop configuration the session uses for `model` (output limits, retries, prices)."""
        ...

    def resolve_model(self, name: str) -> str | None:
        """The model `name` stands for (an alias resolved); None, after a notice, for one with no model."""
        ...


@dataclass
class _Progress:
    """What a sub-agent has done so far, from its events (for the footer and for an error)."""

    turns: int = 0
    tool_calls: Counter[str] = field(default_factory=Counter)
    last_text: str = ""

    def __call__(self, event: Event) -> None:
        if isinstance(event, AssistantMessage):
            self.turns += 1
            said = text_of(event.message["content"]).strip()
            self.last_text = said or self.last_text
        elif isinstance(event, ToolCallFinished):
            # A new Counter, not a change to this one: an interrupt reads it from another thread.
            self.tool_calls = self.tool_calls + Counter({event.name: 1})

    def described(self, usage: Usage) -> str:
        """`3 turns, 5 tool calls, 12,345 tokens`."""
        calls = sum(self.tool_calls.values())
        tokens = usage.total_input + usage.output_tokens
        return f"{_plural(self.turns, 'turn')}, {_plural(calls, 'tool call')}, {tokens:,} tokens"


@dataclass(frozen=True)
class _Running:
    """A sub-agent at work: what an interrupt reports of it."""

    agent_type: AgentType
    progress: _Progress
    agent: Agent


class SubagentRunner:
    """Starts the sub-agents of one conversation (the Task tool's calls), each on its own."""

    def __init__(
        self,
        parent: Parent,
        sources: Sequence[ToolSource],
        skills: SkillTools,
        facts: SessionFacts,
        transcripts: Path | None,
        on_event: EventSink,
        budget: Budget,
        *,
        asker: AsksTheUser | None = None,
    ) -> None:
        """`sources`: the parent's tools a sub-agent may have (never Task); `skills`: what its own
        Skill tool is made from; `facts`: the session's, for the system prompt; `transcripts`: the
        folder for their transcripts (None: none written); `on_event`: the front end; `budget`: the
        run's, which the parent's agent draws on too; `asker`: the front end's, for the
        AskUserQuestion of the types that name it (None: nobody can answer)."""
        self.parent = parent
        self.budget = budget
        self.sources = sources
        self.skills = skills
        self.facts = facts
        self.transcripts = transcripts
        self.on_event = on_event
        self.asker = asker
        self._usage_lock = threading.Lock()
        """Concurrent sub-agents add their usage to the parent's as each ends."""
        self._usage_by_model: dict[str, Usage] = {}
        self._running: dict[str, _Running] = {}
        """The sub-agents running now, by the id of their Task call."""
        self._said: set[str] = set()
        """Notices about agent types said already (each once)."""

    def run(self, agent_type: AgentType, description: str, prompt: str, ctx: ToolContext) -> ToolResult:
        """Run a sub-agent of `agent_type` on `prompt` to its end; `ctx` is the Task call's."""
        parent = self.parent.agent
        model = parent.model_name
        if agent_type.model is not None:
            model = self.parent.resolve_model(agent_type.model) or model
        subagent_id = f"{SUBAGENT}-{uuid.uuid4().hex[:12]}"
        mode = None if agent_type.permission_mode is None else check_mode(agent_type.permission_mode)
        gate = AgentGate(self.parent.gate, mode)  # its skills' allowed-tools hold for its own calls only
        skill = self.skills.tool(gate, lambda text: self.on_event(Notice(text, agent_id=subagent_id)))
        try:
            tools = self._tools(agent_type, self._sources(skill, agent_type))
        except ValueError as unusable:  # two sources with one name, or nothing its `tools:` names
            where = "" if agent_type.source == BUILT_IN else f" ({agent_type.source})"
            message = f"The agent type {agent_type.name!r}{where} cannot be started: {unusable}"
            return ToolResult(message, is_error=True, summary=f"{agent_type.name}: cannot be started")
        about: JSON = {"agent_id": subagent_id, "agent_type": agent_type.name}
        if self.transcripts is not None:
            about["agent_transcript_path"] = str(self.transcripts / f"{subagent_id}.jsonl")
        hooks = self.parent.hooks.for_agent(agent_type.name, about, agent_type.hooks)
        system = [
            text_block(agent_type.prompt),
            text_block(environment_text(replace(self.facts, model=model))),
        ]
        config = replace(self.parent.loop_config(model), max_turns=agent_type.max_turns)
        sub_ctx = ToolContext(
            ctx.workspace, cancel=ctx.cancel.linked(), agent_label=agent_type.name, user_turn=ctx.user_turn
        )
        agent = build_agent(
            sources=[ToolList(SUBAGENT, tuple(tools))],
            system=system,
            model=self.parent.model,
            gate=gate,
            config=config,
            ctx=sub_ctx,
            on_event=self.on_event,
            agent_id=subagent_id,
            hooks=hooks,
            budget=self.budget,
        )
        progress = _Progress()
        agent.subscribe(progress)
        transcript = self._transcript(agent, sub_ctx, subagent_id, model, description)
        parent.emit(SubagentStarted(subagent_id, ctx.call_id, agent_type.name, description, agent_type.color or ""))
        self._running[ctx.call_id] = _Running(agent_type, progress, agent)
        error: str | None = None
        skills = self.skills.listing() if SKILL_TOOL in tools.names() else ""
        try:
            started = hooks.run("SubagentStart", {}, agent_type.name)
            reminders = [*([skills] if skills else []), *self._preloaded(agent_type), *started.context]
            result = agent.run([*(system_reminder(text) for text in reminders), text_block(prompt)])
        except Cancelled:  # the parent was interrupted: it has moved on and does not read this result
            agent.record_interrupt()
            error = INTERRUPTED
            return self._failed(agent_type, error, progress, agent.usage)
        except KeyboardInterrupt:  # Ctrl-C in this thread: the parent's turn stops too
            agent.record_interrupt()
            error = INTERRUPTED
            raise
        except AgentcliError as problem:
            error = _why(problem, agent_type)
            return self._failed(agent_type, error, progress, agent.usage)
        except Exception as problem:  # a bug of ours must not end the parent's turn
            error = f"internal error: {type(problem).__name__}: {problem}"
            return self._failed(agent_type, error, progress, agent.usage)
        finally:
            self._running.pop(ctx.call_id, None)
            skill.invoker.turn_rules.end()
            agent.close()
            hooks.close()
            ctx.cancel.unlink(sub_ctx.cancel)
            kept = self._close_transcript(transcript)
            with self._usage_lock:
                parent.add_usage(agent.usage)
                self._usage_by_model.setdefault(model, Usage()).add(agent.usage)
            finished = SubagentFinished(
                subagent_id,
                ctx.call_id,
                progress.turns,
                sum(progress.tool_calls.values()),
                agent.usage,
                error,
                str(transcript.path) if kept and transcript is not None else None,
            )
            parent.emit(finished)
        return self._answered(agent_type, result, progress, agent.usage)

    def usage_by_model(self) -> dict[str, Usage]:
        """What the sub-agents that ended used, by model (for the cost: each at its model's rates)."""
        with self._usage_lock:
            return {model: replace(usage) for model, usage in self._usage_by_model.items()}

    def interrupted_result(self, call_id: str) -> ToolResult | None:
        """For the Task call `call_id`, interrupted while its sub-agent runs: what it had done so
        far (the sub-agent itself stops at its next step, or at once while it waits for the model)."""
        running = self._running.get(call_id)
        if running is None:
            return None
        return self._failed(running.agent_type, INTERRUPTED, running.progress, running.agent.usage)

    def _tools(self, agent_type: AgentType, sources: list[ToolSource]) -> ToolRegistry:
        """What `agent_type` is offered (`tool_choice`); `tools:` entries naming no tool there is
        are left out with one notice; ValueError when nothing it names is there."""
        choice = choose_tools(collect_tools(sources).names(), agent_type.tools, agent_type.disallowed_tools)
        if choice.unknown:
            listed = ", ".join(choice.unknown)
            if not choice.names:
                raise ValueError(f"none of the tools its `tools:` names is there ({listed}).")
            self._say_once(
                f"The agent type {agent_type.name!r} ({agent_type.source}) names tools agentcli does not have "
                f"({listed}); it starts with the others."
            )
        return collect_tools(sources, choice.names)

    def _preloaded(self, agent_type: AgentType) -> list[str]:
        """The text of the skills its definition preloads (`skills:`), one reminder each."""
        if not agent_type.skills:
            return []
        catalog = self.skills.load()
        texts = []
        for name in agent_type.skills:
            found = catalog.get(name.removeprefix("/"))
            if found is None or found.disable_model_invocation:
                why = "there is no such skill" if found is None else "it may be run only by the user"
                self._say_once(f"The agent type {agent_type.name!r} preloads the skill {name!r}, but {why}.")
                continue
            texts.append(
                f"The skill /{found.name} ({found.path}) is loaded for you; follow it:\n\n{found.body.strip()}"
            )
        return texts

    def _say_once(self, text: str) -> None:
        if text not in self._said:
            self._said.add(text)
            self.on_event(Notice(text))

    def _sources(self, skill: SkillTool, agent_type: AgentType) -> list[ToolSource]:
        """The parent's shared sources, then the sub-agent's own Skill tool and task list, and
        AskUserQuestion when its type names it."""
        asks = agent_type.tools is not None and ASK_USER in agent_type.tools
        ask = (AskUserQuestionTool(self.asker),) if asks else ()
        return [*self.sources, ToolList(SUBAGENT, (skill, TodoWriteTool(TodoList()), *ask))]

    def _transcript(
        self, agent: Agent, ctx: ToolContext, subagent_id: str, model: str, description: str
    ) -> TranscriptWriter | None:
        if self.transcripts is None:
            return None
        writer = TranscriptWriter.new(
            self.transcripts / f"{subagent_id}.jsonl",
            session_id=subagent_id,
            cwd=ctx.cwd,
            provider=self.parent.provider,
            model=model,
            system=agent.system,
            on_error=lambda text: self.on_event(Notice(text, agent_id=subagent_id)),
        )
        recorder = TranscriptRecorder(writer, agent, TodoList(), ctx.read_files, titled=False)
        recorder.offer_title(description)
        agent.subscribe(recorder)
        return writer

    @staticmethod
    def _close_transcript(transcript: TranscriptWriter | None) -> bool:
        """Close it; True when it holds the whole conversation."""
        if transcript is None:
            return False
        transcript.sync()
        transcript.close()
        return transcript.kept

    @staticmethod
    def _answered(agent_type: AgentType, result: RunResult, progress: _Progress, usage: Usage) -> ToolResult:
        done = progress.described(usage)
        text = result.text.strip() or "(The sub-agent ended without a final message.)"
        return ToolResult(f"{text}\n\n[{agent_type.name} sub-agent: {done}]", summary=f"{agent_type.name}: {done}")

    @staticmethod
    def _failed(agent_type: AgentType, why: str, progress: _Progress, usage: Usage) -> ToolResult:
        lines = [f"The {agent_type.name} sub-agent did not finish: {why}."]
        calls = ", ".join(f"{name} ×{count}" for name, count in progress.tool_calls.most_common())
        lines.append(f"Done so far: {progress.described(usage)}{f' ({calls})' if calls else ''}.")
        if progress.last_text:
            last = progress.last_text
            if len(last) > LAST_TEXT_CHARS:
                last = last[: LAST_TEXT_CHARS - 1] + "…"
            lines.append(f"Its last message: {last}")
        lines.append(
            "Any changes it made to files are still there. Start it again with a narrower task, do the rest "
            "yourself, or tell the user what stopped it."
        )
        return ToolResult("\n".join(lines), is_error=True, summary=f"{agent_type.name}: stopped, {why}")


def _why(problem: AgentcliError, agent_type: AgentType) -> str:
    """What stopped a sub-agent, in the words of its parent's result."""
    if isinstance(problem, MaxTurnsReached):
        return f"it reached its turn limit ({agent_type.max_turns} turns; `maxTurns` in an agent definition)"
    if isinstance(problem, CostBudgetExceeded):
        return "the run's cost budget was used up (raise it with --max-budget-usd)"
    if isinstance(problem, BudgetExceeded):
        return "the run's token budget was used up (raise it with --max-budget-tokens)"
    text = " ".join(str(problem).split())
    return text[:1].lower() + text[1:].rstrip(".")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"
