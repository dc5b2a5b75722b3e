"""A session: what the front ends talk to. Its parts, and its current conversation.

Both front ends make one: `agentcli run` sends a single message, the REPL many. A session is
its parts (`composition.compose`: built once from the settings and the command line, shared by
its conversations) and one conversation at a time (`conversation.Conversation`: its agent,
transcript and compaction). `/clear` and `/resume` end the conversation and start
another; `/model` switches the model for the rest of the session.

Hooks (`agentcli.hooks`) come from the settings files; the session runs SessionEnd (clear,
resume, close), its conversation UserPromptSubmit, SessionStart (startup, resume, clear,
compact; resume again after a conversation rewind), PreCompact (which may block it), PostCompact
and StopFailure (a turn ended by an API error), its gate Notification (before each permission
question) and PermissionRequest; its agent and sub-agents run the tool and stop events. What
background (`async`) hooks said goes to the model with the next message. The checked-in
settings' hooks run only once the user trusts them (`hooks.trust`): asked through
`approve_hooks` (the REPL), else left out unless trusted before.

Close a session when done (`with Session(...)`, or `close()`): its transcript, the agent's
tool threads, the MCP servers, the model's connections and the workspace it made are released then.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from agentcli.agents.subagent import SubagentRunner
from agentcli.agents.task import AgentTypes
from agentcli.asking import AsksTheUser
from agentcli.catalog import MODELS_SETTING, ModelInfo, unknown_model_notice
from agentcli.checkpoints.rewind import TurnSummary, rewind_record, summaries
from agentcli.checkpoints.store import CheckpointStore
from agentcli.context.outside import AsksAboutOutsideFiles
from agentcli.context.session import PreparedMessage, SessionContext
from agentcli.contracts import JSON, Model, Usage
from agentcli.errors import UsageError
from agentcli.events import EventSink
from agentcli.hooks import Hooks
from agentcli.hooks.trust import AsksAboutHooks
from agentcli.loop import Agent, LoopConfig, RunResult
from agentcli.mcp.approval import AsksAboutProjectServer
from agentcli.mcp.content import McpContent
from agentcli.mcp.servers import SessionServers
from agentcli.model_aliases import ModelChoice
from agentcli.permissions.gate import Gate
from agentcli.permissions.prompt import Prompter
from agentcli.providers import KEY_HELPER_SETTING, choose, credential_problem
from agentcli.providers.admission import Admission
from agentcli.session.composition import Approvals, SessionOptions, SessionParts, choice_or_error, compose
from agentcli.session.conversation import Conversation
from agentcli.session.sandbox import SandboxStatus
from agentcli.sessions.compact import Compacted
from agentcli.sessions.recorder import TranscriptRecorder
from agentcli.sessions.store import LoadedTranscript, SessionInfo, load_transcript
from agentcli.sessions.transcript import TranscriptWriter
from agentcli.settings import Settings
from agentcli.tools.exit_plan import ApprovedPlan
from agentcli.web.tools import WebTools
from agentcli.workspace.contract import Workspace

if TYPE_CHECKING:
    from agentcli.mcp.elicitation import Elicitor

__all__ = ["Session"]


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
        ask_user: AsksTheUser | None = None,
        elicitor: Elicitor | None = None,
        retry_base_delay: float = LoopConfig.retry_base_delay,
        workspace: Workspace | None = None,
        admission: Admission | None = None,
        transcripts: Path | None = None,
        record_checkpoints: bool = True,
        hidden: Sequence[Path] = (),
        shown: Sequence[Path] = (),
    ) -> None:
        """`prompter` asks about tool calls, `approve_outside` about `@` imports outside the
        project and `approve_mcp_server` about the project's MCP servers; without them (agentcli
        run) what would be asked is denied or left out. `ask_user` puts the model's questions
        (AskUserQuestion) and plans (ExitPlanMode) to the user; without it nobody can answer. `elicitor`
        answers an MCP server's requests for input from the user; without it (agentcli run)
        they are declined, with a notice.
        `approve_hooks` asks whether to run the checked-in settings' hooks (without it, they run
        only if the user trusted them already, see `hooks.trust`).
        `retry_base_delay` paces the loop's retries of a broken stream (tests make it short).
        A `model` given is the session's from then on: `close` closes it. A `workspace` given
        (rooted at `cwd`) is where the agent works; its owner closes it (else the session makes
        a local one). `admission` is what each model request waits on (a batch's shared rate
        limiter and budget); `transcripts`, the folder for the transcripts (a batch task's own);
        `record_checkpoints` False records none whatever the settings say, `hidden` are more
        paths the sandbox hides from commands and `shown` paths it lets them read wherever they
        are (all for a batch task, `compose`)."""
        self.parts: SessionParts = compose(
            options,
            cwd,
            on_event,
            about=self._hook_fields,
            approvals=Approvals(prompter, approve_outside, approve_hooks, approve_mcp_server, ask_user, elicitor),
            model=model,
            workspace=workspace,
            retry_base_delay=retry_base_delay,
            admission=admission,
            transcripts=transcripts,
            record_checkpoints=record_checkpoints,
            hidden=hidden,
            shown=shown,
        )
        self.model_choice = self.parts.first_model
        """The model(s) new conversations start with (`/model` changes it)."""
        self._ended = False
        self._notices_if_unknown(self.model_choice)
        loaded = self.parts.earlier
        self.conversation = Conversation(self.parts, self.model_choice, loaded, None)
        self.conversation.start("resume" if loaded is not None else "startup")

    # ------------------------------------------------------------------ the parts

    @property
    def options(self) -> SessionOptions:
        return self.parts.options

    @property
    def cwd(self) -> Path:
        return self.parts.cwd

    @property
    def settings(self) -> Settings:
        return self.parts.settings

    @property
    def workspace(self) -> Workspace:
        return self.parts.workspace

    @property
    def gate(self) -> Gate:
        return self.parts.gate

    @property
    def sandbox(self) -> SandboxStatus:
        return self.parts.sandbox

    @property
    def hooks(self) -> Hooks:
        return self.parts.hooks

    @property
    def mcp(self) -> SessionServers:
        return self.parts.mcp

    @property
    def mcp_content(self) -> McpContent:
        return self.parts.mcp_content

    @property
    def agent_types(self) -> AgentTypes:
        return self.parts.agent_types

    @property
    def provider(self) -> str:
        return self.parts.model.provider

    def loop_config(self, name: str) -> LoopConfig:
        return self.parts.loop_config(name)

    @property
    def model_name(self) -> str:
        """The model the next request goes to (with `opusplan`, the one for the mode the session is in)."""
        return self.model_choice.for_mode(self.gate.mode)

    # ------------------------------------------------------------------ the current conversation

    @property
    def id(self) -> str:
        return self.conversation.id

    @property
    def agent(self) -> Agent:
        return self.conversation.agent

    @property
    def context(self) -> SessionContext:
        return self.conversation.context

    @property
    def web(self) -> WebTools:
        return self.conversation.web

    @property
    def transcript(self) -> TranscriptWriter:
        return self.conversation.transcript

    @property
    def recorder(self) -> TranscriptRecorder:
        return self.conversation.recorder

    @property
    def subagents(self) -> SubagentRunner:
        return self.conversation.subagents

    @property
    def resumed(self) -> LoadedTranscript | None:
        """The transcript the current conversation continues, if it does."""
        return self.conversation.resumed

    @property
    def model_info(self) -> ModelInfo:
        return self.conversation.model_info

    @property
    def approved_plan(self) -> ApprovedPlan | None:
        """The plan the user last approved in this conversation (ExitPlanMode), kept across a resume
        and a compaction: what a compaction can carry into the new conversation."""
        return self.context.plans.latest

    @property
    def usage(self) -> Usage:
        return self.conversation.usage

    def cost_usd(self, usage: Usage) -> float:
        return self.conversation.cost_usd(usage)

    def send(self, text: str) -> RunResult:
        """One user message (a /command is expanded first) through the loop to the final answer."""
        return self.run(self.prepare(text))

    def prepare(self, text: str) -> PreparedMessage:
        return self.conversation.prepare(text)

    def tools_ready(self) -> None:
        self.conversation.tools_ready()

    def run(self, prepared: PreparedMessage) -> RunResult:
        return self.conversation.run(prepared)

    def record_interrupt(self) -> None:
        self.conversation.record_interrupt()

    def context_size(self) -> int:
        return self.conversation.context_size()

    def compact(self, instructions: str = "", *, auto: bool = False) -> Compacted:
        return self.conversation.compact(instructions, auto=auto)

    # ------------------------------------------------------------------ across conversations

    def set_model(self, name: str) -> None:
        """`/model NAME` for the next turn: a bare name keeps the provider, a prefixed one
        (`openai:gpt-5`) switches to it (the old client is closed, the new one made at the next
        request). The transcript records the change, so `--continue` goes on with it. UsageError
        for an unknown provider or one whose credentials are missing; then nothing changes."""
        provider, named = choose(name, self.provider)
        choice = choice_or_error(named, provider, self.settings)
        if provider != self.provider:
            if problem := credential_problem(provider, key_helper=self.settings.get(KEY_HELPER_SETTING)):
                raise UsageError(problem)
            self.parts.model.switch(provider)
        self.model_choice = choice
        self.conversation.use_model(provider, choice)
        self._notices_if_unknown(choice)

    def clear(self) -> None:
        """A new conversation: no messages, reminders sent afresh, a new session id and transcript."""
        self.conversation.end()
        self.hooks.run("SessionEnd", {"reason": "clear"}, "clear")
        self._begin(None, None, "clear")

    def resume(self, earlier: SessionInfo) -> None:
        """Go on with an earlier session of this project: its messages, system prompt and transcript."""
        loaded = load_transcript(earlier.path)
        writer = TranscriptWriter.existing(loaded.path, self.parts.notice)  # UsageError while another process has it
        self.conversation.end()
        self.hooks.run("SessionEnd", {"reason": "resume"}, "resume")
        self._begin(loaded, writer, "resume")

    # ------------------------------------------------------------------ rewinding (`agentcli.checkpoints.rewind`)

    @property
    def checkpoints(self) -> CheckpointStore:
        return self.parts.checkpoints

    def rewind_turns(self) -> list[TurnSummary]:
        """The current conversation's user turns, with the files each changed (empty before its
        transcript has any)."""
        if not self.transcript.kept:
            return []
        loaded = load_transcript(self.transcript.path)
        return summaries(self.checkpoints, self.id, loaded.turns)

    def rewind_conversation(self, turn: int, *, code: bool) -> None:
        """Take the conversation back to before user turn `turn` (`code`: the files went back too):
        the transcript records the rewind (so `--continue` goes on from there) and the conversation
        goes on from it as a resumed one would. UsageError for a turn no longer in the conversation."""
        if turn not in [t.number for t in load_transcript(self.transcript.path).turns]:
            raise UsageError(f"Turn {turn} is not in this conversation (compacted or rewound already).")
        self.transcript.write(rewind_record(turn, code=code, conversation=True))
        self.transcript.sync()
        path = self.transcript.path
        self.conversation.end()
        loaded = load_transcript(path)
        self._begin(loaded, TranscriptWriter.existing(path, self.parts.notice), "resume")

    def close(self, reason: str = "other") -> None:
        """Release the transcript (and its lock), the tool threads, the MCP servers, the model's
        connections and the workspace the session made; the session is not used after. Safe to call
        again. `reason` is the SessionEnd hooks' (`prompt_input_exit` when the user left the REPL
        at its prompt)."""
        self.conversation.end()
        if not self._ended:
            self._ended = True
            self.hooks.run("SessionEnd", {"reason": reason}, reason)
            self.hooks.close()
        self.parts.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _begin(self, loaded: LoadedTranscript | None, writer: TranscriptWriter | None, source: str) -> None:
        self.conversation = Conversation(self.parts, self.model_choice, loaded, writer)
        self.conversation.start(source)

    def _notices_if_unknown(self, choice: ModelChoice) -> None:
        for name in dict.fromkeys(filter(None, (choice.model, choice.plan_model))):
            if note := unknown_model_notice(name, self.settings.get(MODELS_SETTING)):
                self.parts.notice(note)

    def _hook_fields(self) -> JSON:
        """What every hook's input says about the session, as it is now."""
        return {
            "session_id": self.id,
            "transcript_path": str(self.transcript.path),
            "cwd": str(self.cwd),
            "permission_mode": self.gate.mode,
        }
