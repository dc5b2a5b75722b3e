"""Hooks: the user's commands run at points of the agent's life, Claude Code-compatible.

`config` reads them from the settings files, `runner` runs an event's matching commands at
once, `decisions` reads what they said, `background` runs the `async` ones, `trust` decides
whether the checked-in file's hooks run. `Hooks` is what the rest of agentcli calls:
`hooks.run(event, fields, subject)` returns the `HookOutcome`, after telling the user about
hooks that failed. What an outcome does is the caller's business, per event:

- PreToolUse (executor, gate): exit 2 or `deny` → the call is not run, the reason is its
  error result; `ask` → the user is asked even where a rule allows; `allow` → not asked,
  unless a deny or ask rule or a protected path says otherwise; `updatedInput` → the call
  runs with it, validated again.
- PermissionRequest (gate): when the user would be asked (or, in `run`, the call denied):
  `allow` answers yes in the user's place (never past a deny or ask rule), `deny` answers no
  with its `message` (`interrupt` stops the agent), `updatedPermissions` adds rules or sets
  the mode; with no decision the user is asked as before.
- PostToolUse / PostToolUseFailure (executor): the reason and context go to the model with
  the result.
- UserPromptSubmit (session): exit 2 → nothing is sent, the reason is shown; stdout and
  context → a `<system-reminder>` in that message.
- UserPromptExpansion (session): before a `/command` the user typed is expanded (a skill, a
  command file, an MCP prompt): exit 2 or `block` → it is not expanded and nothing is sent;
  context → a `<system-reminder>` in that message.
- Stop / SubagentStop (loop): exit 2, `block` or `additionalContext` → the model goes on with
  it, at most `loop.MAX_STOP_HOOK_CONTINUATIONS` times in a row.
- SubagentStart (sub-agent runner): context → a reminder in the sub-agent's first message.
- SessionStart (session): stdout and context → a reminder in the next user message.
- PreCompact (session): exit 2 or `block` → no compaction; stdout and context → instructions
  for the summary, after the user's `/compact` ones (Claude Code's custom instructions).
- SessionEnd, PostCompact, StopFailure, Notification, InstructionsLoaded (session, once per
  instruction file sent to the model: `context.instruction_loads`): run for their effects.
- `continue: false` anywhere ends the agent's turn with the `stopReason`.

A hook with `async: true` runs in the background (`background`): the call returns NOTHING for
it, and what it says reaches the model later (`take_background`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from agentcli.contracts import JSON
from agentcli.hooks.background import BackgroundHooks
from agentcli.hooks.config import EVENTS, TOOL_EVENTS, HookCommand, HookConfig, load_hooks, matcher_matches
from agentcli.hooks.decisions import HookOutcome
from agentcli.hooks.runner import run_hooks
from agentcli.permissions.rules import Rule

__all__ = ["EVENTS", "NO_HOOKS", "HookCommand", "HookConfig", "HookOutcome", "Hooks", "load_hooks", "matcher_matches"]

NOTHING = HookOutcome()

NamesCall = Callable[[Rule], bool]
"""Whether a hook's `if` rule names the tool call an event is about."""


class Hooks:
    """The hooks of one agent: the session's, shared by its sub-agents (`for_agent`)."""

    def __init__(
        self,
        config: HookConfig | None = None,
        project: Path | None = None,
        *,
        about: Callable[[], JSON] = dict,
        passthrough: frozenset[str] = frozenset(),
        on_notice: Callable[[str], None] = lambda text: None,
        agent_type: str | None = None,
    ) -> None:
        """`about` gives the fields every event's input carries (session_id, transcript_path,
        cwd, permission_mode) as they are now; `on_notice` tells the user about failed hooks."""
        self.agent_type = agent_type
        """A sub-agent's type (its SubagentStop hooks' matchers match it); None for the session's agent."""
        self.config = config or HookConfig()
        self.project = project or Path.cwd()
        self._about = about
        self._passthrough = passthrough
        self._on_notice = on_notice
        self._background: BackgroundHooks | None = None

    def run(
        self,
        event: str,
        fields: JSON,
        subject: str | None = None,
        *,
        names_call: NamesCall | None = None,
        also: tuple[str, ...] = (),
    ) -> HookOutcome:
        """Run `event`'s hooks matching `subject` (or another name it goes by, `also`) with the
        common fields and `fields` on stdin. On a tool event `names_call` says whether a hook's
        `if` names the call (without it, a hook with an `if` does not run)."""
        from agentcli.hooks.decisions import decide

        hooks = [hook for hook in self.config.matching(event, subject, also) if _applies(hook, event, names_call)]
        guards = [guard for guard in self.config.guarding(event, subject, also) if _applies(guard, event, names_call)]
        if not hooks and not guards:
            return NOTHING
        outcome = NOTHING
        payload = {**self._about(), "hook_event_name": event, **fields}
        if background := [hook for hook in hooks if hook.background]:
            self._background_hooks().start(event, background, payload)
        if foreground := [hook for hook in hooks if not hook.background]:
            outcome = decide(event, run_hooks(foreground, payload, self.project, self._passthrough))
            for warning in outcome.warnings:
                self._on_notice(warning)
        return _guarded(outcome, guards) if guards else outcome

    def for_agent(self, agent_type: str, fields: JSON, own: HookConfig | None = None) -> Hooks:
        """These hooks for a sub-agent of `agent_type`: every input also carries `fields`
        (agent_id, agent_type, …), `own` hooks (its definition's) run too, and its background
        hooks are its own (`close` them when it ends)."""
        return Hooks(
            self.config.plus(own) if own else self.config,
            self.project,
            about=lambda: {**self._about(), **fields},
            passthrough=self._passthrough,
            on_notice=self._on_notice,
            agent_type=agent_type,
        )

    def take_background(self) -> list[str]:
        """What background hooks that finished since the last call said, for the model."""
        return self._background.take() if self._background is not None else []

    def settle(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the background hooks to finish (what they say is kept
        for `take_background`); True when none is running."""
        return self._background.wait(timeout) if self._background is not None else True

    def close(self) -> None:
        """Stop the background hooks still running."""
        if self._background is not None:
            self._background.close()

    def _background_hooks(self) -> BackgroundHooks:
        if self._background is None:
            self._background = BackgroundHooks(self.project, self._passthrough, self._on_notice)
        return self._background


def _applies(hook: HookCommand, event: str, names_call: NamesCall | None) -> bool:
    """A hook without `if` always runs; with one, only on a tool event and for a call it names."""
    if hook.condition is None:
        return True
    return event in TOOL_EVENTS and names_call is not None and names_call(hook.condition)


def _guarded(outcome: HookOutcome, guards: list[HookCommand]) -> HookOutcome:
    """`outcome` asking at least (a hook's deny still wins), for the entries that could not be used."""
    if outcome.permission == "deny":
        return outcome
    unread = "; ".join(
        f"{guard.unread} in {guard.source}{f' ({guard.origin})' if guard.origin else ''}" for guard in guards
    )
    reason = f"A PreToolUse hook agentcli could not use might have refused this call: {unread}."
    return replace(
        outcome,
        permission="ask",
        permission_reason="\n".join(part for part in (outcome.permission_reason, reason) if part),
    )


NO_HOOKS = Hooks()
"""No hooks configured: every event goes on at once."""
