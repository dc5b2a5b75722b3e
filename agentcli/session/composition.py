"""Composing a session: its parts, built once from the settings files and the command line.

`compose` reads the settings (`settings.load_settings`) and the options (`SessionOptions`),
and builds what every conversation of the session shares (`SessionParts`): the workspace, the
hooks (the checked-in settings' only once trusted, `hooks.trust`), the permission gate (with
the front end's prompter, which runs the Notification hooks before each question), the enabled
plugins (`plugins.enabled`, whose parts join the others'), the MCP servers (started later,
`mcp.servers`), the model client (`SessionModel`, made at the first
request), the built-in tools, WebFetch's page cache, the agent types, which outside files and
skills are trusted, the loop's configuration for a model (`loop_config`), and the project's
checkpoints. Building starts nothing but the workspace it makes (entered last, closed with the
parts; the local one holds nothing, the sandboxed one a bubblewrap sandbox, `session.sandbox`):
no MCP server, no connection, no thread. So a batch runner may compose many sessions, each with a
workspace of its own that it made and will close (`compose(..., workspace=...)`), cheaply.

The conversation (`conversation.Conversation`) uses the parts; `session.Session` holds the
parts and the current conversation. Nothing here knows of either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.agents.sources import ToolList, builtin_source
from agentcli.agents.task import AgentTypes
from agentcli.asking import AsksTheUser
from agentcli.catalog import MODELS_SETTING, ModelInfo, model_info
from agentcli.checkpoints.config import CheckpointConfig
from agentcli.checkpoints.store import CheckpointStore
from agentcli.context.outside import AsksAboutOutsideFiles, OutsideFiles
from agentcli.context.paths import project_state_dir
from agentcli.contracts import JSON, Model, ModelRequest, ModelResponse, StreamListener
from agentcli.credentials import PASSTHROUGH_SETTING, passthrough_setting
from agentcli.errors import UsageError
from agentcli.events import EventSink, Notice, SerializedSink
from agentcli.hooks import HookOutcome, Hooks, NamesCall, load_hooks
from agentcli.hooks.trust import ENABLE_ALL_KEY as ENABLE_ALL_HOOKS_KEY
from agentcli.hooks.trust import TRUST_KEY, AsksAboutHooks, trusted_config
from agentcli.loop import LoopConfig
from agentcli.mcp.approval import AsksAboutProjectServer
from agentcli.mcp.content import McpContent
from agentcli.mcp.servers import SessionServers
from agentcli.model_aliases import (
    ALIASES_SETTING,
    ModelChoice,
    check_aliases_setting,
    resolve_alias,
    resolve_choice,
    unmapped,
)
from agentcli.model_settings import budget_usd, check_model_table, token_budget, tool_protocol
from agentcli.permissions.gate import Gate, build_gate
from agentcli.permissions.prompt import Answer, PermissionRequest, Prompter
from agentcli.permissions.request_hooks import request_fields
from agentcli.permissions.rules import split_rule_list
from agentcli.plugins.enabled import active_plugins
from agentcli.plugins.hooks import plugin_hooks
from agentcli.plugins.manifest import Plugin
from agentcli.providers import (
    DEFAULT_PROVIDER,
    KEY_HELPER_SETTING,
    MODEL_SETTING,
    PROVIDER_SETTING,
    PROVIDERS,
    Choice,
    ProviderSettings,
    choose,
    resolve,
)
from agentcli.providers.admission import Admission
from agentcli.providers.key_helper import KeyHelper, key_helper_of
from agentcli.providers.text_tools import ToolProtocol, with_tool_protocol
from agentcli.providers.timeouts import IDLE_SETTING, Timeouts
from agentcli.session.sandbox import SandboxStatus, session_workspace
from agentcli.sessions.autocompact import auto_compact_percent
from agentcli.sessions.store import LoadedTranscript, find_session, latest_session, load_transcript
from agentcli.settings import Settings, agentcli_home, load_settings, own_local_settings
from agentcli.settings_env import settings_environment
from agentcli.skills.notices import SkillNotices
from agentcli.skills.trust import SkillTrust
from agentcli.tools.web_fetch import Kept
from agentcli.web.cache import UrlCache
from agentcli.workspace.contract import Workspace
from agentcli.workspace.sandbox_settings import sandbox_settings

if TYPE_CHECKING:
    from agentcli.mcp.elicitation import Elicitor


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
    plugin_dirs: list[str] = field(default_factory=list)
    """`--plugin-dir` folders (absolute): plugins loaded for this session without being installed,
    trusted as an installed plugin is, and protected paths while it runs."""
    sandbox: bool | None = None
    """`--sandbox` (True) or `--no-sandbox` (False): whether the agent's commands run in the
    sandbox, over `sandbox.enabled`; None: the settings decide."""
    trust_project_hooks: bool = False
    """`--trust-project-hooks`: run the checked-in settings' hooks without asking (`hooks.trust`)."""


@dataclass(frozen=True)
class Approvals:
    """The front end's questions (the REPL's); without them (`agentcli run`) what would be asked
    is denied or left out."""

    prompter: Prompter | None = None
    """Asks about tool calls."""
    outside: AsksAboutOutsideFiles | None = None
    """Asks about `@` imports outside the project."""
    hooks: AsksAboutHooks | None = None
    """Asks whether to run the checked-in settings' hooks (without it they run only if the user
    trusted them already, see `hooks.trust`)."""
    mcp_server: AsksAboutProjectServer | None = None
    """Asks about the project's MCP servers."""
    user: AsksTheUser | None = None
    """Puts the model's questions (AskUserQuestion) and plans (ExitPlanMode) to the user; without
    it nobody can answer."""
    elicitor: Elicitor | None = None
    """Answers an MCP server's requests for input from the user; without it they are declined,
    with a notice."""


def split_rules(values: list[str]) -> list[str]:
    """Rules from repeated flags, each holding one or more rules (see `split_rule_list`)."""
    return [rule for value in values for rule in split_rule_list(value)]


def earlier_transcript(options: SessionOptions, cwd: Path) -> LoadedTranscript | None:
    """The transcript `--resume ID` or `--continue` names, loaded; None for a new conversation."""
    if options.resume:
        return load_transcript(find_session(cwd, options.resume).path)
    if options.continue_session and (latest := latest_session(cwd)) is not None:
        return load_transcript(latest.path)
    return None


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


class SessionModel:
    """The session's model client (a `contracts.Model`), the same object for its whole life:
    the provider's client is made at the first request (importing a provider is not on the
    start-up path) and speaks the session's tool protocol; `switch` goes to another provider."""

    def __init__(
        self,
        provider: str,
        protocol: ToolProtocol,
        native_tools: Callable[[str], bool],
        timeouts: Timeouts,
        given: Model | None = None,
        admission: Admission | None = None,
        key_helper: KeyHelper | None = None,
    ) -> None:
        """`given`: a client to use instead of resolving `provider`'s (tests' scripted model),
        closed with this one; `admission`: what each request waits on before it is sent;
        `key_helper`: the settings' `apiKeyHelper`, shared by every client made here."""
        self._provider = provider
        self._key_helper = key_helper
        self._protocol = protocol
        self._native_tools = native_tools
        self._timeouts = timeouts
        self._client = given
        self._admission = admission
        self._speaking: Model | None = None
        """`_client` speaking `_protocol` (itself for native)."""

    @property
    def provider(self) -> str:
        """The name of the provider requests go to (`agentcli.providers`)."""
        return self._provider

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        if self._admission is None:
            return self._current().stream(request, listener)
        with self._admission.admit():
            return self._current().stream(request, listener)

    def switch(self, provider: str) -> None:
        """Send requests to `provider` from now on: the old client is closed, the new one made at the next request."""
        if provider != self._provider:
            self.close()
            self._client = self._speaking = None
            self._provider = provider

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def own(self, provider: str) -> Model | None:
        """The provider's client itself, without the tool protocol, while requests go to
        `provider` (the web tools' own requests); None for another provider."""
        if provider != self._provider:
            return None
        if self._client is None:
            self._client = self.new(provider)
        return self._client

    def new(self, provider: str) -> Model:
        """A new client of `provider`, with the session's timeouts; the caller closes it."""
        return resolve(provider, ProviderSettings(self._timeouts, key_helper=self._key_helper))

    def _current(self) -> Model:
        if self._client is None:
            self._client = self.new(self._provider)
        if self._speaking is None:
            self._speaking = with_tool_protocol(self._client, self._protocol, self._native_tools)
        return self._speaking


@dataclass(frozen=True)
class SessionParts:
    """What the conversations of one session share (see the module's docstring)."""

    options: SessionOptions
    settings: Settings
    on_event: EventSink
    """The front end's sink, serialised: sub-agents emit from their own threads."""
    workspace: Workspace
    opened: ExitStack
    """What was opened here and is closed with the parts (the workspace, when made here)."""
    hooks: Hooks
    gate: Gate
    model: SessionModel
    first_model: ModelChoice
    """The model(s) named by the options, the settings or the resumed transcript."""
    earlier: LoadedTranscript | None
    """The transcript the options say to go on with (`--resume`, `--continue`); None: a new conversation."""
    builtins: ToolList
    skill_trust: SkillTrust
    """Kept across /clear and /resume: a skill the model changed stays untrusted in a new conversation."""
    skill_notices: SkillNotices
    """Kept across /clear: what was said about a skill file is not said again."""
    outside_files: OutsideFiles
    agent_types: AgentTypes
    """The types the Task tool may start; kept across /clear so a bad definition is reported once."""
    mcp: SessionServers
    """Nothing is started until `mcp.start()` (the front end, once it is up) or the first request."""
    mcp_content: McpContent
    web_pages: UrlCache[Kept]
    """WebFetch's pages, kept 15 minutes per URL across the session's conversations."""
    ask_user: AsksTheUser | None
    """The front end's, for AskUserQuestion and ExitPlanMode (None: nobody can answer)."""
    budget_usd: float | None
    token_budget: int
    transcripts: Path
    """The folder this session's transcripts go to (the project's state folder, or a batch task's)."""
    auto_compact_percent: float | None
    retry_base_delay: float
    checkpoints: CheckpointStore
    """The project's checkpoints (`agentcli.checkpoints`): recorded unless the `checkpoints` setting is
    false, and read by rewinds either way."""
    checkpoint_config: CheckpointConfig
    sandbox: SandboxStatus
    """Whether the agent's commands run in a sandbox, and what it allows (for /sandbox)."""
    plugins: tuple[Plugin, ...] = ()
    """The enabled plugins (`agentcli.plugins.enabled`): their skills, commands, agents, hooks and MCP servers."""

    @property
    def cwd(self) -> Path:
        return self.workspace.root

    def model_info(self, name: str) -> ModelInfo:
        """What the catalog and the `models` setting say about the model `name`."""
        return model_info(name, self.settings.get(MODELS_SETTING))

    def loop_config(self, name: str) -> LoopConfig:
        """The loop's configuration for the model `name` (its output limits and prices; the run's turn limit)."""
        info = self.model_info(name)
        return LoopConfig(
            model=name,
            max_output_tokens=min(32_000, info.max_output_tokens),
            model_max_output_tokens=info.max_output_tokens,
            max_turns=self.options.max_turns,
            retry_base_delay=self.retry_base_delay,
            prices=info,
        )

    def notice(self, text: str) -> None:
        self.on_event(Notice(text))

    def close(self) -> None:
        """Stop the MCP servers, the checkpoints' watcher, close the model's connections and (when
        made here) the workspace."""
        self.checkpoints.close()
        self.mcp.close()
        self.model.close()
        self.opened.close()


def compose(
    options: SessionOptions,
    cwd: Path,
    on_event: EventSink,
    *,
    about: Callable[[], JSON],
    approvals: Approvals = Approvals(),
    model: Model | None = None,
    workspace: Workspace | None = None,
    retry_base_delay: float = LoopConfig.retry_base_delay,
    admission: Admission | None = None,
    transcripts: Path | None = None,
    record_checkpoints: bool = True,
    hidden: Sequence[Path] = (),
    shown: Sequence[Path] = (),
) -> SessionParts:
    """The parts of a session at `cwd`. Raises UsageError (exit 2) on malformed settings or
    rules, or an earlier session (`--resume`) that is not there, before anything is sent.

    `about` gives the fields every hook's input carries about the session as it is now;
    `model`, a client to use instead of the provider's; `workspace`, where the agent works (its
    root `cwd`; the caller keeps and closes it), else a local one made here; `retry_base_delay`
    paces the loop's retries of a broken stream (tests make it short); `admission`, what every
    model request waits on (a batch's shared rate limiter and budget); `transcripts`, the folder
    the transcripts go to instead of the project's state folder (a batch task's own);
    `record_checkpoints` False: no checkpoints whatever the settings say (a batch task's
    workspace is thrown away); `hidden`, more paths the sandbox hides from commands, as
    `sandbox.filesystem.denyRead` does (a batch's output folder); `shown`, paths commands may
    read even where the sandbox hides what is around them, as `filesystem.allowRead` does (a
    batch's shared clones, which its tasks' repositories borrow objects from)."""
    sink: EventSink = SerializedSink(on_event)

    def notice(text: str) -> None:
        sink(Notice(text))

    settings = load_settings(cwd)
    passthrough = passthrough_setting(settings.get(PASSTHROUGH_SETTING), settings.sources.get(PASSTHROUGH_SETTING))
    plugins = active_plugins(settings, folders=[Path(folder) for folder in options.plugin_dirs])
    for text in plugins.notices:
        notice(text)
    hook_config = trusted_config(
        load_hooks(settings.raw).plus(plugin_hooks(plugins.plugins)),
        settings.get(TRUST_KEY),
        own_local_settings(cwd),
        approvals.hooks,
        notice,
        trusted=options.trust_project_hooks or settings.get(ENABLE_ALL_HOOKS_KEY) is True,
    )
    hooks = Hooks(hook_config, cwd, about=about, passthrough=passthrough, on_notice=notice)
    for text in hook_config.notices:  # hook events, types or fields agentcli skipped
        notice(text)

    def permission_request(request: PermissionRequest, names_call: NamesCall) -> HookOutcome:
        """Run the PermissionRequest hooks about a call the user would be asked about."""
        return hooks.run("PermissionRequest", request_fields(request), request.tool, names_call=names_call)

    prompter = approvals.prompter
    if prompter is not None and hook_config.matching("Notification", "permission_prompt"):
        prompter = _NotifyingPrompter(prompter, hooks)
    sandbox = sandbox_settings(settings, options.sandbox, notice)
    if plugins.protected:  # read-only to commands too, as the protected paths are
        sandbox = replace(sandbox, deny_write=(*sandbox.deny_write, *map(str, plugins.protected)))
    gate = build_gate(
        settings,
        cwd,
        options.permission_mode,
        split_rules(options.allowed_tools),
        split_rules(options.disallowed_tools),
        prompter=prompter,
        on_notice=notice,
        permission_hooks=permission_request if hook_config.matching("PermissionRequest") else None,
        auto_allow_sandboxed=sandbox.auto_allow,
        protected=plugins.protected,
    )
    for text in settings.notices:  # a settings file skipped (a FIFO), a key the repository may not set
        notice(text)
    for text in settings_environment(settings).notices:  # `env` entries skipped as agentcli started
        notice(text)
    check_model_table(settings)
    check_aliases_setting(settings.get(ALIASES_SETTING), settings.sources.get(ALIASES_SETTING))
    protocol = tool_protocol(options.tool_protocol, settings)
    budget = budget_usd(options.max_budget_usd, settings)
    tokens = token_budget(options.max_budget_tokens, settings)
    compact_percent = auto_compact_percent(settings)
    checkpoint_config = CheckpointConfig.from_settings(settings)
    if not record_checkpoints:
        checkpoint_config = replace(checkpoint_config, enabled=False)
    timeouts = Timeouts.from_setting(settings.get(IDLE_SETTING), settings.sources.get(IDLE_SETTING))
    outside_files = OutsideFiles.for_session(
        settings, cwd, save_to=gate.local_settings, ask=approvals.outside, on_notice=notice
    )
    agent_types = AgentTypes(cwd, agentcli_home(), notice, plugins.plugins)
    mcp = SessionServers(
        settings,
        cwd,
        [Path(file) for file in options.mcp_config],
        options.strict_mcp_config,
        mode=lambda: gate.mode,
        local_settings=gate.local_settings,
        ask=approvals.mcp_server,
        elicitor=approvals.elicitor,
        on_notice=notice,
        plugins=plugins.plugins,
    )
    earlier = earlier_transcript(options, cwd)
    provider, named = choose_provider(options, settings, earlier)
    first_model = choice_or_error(named, provider, settings)

    def native_tools(name: str) -> bool:
        return model_info(name, settings.get(MODELS_SETTING)).native_tools

    opened = ExitStack()
    more_folders = tuple(str(folder) for folder in gate.more_folders)  # additionalDirectories: writable as the project
    sandbox = replace(
        sandbox,
        allow_write=(*sandbox.allow_write, *more_folders),
        deny_read=(*sandbox.deny_read, *(str(path) for path in hidden)),
        allow_read=(*sandbox.allow_read, *(str(path) for path in shown)),
    )
    status = SandboxStatus(sandbox)
    if workspace is None:  # made last, once nothing else can fail; entered (a sandbox starts so), closed with the parts
        try:
            workspace, status = session_workspace(
                cwd, sandbox, opened, passthrough=passthrough, ask_host=gate.ask_about_host, notice=notice
            )
        except BaseException:
            opened.close()
            raise
    return SessionParts(
        options=options,
        settings=settings,
        on_event=sink,
        workspace=workspace,
        opened=opened,
        hooks=hooks,
        gate=gate,
        model=SessionModel(
            provider,
            protocol,
            native_tools,
            timeouts,
            model,
            admission,
            key_helper_of(settings.get(KEY_HELPER_SETTING), settings.sources.get(KEY_HELPER_SETTING), cwd, notice),
        ),
        first_model=first_model,
        earlier=earlier,
        builtins=builtin_source(unsandboxed_commands=status.active and sandbox.allow_unsandboxed),
        skill_trust=SkillTrust(),
        skill_notices=SkillNotices(notice),
        outside_files=outside_files,
        agent_types=agent_types,
        mcp=mcp,
        mcp_content=McpContent(mcp.manager, mcp.timeout_s),
        web_pages=UrlCache(),
        ask_user=approvals.user,
        budget_usd=budget,
        token_budget=tokens,
        transcripts=transcripts or project_state_dir(cwd),
        auto_compact_percent=compact_percent,
        retry_base_delay=retry_base_delay,
        checkpoints=checkpoint_config.store(cwd, agentcli_home()),
        checkpoint_config=checkpoint_config,
        sandbox=status,
        plugins=plugins.plugins,
    )


def resolved_model(name: str, provider: str, settings: Settings) -> str | None:
    """The model `name` stands for with `provider` (an alias resolved, `agentcli.model_aliases`);
    None for an alias the provider has no model for."""
    return resolve_alias(name, provider, settings.get(ALIASES_SETTING), default_model=_default_model(provider))


def choice_or_error(name: str, provider: str, settings: Settings) -> ModelChoice:
    """`name` resolved for `provider` (`opusplan`: a model for plan mode and one for the rest); a
    UsageError when it is, or names, an alias with no model there."""
    chosen = resolve_choice(name, provider, settings.get(ALIASES_SETTING), default_model=_default_model(provider))
    if isinstance(chosen, str):
        raise UsageError(unmapped(chosen, provider))
    return chosen


def _default_model(provider: str) -> str | None:
    return PROVIDERS[provider].default_model if provider in PROVIDERS else None


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
