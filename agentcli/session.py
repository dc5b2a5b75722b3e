"""A session: one conversation with everything around it (settings, context, gate, tools, loop).

Both front ends build one: `agentcli run` sends a single message, the REPL many. Every
message is appended to the session's transcript as it completes; a session can start from
an earlier transcript (`--continue`, `--resume`, `/resume`) and compact its conversation.

The conversation's agent comes from `build_agent`, with the built-in tools, the
conversation's own (Skill, TodoWrite), Task (`agents.task`: sub-agents, which get the
built-in and MCP tools) and the MCP servers' (`agentcli.mcp`: `self.mcp`; their tools join a
conversation at its first request, `tools_ready`) as its tool sources. What keeps track of
it subscribes to its events: the transcript recorder (`sessions.recorder`) and auto-compaction (`sessions.autocompact`).
Sub-agents emit from their own threads: the front end's sink is handed one event at a time.

Hooks (`agentcli.hooks`) come from the settings files; the session runs UserPromptSubmit (in
`prepare`), SessionStart (startup, resume, clear, compact), SessionEnd (clear, close),
PreCompact, and Notification (before each permission question); its agent and sub-agents run
the tool and stop events. With `approve_hooks` (the REPL) the checked-in settings' hooks run
only once the user trusts them (`hooks.trust`).
Close a session when done (`with Session(...)`, or `close()`): its transcript, the agent's
tool threads, the MCP servers and the model's connections are released then.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from agentcli.agents.build import build_agent
from agentcli.agents.sources import builtin_source
from agentcli.agents.subagent import SubagentRunner
from agentcli.agents.task import AgentTypes, task_source
from agentcli.catalog import MODELS_SETTING, ModelInfo, model_info, unknown_model_notice
from agentcli.context.outside import AsksAboutOutsideFiles, OutsideFiles
from agentcli.context.paths import project_state_dir
from agentcli.context.session import PreparedMessage, SessionContext
from agentcli.contracts import JSON, Model, ToolContext, Usage
from agentcli.credentials import PASSTHROUGH_SETTING, passthrough_setting
from agentcli.errors import StoppedByHook, UsageError
from agentcli.events import EventSink, Notice, SerializedSink
from agentcli.hooks import Hooks, load_hooks
from agentcli.hooks.trust import TRUST_KEY, AsksAboutHooks, trusted_config
from agentcli.loop import Agent, LoopConfig, RunResult
from agentcli.mcp.approval import AsksAboutProjectServer
from agentcli.mcp.content import McpContent, mentions_mcp
from agentcli.mcp.elicitation import DeclineAll, Elicitor
from agentcli.mcp.servers import SessionServers
from agentcli.model_settings import TOKEN_BUDGET_SETTING, budget_usd, check_model_table, tool_protocol
from agentcli.permissions.gate import Gate, build_gate
from agentcli.permissions.prompt import Answer, PermissionRequest, Prompter
from agentcli.permissions.rules import split_rule_list
from agentcli.providers import (
    DEFAULT_PROVIDER,
    MODEL_SETTING,
    PROVIDER_SETTING,
    Choice,
    ProviderSettings,
    choose,
    credential_problem,
    resolve,
)
from agentcli.providers.text_tools import with_tool_protocol
from agentcli.providers.timeouts import IDLE_SETTING, Timeouts
from agentcli.sessions.autocompact import AutoCompaction, auto_compact_percent
from agentcli.sessions.compact import Compacted, ConversationSize
from agentcli.sessions.compactor import adopt, compact_agent, context_size
from agentcli.sessions.recorder import TranscriptRecorder
from agentcli.sessions.store import LoadedTranscript, SessionInfo, find_session, latest_session, load_transcript
from agentcli.sessions.transcript import TranscriptWriter, now
from agentcli.settings import Settings, agentcli_home, load_settings, settings_files
from agentcli.skills.trust import SkillTrust


@dataclass
class SessionOptions:
    """What the command line can say about a session (shared by `run` and the REPL)."""

    model: str | None = None
    """`--model`: a model name, optionally prefixed with its provider (`openai:gpt-5`)."""
    provider: str | None = None
    """`--provider`: a name in `agentcli.providers.PROVIDERS`."""
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    append_system_prompt: str | None = None
    max_turns: int | None = None
    max_budget_tokens: int | None = None
    max_budget_usd: float | None = None
    tool_protocol: str | None = None
    """native, xml or auto (`agentcli.providers.text_tools`); None: the setting's, else native."""
    continue_session: bool = False
    """Go on with the project's most recent session."""
    resume: str | None = None
    """Go on with this session (an id, or an unambiguous prefix of one)."""
    mcp_config: list[str] = field(default_factory=list)
    """`--mcp-config` files: more MCP servers (trusted, like the user's own)."""
    strict_mcp_config: bool = False
    """Only the `--mcp-config` servers: no `.mcp.json`, no `$AGENTCLI_HOME/mcp.json`."""


def split_rules(values: list[str]) -> list[str]:
    """Rules from repeated flags, each holding one or more rules (see `split_rule_list`)."""
    return [rule for value in values for rule in split_rule_list(value)]


def choose_provider(options: SessionOptions, settings: Settings, resumed: LoadedTranscript | None) -> Choice:
    """The provider and model (see `agentcli.providers.choose`); a resumed conversation goes on
    with the ones its transcript names unless the command line names others."""
    if resumed is not None and resumed.model and options.model is None and options.provider is None:
        return Choice(resumed.provider or DEFAULT_PROVIDER, resumed.model)
    return choose(
        options.model,
        options.provider,
        setting=settings.get(PROVIDER_SETTING),
        model_setting=settings.get(MODEL_SETTING),
    )


class Session:
    """Raises UsageError (exit 2) on malformed settings or rules, before anything is sent."""

    def __init__(
        self,
        options: SessionOptions,
        cwd: Path,
        on_event: EventSink,
        *,
        model: Model | None = None,
        prompter: Prompter | None = None,
        approve_outside: AsksAboutOutsideFiles | None = None,
        approve_hooks: AsksAboutHooks | None = None,
        approve_mcp_server: AsksAboutProjectServer | None = None,
        elicitor: Elicitor | None = None,
        retry_base_delay: float = LoopConfig.retry_base_delay,
    ) -> None:
        """`prompter` asks about tool calls, `approve_outside` about `@` imports outside the
        project and `approve_mcp_server` about the project's MCP servers; without them (agentcli
        run) what would be asked is denied or left out. `elicitor` answers an MCP server's requests
        for input from the user; without it (agentcli run) they are declined, with a notice.
        `approve_hooks` asks whether to run the checked-in settings' hooks (without it, they run).
        `retry_base_delay` paces the loop's retries of a broken stream (tests make it short).
        A `model` given is the session's from then on: `close` closes it."""
        self.options = options
        self.cwd = cwd
        self.on_event: EventSink = SerializedSink(on_event)
        on_event = self.on_event
        self.settings = load_settings(cwd)
        self.env_passthrough = passthrough_setting(
            self.settings.get(PASSTHROUGH_SETTING), self.settings.sources.get(PASSTHROUGH_SETTING)
        )
        local_settings = next(path for scope, path in settings_files(cwd) if scope == "local")
        hooks = trusted_config(
            load_hooks(self.settings.raw), self.settings.get(TRUST_KEY), local_settings, approve_hooks, self._notice
        )
        self.hooks = Hooks(
            hooks, cwd, about=self._hook_fields, passthrough=self.env_passthrough, on_notice=self._notice
        )
        if prompter is not None and hooks.matching("Notification", "permission_prompt"):
            prompter = _NotifyingPrompter(prompter, self.hooks)
        self.gate: Gate = build_gate(
            self.settings,
            cwd,
            options.permission_mode,
            split_rules(options.allowed_tools),
            split_rules(options.disallowed_tools),
            prompter=prompter,
            on_notice=lambda text: on_event(Notice(text)),
        )
        for text in self.settings.notices:  # a settings file skipped (a FIFO), a key the repository may not set
            on_event(Notice(text))
        self._model = model
        check_model_table(self.settings)
        self.tool_protocol = tool_protocol(options.tool_protocol, self.settings)
        self.budget_usd = budget_usd(options.max_budget_usd, self.settings)
        self._tool_model: Model | None = None
        """`_model` speaking `tool_protocol` (itself for native)."""
        self.retry_base_delay = retry_base_delay
        self.builtins = builtin_source()
        self.auto_compact_percent = auto_compact_percent(self.settings)
        self.timeouts = Timeouts.from_setting(self.settings.get(IDLE_SETTING), self.settings.sources.get(IDLE_SETTING))
        self.skill_trust = SkillTrust()
        """Kept across /clear and /resume: a skill the model changed stays untrusted in a new conversation."""
        self.outside_files = OutsideFiles.for_session(
            self.settings, cwd, save_to=self.gate.local_settings, ask=approve_outside, on_notice=self._notice
        )
        self.agent_types = AgentTypes(cwd, agentcli_home(), self._notice)
        """The types the Task tool may start; kept across /clear so a bad definition is reported once."""
        self.mcp = SessionServers(
            self.settings,
            cwd,
            [Path(file) for file in options.mcp_config],
            options.strict_mcp_config,
            mode=lambda: self.gate.mode,
            local_settings=self.gate.local_settings,
            ask=approve_mcp_server,
            elicitor=elicitor or DeclineAll(self._notice),
            on_notice=self._notice,
        )
        """Nothing is started until `mcp.start()` (the front end, once it is up) or the first request."""
        self.mcp_content = McpContent(self.mcp.manager, self.mcp.timeout_s)
        # Set by _begin() for each conversation:
        self.id: str
        self.context: SessionContext
        self.agent: Agent
        self.subagents: SubagentRunner
        self.transcript: TranscriptWriter
        self.recorder: TranscriptRecorder
        self.resumed: LoadedTranscript | None = None
        """The transcript this conversation continues, if it does."""
        self._size = ConversationSize()
        """The conversation's size, counted as it grows (checked before every request)."""
        self._ended = False
        earlier: SessionInfo | None = None
        if options.resume:
            earlier = find_session(cwd, options.resume)
        elif options.continue_session:
            earlier = latest_session(cwd)
        loaded = load_transcript(earlier.path) if earlier else None
        self.provider, self.model_name = choose_provider(options, self.settings, loaded)
        self._notice_if_unknown(self.model_name)
        self._begin(loaded, source="resume" if earlier else "startup")

    @property
    def model_info(self) -> ModelInfo:
        return model_info(self.agent.config.model, self.settings.get(MODELS_SETTING))

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
        the rest at the main model's (a resumed conversation's earlier spend too)."""
        by_model = self.subagents.usage_by_model()
        cost = sum(
            model_info(name, self.settings.get(MODELS_SETTING)).cost_usd(spent) for name, spent in by_model.items()
        )
        main = usage
        for spent in by_model.values():
            main = main.less(spent)
        return cost + self.model_info.cost_usd(main)

    def send(self, text: str) -> RunResult:
        """One user message (a /command is expanded first) through the loop to the final answer."""
        return self.run(self.prepare(text))

    def prepare(self, text: str) -> PreparedMessage:
        """Run the UserPromptSubmit hooks, expand a /command and add due reminders (and what the
        hooks said). Raises UsageError for an unknown command, StoppedByHook when a hook blocked
        the prompt: then nothing is sent."""
        said = self.hooks.run("UserPromptSubmit", {"prompt": text})
        if said.stop or said.blocked:
            why = said.stop or said.reason
            raise StoppedByHook(f"A UserPromptSubmit hook blocked this prompt, so nothing was sent: {why}")
        if mentions_mcp(text):
            self.tools_ready()  # its servers approved and connected (as for the first request) before they are asked
        prepared = self.context.prepare(text, self.agent.ctx).with_reminders(said.context)
        self.recorder.offer_title(text)
        return prepared

    def tools_ready(self) -> None:
        """Fix this conversation's tools before its first request: the MCP servers connected by
        then (waited for at most the connect timeout) join it; later ones join the next one."""
        if self.mcp_tools.frozen:
            return
        self.mcp.prepare_tools(self.mcp_tools, self.model_info.context_window)
        for tool in self.mcp_tools.tools():
            self.agent.executor.registry.register(tool)

    def run(self, prepared: PreparedMessage) -> RunResult:
        self.tools_ready()
        config = self.agent.config
        session_model = config.model
        if prepared.model:
            config.model = prepared.model
        self.recorder.prompt_reminders(self.context.reminders.snapshot())
        try:
            with self.context.turn(prepared):
                result = self.agent.run(prepared.content)
        except BaseException as stopped:  # an interrupt too: the run record says why it ended
            self.recorder.record_run(stopped)
            if isinstance(stopped, Exception):
                self.transcript.discard()  # only while the model has never answered: no file to clutter /resume
            raise
        else:
            self.recorder.record_run(None)
        finally:
            config.model = session_model
            self.transcript.sync()
        self.transcript.keep()
        return result

    def record_interrupt(self) -> None:
        """After Ctrl-C (or a Halt): the conversation stays valid for the next message; one the
        model never answered leaves no transcript behind."""
        self.agent.record_interrupt()
        self.transcript.discard()

    def set_model(self, name: str) -> None:
        """`/model NAME` for the next turn: a bare name keeps the provider, a prefixed one
        (`openai:gpt-5`) switches to it (the old client is closed, the new one made at the next
        request). The transcript records the change, so `--continue` goes on with it. UsageError
        for an unknown provider or one whose credentials are missing; then nothing changes."""
        provider, model_name = choose(name, self.provider)
        if provider != self.provider:
            if problem := credential_problem(provider):
                raise UsageError(problem)
            if self._model is not None:
                self._model.close()
            self._model = self._tool_model = None
            self.provider = provider
            self.agent.model = self.model
        self.model_name = model_name
        self.agent.config = self.loop_config(model_name)
        self.transcript.write({"type": "model", "time": now(), "provider": provider, "model": model_name})
        self._notice_if_unknown(model_name)

    def _notice_if_unknown(self, name: str) -> None:
        if note := unknown_model_notice(name, self.settings.get(MODELS_SETTING)):
            self._notice(note)

    def clear(self) -> None:
        """A new conversation: no messages, reminders sent afresh, a new session id and transcript."""
        self._end_conversation()
        self.hooks.run("SessionEnd", {"reason": "clear"})
        self._begin(None, source="clear")

    def resume(self, earlier: SessionInfo) -> None:
        """Go on with an earlier session of this project: its messages, system prompt and transcript."""
        loaded = load_transcript(earlier.path)
        writer = TranscriptWriter.existing(loaded.path, self._notice)  # UsageError while another process has it
        self._end_conversation()
        self._begin(loaded, writer, source="resume")

    def close(self) -> None:
        """Release the transcript (and its lock), the tool threads and the model's connections;
        the session is not used after. Safe to call again."""
        self._end_conversation()
        if not self._ended:
            self._ended = True
            self.hooks.run("SessionEnd", {"reason": "other"})
        self.mcp.close()
        if self._model is not None:
            self._model.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    @property
    def model(self) -> Model:
        """The model client, made on first use (importing the provider is not on the start-up path)."""
        if self._model is None:
            self._model = resolve(self.provider, ProviderSettings(self.timeouts))
        if self._tool_model is None:
            self._tool_model = with_tool_protocol(self._model, self.tool_protocol, self._has_native_tools)
        return self._tool_model

    def _has_native_tools(self, name: str) -> bool:
        return model_info(name, self.settings.get(MODELS_SETTING)).native_tools

    def _end_conversation(self) -> None:
        """Release what the current conversation holds: its transcript and its agent's tool threads
        (each conversation gets an agent of its own, so the next one starts its own threads)."""
        self.transcript.close()
        self.agent.close()

    def _begin(self, loaded: LoadedTranscript | None, writer: TranscriptWriter | None = None, *, source: str) -> None:
        """Set up a conversation: a new one, or `loaded` replayed exactly (so the prompt cache hits).
        `writer` is the loaded transcript's, already opened. `source` is the SessionStart hooks'."""
        self.context = SessionContext(
            self.cwd,
            self.model_name,
            self.options.append_system_prompt,
            permission_mode=lambda: self.gate.mode,
            skill_trust=self.skill_trust,
            outside=self.outside_files,
            on_notice=self._notice,
            mcp=self.mcp_content,
        )
        own_tools = self.context.tool_source(self.gate, self.builtins)
        self.resumed = loaded
        if loaded is None:
            self.id = str(uuid.uuid4())
            path = project_state_dir(self.cwd) / f"{self.id}.jsonl"
            self.transcript = TranscriptWriter.new(
                path,
                session_id=self.id,
                cwd=self.cwd,
                provider=self.provider,
                model=self.model_name,
                system=self.context.system,
                on_error=self._notice,
            )
        else:
            self.id = loaded.session_id
            self.transcript = writer or TranscriptWriter.existing(loaded.path, self._notice)
            if loaded.system is not None and not self.options.append_system_prompt:
                self.context.system = loaded.system
            else:  # asked for a different system prompt: the cache prefix changes, say so in the transcript
                self.transcript.write({"type": "system", "time": now(), "system": self.context.system})
            self.context.reminders.restore(loaded.reminders)
            self.context.restore_todos(loaded.todos)
        transcripts = project_state_dir(self.cwd) / self.id / "subagents"
        self.mcp_tools = self.mcp.source()
        self.subagents = SubagentRunner(
            self,
            [self.builtins, self.mcp_tools],
            self.context.skill_tools,
            self.context.facts,
            transcripts,
            self.on_event,
        )
        self.agent = build_agent(
            sources=[self.builtins, own_tools, task_source(self.agent_types, self.subagents), self.mcp_tools],
            system=self.context.system,
            model=self.model,
            gate=self.gate,
            config=self.loop_config(self.model_name),
            ctx=ToolContext(cwd=self.cwd, env_passthrough=self.env_passthrough),
            on_event=self.on_event,
            hooks=self.hooks,
        )
        self.recorder = TranscriptRecorder(
            self.transcript, self.agent, self.context.todos, titled=loaded is not None and bool(loaded.title)
        )
        self.agent.subscribe(self.recorder)
        self.agent.subscribe(AutoCompaction(self, self._notice))
        if loaded is not None:
            self.agent.ctx.read_files.restore(loaded.read_files)  # checked against the file before any edit
            self.agent.messages = list(loaded.messages)
            self.agent.context_tokens = loaded.context_tokens
            for message in loaded.repairs():
                self.agent.add_message(message)
            if note := loaded.describe_repairs():
                self._notice(note)
        self._session_start(source)

    def _session_start(self, source: str) -> None:
        """Run the SessionStart hooks; what they say goes to the model with the next user message."""
        for text in self.hooks.run("SessionStart", {"source": source}, source).context:
            self.context.reminders.add_once(text)

    def _hook_fields(self) -> JSON:
        """What every hook's input says about the session, as it is now."""
        return {
            "session_id": self.id,
            "transcript_path": str(self.transcript.path),
            "cwd": str(self.cwd),
            "permission_mode": self.gate.mode,
        }

    def _notice(self, text: str) -> None:
        self.on_event(Notice(text))

    # ------------------------------------------------------------------ compaction

    def context_size(self) -> int:
        """Tokens the conversation occupies now (measured at the last response, plus an estimate since)."""
        return context_size(self.agent, self._size)

    def auto_compact_threshold(self) -> int | None:
        if self.auto_compact_percent is None:
            return None
        return int(self.model_info.context_window * self.auto_compact_percent / 100)

    def compact(self, instructions: str = "", *, auto: bool = False) -> Compacted:
        """Clear old tool results, then summarise: always for /compact; when automatic, only if
        clearing did not bring the conversation under 3/4 of the threshold. Recorded in the
        transcript as a boundary followed by the new conversation."""
        trigger = "auto" if auto else "manual"
        self.hooks.run("PreCompact", {"trigger": trigger, "custom_instructions": instructions}, trigger)
        threshold = self.auto_compact_threshold()
        summarise_above = (threshold or self.model_info.context_window) * 3 // 4 if auto else None
        result = compact_agent(
            self.agent,
            self.context.reminders,
            self.model_info,
            instructions=instructions,
            summarise_above=summarise_above,
            on_notice=self._notice,
        )
        if result.changed:
            adopt(self.agent, result)
            self.recorder.record_compaction(result, auto=auto, reminders=self.context.reminders.snapshot())
            self._session_start("compact")
        return result

    def loop_config(self, name: str) -> LoopConfig:
        """The loop's configuration for the model `name` (its output limits; the run's turn limit and budget)."""
        info = model_info(name, self.settings.get(MODELS_SETTING))
        budget = self.options.max_budget_tokens or self.settings.get(TOKEN_BUDGET_SETTING) or LoopConfig.token_budget
        return LoopConfig(
            model=name,
            max_output_tokens=min(32_000, info.max_output_tokens),
            model_max_output_tokens=info.max_output_tokens,
            max_turns=self.options.max_turns,
            token_budget=budget,
            retry_base_delay=self.retry_base_delay,
            budget_usd=self.budget_usd,
            prices=info,
        )


class _NotifyingPrompter:
    """The front end's prompter, running the Notification hooks as each question goes up
    (agentcli is waiting for the user)."""

    def __init__(self, prompter: Prompter, hooks: Hooks) -> None:
        self._prompter = prompter
        self._hooks = hooks

    def __call__(self, request: PermissionRequest) -> Answer:
        message = f"agentcli needs your permission to use {request.tool}"
        self._hooks.run(
            "Notification", {"message": message, "notification_type": "permission_prompt"}, "permission_prompt"
        )
        return self._prompter(request)
