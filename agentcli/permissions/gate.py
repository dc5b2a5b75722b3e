"""The permission gate: the one place that decides whether a tool call runs.

deny rules → plan mode → ask rules → the sandbox → protected paths → allow rules and the mode → ask the user (through
the front end's prompter) or, with no prompter, deny with a message naming what would
allow the call. Tools never check permissions themselves.

A PreToolUse hook's word comes on the call's context (`ToolContext.hook_permission`; its deny
never reaches the gate): `ask` asks even where rules and mode allow; `allow` answers in place of
the user, but never past a deny or ask rule, plan mode, a protected path or a command leaving
the sandbox. PermissionRequest hooks (`request_hooks`) run when the user would be asked (or,
with nobody to ask, before the denial), and may answer in the user's place within the same bounds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from agentcli.contracts import JSON, Decision, PermissionGate, PreviewsChange, Tool, ToolContext
from agentcli.errors import UsageError
from agentcli.permissions import messages
from agentcli.permissions.evaluate import Call, Verdict, describe_call, evaluate, hosts_named, rule_catches
from agentcli.permissions.modes import MODES, Mode, check_mode, next_mode
from agentcli.permissions.paths import real_path
from agentcli.permissions.persist import add_allow_rules, add_allowed_domain
from agentcli.permissions.prompt import Answer, PermissionRequest, Prompter
from agentcli.permissions.request_hooks import PermissionHooks, Update, read_update
from agentcli.permissions.rules import SESSION, Rule, RuleError, RuleSource, parse_rule
from agentcli.permissions.sources import RuleSet, additional_directories, bypass_disabled_by, load_rules, resolve_mode
from agentcli.permissions.suggest import Suggestion, suggest
from agentcli.settings import Settings, own_local_settings

__all__ = ["MODES", "AgentGate", "Gate", "build_gate"]

Notify = Callable[[str], None]


class Gate:
    """Implements `contracts.PermissionGate`. `mode` may be changed at any time (Shift-Tab)."""

    def __init__(
        self,
        rules: RuleSet | None = None,
        mode: str = "default",
        *,
        prompter: Prompter | None = None,
        local_settings: Path | None = None,
        on_notice: Notify | None = None,
        permission_hooks: PermissionHooks | None = None,
        more_folders: Sequence[Path] = (),
        bypass_disabled: bool = False,
        auto_allow_sandboxed: bool = False,
        protected: Sequence[Path] = (),
    ) -> None:
        self.rules = rules or RuleSet()
        self.protected = tuple(real_path(folder) for folder in protected)
        """Folders protected for this session besides the usual ones (`--plugin-dir` plugins)."""
        self.more_folders = tuple(real_path(folder) for folder in more_folders)
        """Other working folders (`additionalDirectories`): judged as the project is."""
        self.bypass_disabled = bypass_disabled
        """`disableBypassPermissionsMode`: nothing may switch to bypassPermissions (a sub-agent's mode)."""
        self.permission_hooks = permission_hooks
        """Run before each question (and before a denial for want of anyone to ask)."""
        self.auto_allow_sandboxed = auto_allow_sandboxed
        """`sandbox.autoAllowBashIfSandboxed`: a command the sandbox confines runs without a question
        unless a deny or ask rule catches it."""
        self._mode: Mode = check_mode(mode)
        self.prompter = prompter
        """None means non-interactive: anything that would be asked is denied."""
        self.local_settings = local_settings
        """Where "don't ask again" Bash, MCP and WebFetch domain rules are saved (None: keep them for
        the session only)."""
        self.on_notice = on_notice
        self._lock = threading.RLock()

    @property
    def mode(self) -> Mode:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        self._mode = check_mode(value)

    def cycle_mode(self) -> Mode:
        """Switch to the next mode of the Shift-Tab cycle and return it."""
        self._mode = next_mode(self._mode)
        return self._mode

    def check(self, tool: Tool, tool_input: JSON, ctx: ToolContext) -> Decision:
        """An allowed call's Decision carries the real paths judged, which the tool must use."""
        return self.check_granting((), tool, tool_input, ctx)

    def check_granting(
        self, granted: Sequence[Rule], tool: Tool, tool_input: JSON, ctx: ToolContext, mode: Mode | None = None
    ) -> Decision:
        """`check`, with the allow rules `granted` in force for this one call, and in `mode` where
        the session allows it (`mode_for`): an `AgentGate`'s."""
        with self._lock:  # one question at a time, in call order, also across sub-agents
            try:
                judged = self._judge(tool, tool_input, ctx, granted, self.mode_for(mode))
            except (OSError, ValueError, RuntimeError) as error:  # e.g. a path too long or a symlink loop
                why = messages.one_line(getattr(error, "strerror", None) or str(error))
                return Decision(
                    False, f"Permission denied: the paths of this {tool.name} call cannot be checked ({why})."
                )
            except Exception as error:  # the tool could not declare what the call does: fail closed
                why = messages.one_line(f"{type(error).__name__}: {error}")
                return Decision(
                    False, f"Permission denied: the {tool.name} tool could not say what this call would do ({why})."
                )
            if isinstance(judged, Decision):
                return judged
            if ctx.cancel.is_set():  # queued behind a question while the user interrupted
                return Decision(False, messages.interrupted(judged.call))
            if (answered := self._hooks_answer(judged)) is not None:
                return answered
            if judged.unasked is not None:
                return judged.unasked
            assert self.prompter is not None
            return self._apply(self.prompter(judged.request), judged.call, judged.checked)

    def _hooks_answer(self, question: _Question) -> Decision | None:
        """What the PermissionRequest hooks answer in the user's place; None: no answer."""
        if self.permission_hooks is None:
            return None
        call, verdict = question.call, question.verdict
        said = self.permission_hooks(question.request, lambda rule: rule_catches(rule, call))
        if said.interrupt:
            self.notify("A PermissionRequest hook asked to interrupt the agent; agentcli only denies the call.")
        if said.behavior == "deny":
            return Decision(False, messages.hook_denied(call, said.message))
        if said.behavior != "allow" or verdict.rule is not None or verdict.protected or verdict.leaves_sandbox:
            return None  # a deny or ask rule, a protected path, a command leaving the sandbox: still asked about
        if said.rewrites_input:
            self.notify(
                "A PermissionRequest hook allowed a call with a changed input, which agentcli does not apply: "
                "asking about the call as it is."
            )
            return None
        for entry in said.updated_permissions:
            self._update(read_update(entry))
        return _allowed(call, question.checked, self.rules)

    def _update(self, update: Update) -> None:
        """Apply a PermissionRequest hook's `updatedPermissions` entry."""
        if update.unapplied:
            self.notify(f"Not applied from a PermissionRequest hook: {update.unapplied}.")
        if update.mode is not None:
            self._mode = update.mode
        if update.lasting:  # saved as the user's "don't ask again" answers are
            self.remember([text for behavior, text in update.rules if behavior == "allow"])
        for behavior, text in update.rules:
            if behavior == "allow" and update.lasting:
                continue
            try:
                self.rules.add(parse_rule(text, behavior, SESSION))
            except RuleError as error:
                self.notify(f'Not added from a PermissionRequest hook: "{text}" ({error}).')

    def mode_for(self, wanted: Mode | None) -> Mode:
        """The mode a sub-agent's calls are judged in: the one its definition asks for while the
        session is in default mode (bypassPermissions not once it is turned off), else the session's."""
        if wanted is None or self._mode != "default":
            return self._mode
        return self._mode if wanted == "bypassPermissions" and self.bypass_disabled else wanted

    def _judge(
        self, tool: Tool, tool_input: JSON, ctx: ToolContext, granted: Sequence[Rule], mode: Mode
    ) -> Decision | _Question:
        """The decision, or the question to ask. Describing paths may raise OSError or RuntimeError."""
        call = describe_call(tool, tool_input, ctx, self.protected)  # resolves each path once: the tool is handed these
        if self.more_folders:
            call = replace(call, more_folders=self.more_folders)
        checked = dict(zip(call.paths, call.real_paths, strict=True))
        rules = RuleSet([*self.rules.rules, *granted]) if granted else self.rules
        verdict = evaluate(call, rules, mode, auto_allow_sandboxed=self.auto_allow_sandboxed)
        hook = ctx.hook_permission
        hook_asks = hook is not None and hook.decision == "ask"
        if verdict.outcome == "allow" and not hook_asks:
            return _allowed(call, checked, rules)
        if verdict.rule is not None and verdict.outcome == "deny":
            return Decision(False, messages.denied_by_rule(call, verdict.rule, verdict.unverified))
        if verdict.plan:
            return Decision(False, messages.plan_refusal(call, self.prompter is not None))
        hook_may_answer = verdict.rule is None and not verdict.protected and not verdict.leaves_sandbox
        if hook is not None and hook.decision == "allow" and hook_may_answer:
            return _allowed(call, checked, rules)
        suggestion = None if verdict.outcome == "allow" else suggest(call, verdict)
        unasked = None
        if self.prompter is None or mode == "dontAsk":
            nobody = messages.NON_INTERACTIVE if self.prompter is None else messages.DONT_ASK
            if verdict.outcome == "allow":
                unasked = Decision(False, messages.hook_asks_non_interactive(call, hook.reason if hook else ""))
            else:
                unasked = Decision(False, messages.non_interactive(call, verdict, suggestion, nobody))
            if self.permission_hooks is None:
                return unasked
        request = self._request(call, verdict, suggestion, tool, replace(ctx, checked_paths=checked))
        return _Question(call, checked, request, verdict, unasked)

    def remember(self, rule_texts: Sequence[str]) -> list[Rule]:
        """Allow `rule_texts` from now on; Bash, MCP and WebFetch domain rules are also saved to
        local settings (and are listed as coming from that file)."""
        parsed: list[Rule] = []
        for text in rule_texts:
            try:
                parsed.append(parse_rule(text, "allow", SESSION))
            except RuleError as error:
                self.notify(f'Not remembered: "{text}" is not a valid rule ({error}).')
        lasting = [r for r in parsed if r.tool == "Bash" or r.tool.startswith("mcp__") or r.domain is not None]
        if lasting and self.local_settings is not None:
            texts = ", ".join(r.text for r in lasting)
            try:
                if add_allow_rules(self.local_settings, [r.text for r in lasting]):
                    self.notify(f"Saved {texts} to {self.local_settings}.")
                saved = RuleSource("local", str(self.local_settings))
                parsed = [replace(r, source=saved) if r in lasting else r for r in parsed]
            except (OSError, UsageError) as error:
                self.notify(f"Could not save {texts} to {self.local_settings}: {error}")
        for rule in parsed:
            self.rules.add(rule)
        return parsed

    @contextmanager
    def temporary_allow(self, rule_texts: Sequence[str], label: str = "a skill") -> Iterator[None]:
        """Treat `rule_texts` as allow rules until the block exits (a skill's allowed-tools).

        Deny and ask rules still win. Invalid rules are skipped with a notice.
        """
        with _held(self.rules, self._lock, rule_texts, label, self.notify):
            yield

    def _apply(self, answer: Answer, call: Call, checked: dict[Path, Path]) -> Decision:
        if answer.choice == "no":
            return Decision(False, messages.user_denied(call, answer.reason))
        if answer.choice == "always":
            self.remember(answer.rules)
        return _allowed(call, checked, self.rules)

    def _request(
        self, call: Call, verdict: Verdict, suggestion: Suggestion | None, tool: Tool, ctx: ToolContext
    ) -> PermissionRequest:
        diff, note = None, ""
        if call.kind == "bash":
            title = "Bash command, outside the sandbox" if verdict.leaves_sandbox else "Bash command"
            subject = call.command
            description = call.tool_input.get("description")
            note = description if isinstance(description, str) else ""
        elif call.paths:
            title = f"{call.tool} file" if call.kind == "edit" else call.tool
            shown = [call.shown(p) for p in call.real_paths]
            subject = ", ".join(shown)
            if call.kind == "edit" and isinstance(tool, PreviewsChange):
                diff = tool.preview(call.tool_input, ctx)
                note = "" if diff else "No preview: as written, this change would fail or change nothing."
        elif call.kind == "mcp":
            title, subject, note = "MCP tool", call.tool, messages.mcp_call(call)
        elif call.hosts:
            title, subject, note = _network_question(call)
        else:
            title, subject = "Tool", call.tool
        hook = ctx.hook_permission
        reason = messages.ask_reason(call, verdict, suggestion)
        if hook is not None and hook.decision == "ask":
            reason = f"A PreToolUse hook asks: {hook.reason}" if hook.reason else "A PreToolUse hook asks you."
        if hook is not None and hook.changed_input:
            note = "\n".join(part for part in (note, "A PreToolUse hook changed this call's input.") if part)
        return PermissionRequest(
            tool=call.tool,
            tool_input=call.tool_input,
            kind=call.kind,
            title=title,
            subject=subject,
            reason=reason,
            suggestion=suggestion,
            diff=diff,
            outside=bool(call.outside),
            note=note,
            agent=ctx.agent_label,
            cancel=ctx.cancel,
        )

    def ask_about_host(self, host: str, port: int) -> bool | None:
        """Whether sandboxed commands may reach `host` (the sandbox's proxy asks the first time a
        command needs a host no setting names; `workspace.network.AsksAboutHost`). Yes in
        bypassPermissions; None when nobody can be asked; "don't ask again" saves the host to
        sandbox.network.allowedDomains in the local settings."""
        if self._mode == "bypassPermissions":
            return True
        if self.prompter is None:
            return None
        saved = Suggestion((host,), "local" if self.local_settings is not None else "session")
        request = PermissionRequest(
            tool="Network",
            tool_input={"host": host, "port": port},
            kind="network",
            title="Network access from the sandbox",
            subject=f"{host}:{port}",
            reason=(
                f"A sandboxed command wants to reach {host}, which sandbox.network.allowedDomains does not list. "
                "A yes lets every sandboxed command of this session reach it."
            ),
            suggestion=saved,
        )
        with self._lock:
            answer = self.prompter(request)
        if answer.choice == "always" and self.local_settings is not None:
            try:
                if add_allowed_domain(self.local_settings, host):
                    self.notify(f"Saved {host} to sandbox.network.allowedDomains in {self.local_settings}.")
            except (OSError, UsageError) as error:
                self.notify(f"Could not save {host} to {self.local_settings} ({error}); allowed for this session.")
        return answer.choice != "no"

    def notify(self, text: str) -> None:
        """Tell the user `text` (a rule not saved or ignored), when someone listens."""
        if self.on_notice is not None:
            self.on_notice(text)


@dataclass(frozen=True)
class _Question:
    """A call the user would be asked about."""

    call: Call
    checked: dict[Path, Path]
    request: PermissionRequest
    verdict: Verdict
    unasked: Decision | None
    """With nobody to ask: the denial, unless a PermissionRequest hook answers."""


def _network_question(call: Call) -> tuple[str, str, str]:
    """The title, subject and note of a question about a call that contacts hosts (WebFetch: its
    URL; WebSearch: its query)."""
    url, query = call.tool_input.get("url"), call.tool_input.get("query")
    if isinstance(url, str):
        return "Fetch from the web", ", ".join(call.hosts), f"URL: {messages.one_line(url)}"
    if isinstance(query, str):
        return "Search the web", ", ".join(call.hosts), f"Query: {messages.one_line(query)}"
    return call.tool, ", ".join(call.hosts), ""


def _allowed(call: Call, checked: dict[Path, Path], rules: RuleSet) -> Decision:
    """The decision letting `call` run: the real paths judged, the hosts a rule names."""
    return Decision(True, checked_paths=checked, hosts_named=hosts_named(call, rules), access=call.access)


class AgentGate:
    """One sub-agent's view of the session's gate: the same rules, mode and questions, plus allow
    rules granted to this agent alone (`temporary_allow`: the allowed-tools of the skills it
    runs). They are handed to `Gate.check_granting` with each of its calls, inside the gate's
    lock, so no other agent's call (its parent's, a sibling's) is ever judged by them; they end
    with the block, at the latest when the sub-agent does (its gate is dropped with it).

    Over a gate that takes no granted rules (a test's), its grants are never in force."""

    def __init__(self, gate: PermissionGate, mode: Mode | None = None) -> None:
        """`mode`: the one its definition asks for (`permissionMode`; see `Gate.mode_for`)."""
        self.gate = gate
        self.mode = mode
        self.granted = RuleSet()
        self._lock = threading.Lock()

    def check(self, tool: Tool, tool_input: JSON, ctx: ToolContext) -> Decision:
        if not isinstance(self.gate, Gate):
            return self.gate.check(tool, tool_input, ctx)
        with self._lock:
            granted = tuple(self.granted.rules)
        return self.gate.check_granting(granted, tool, tool_input, ctx, self.mode)

    @contextmanager
    def temporary_allow(self, rule_texts: Sequence[str], label: str = "a skill") -> Iterator[None]:
        """Like `Gate.temporary_allow`, for this agent's calls only."""
        notify = self.gate.notify if isinstance(self.gate, Gate) else _ignore
        with _held(self.granted, self._lock, rule_texts, label, notify):
            yield


@contextmanager
def _held(
    rule_set: RuleSet, lock: threading.Lock | threading.RLock, rule_texts: Sequence[str], label: str, notify: Notify
) -> Iterator[None]:
    """`rule_texts` as allow rules of `rule_set` until the block exits; invalid ones skipped with a notice."""
    source = RuleSource("session", label)
    added: list[Rule] = []
    with lock:
        for text in rule_texts:
            try:
                rule = parse_rule(text, "allow", source)
            except RuleError as error:
                notify(f'Ignored the rule "{text}" from {label}: {error}.')
                continue
            if rule_set.add(rule):
                added.append(rule)
    try:
        yield
    finally:
        with lock:
            for rule in added:
                rule_set.remove(rule)


def _ignore(text: str) -> None:
    return None


def build_gate(
    settings: Settings,
    cwd: Path,
    mode_flag: str | None = None,
    allowed: Sequence[str] = (),
    disallowed: Sequence[str] = (),
    prompter: Prompter | None = None,
    on_notice: Notify | None = None,
    permission_hooks: PermissionHooks | None = None,
    auto_allow_sandboxed: bool = False,
    protected: Sequence[Path] = (),
) -> Gate:
    """The gate for a session: rules from the three settings files and the flags, and the mode;
    `protected`, more folders that are protected paths while it runs (`--plugin-dir`'s).

    Raises UsageError (exit 2) naming the file and the rule when anything is malformed.
    """
    rules = load_rules(settings, allowed, disallowed)
    mode = resolve_mode(mode_flag, settings)
    folders = additional_directories(settings, cwd)
    return Gate(
        rules,
        mode,
        prompter=prompter,
        local_settings=own_local_settings(cwd),
        on_notice=on_notice,
        permission_hooks=permission_hooks,
        more_folders=folders,
        bypass_disabled=bypass_disabled_by(settings) is not None,
        auto_allow_sandboxed=auto_allow_sandboxed,
        protected=protected,
    )
