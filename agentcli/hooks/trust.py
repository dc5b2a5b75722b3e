"""Trusting the hooks of the checked-in settings file (`.agentcli/settings.json`).

Hooks run programs. The user's own files (user and local settings) are trusted as they are;
the project's file comes with the repository, so its hooks run only once the user trusts
them, in one of three ways:

- in the REPL, the first session asks once whether to run them, and the answer is remembered
  in `.agentcli/settings.local.json` under `TRUST_KEY` as the digest of the hooks it was given
  for: when they change, it is asked again;
- `ENABLE_ALL_KEY: true` in the user's own settings (`$AGENTCLI_HOME/settings.json`: every
  project; `.agentcli/settings.local.json`: this one);
- `--trust-project-hooks` on the command line, for that run.

`agentcli run` has nobody to ask: without one of these (or with a remembered "no") it leaves
the checked-in hooks out, with one notice saying how to trust them. (Claude Code's `-p` runs
them unasked; a repository cloned and run with `agentcli run "summarise this"` must not run its
own SessionStart hook, nor approve its own tool calls with a PreToolUse `allow`.) The project's
own file can never mark itself trusted (both keys are among `settings.OWN_KEYS`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentcli.errors import UsageError
from agentcli.hooks.config import HookCommand, HookConfig
from agentcli.permissions.persist import update_settings
from agentcli.setting_keys import setting

TRUST_KEY = setting("projectHooksTrust")
"""`{"sha256": <digest of the project's hooks>, "trusted": true|false}`."""
ENABLE_ALL_KEY = setting("enableAllProjectHooks")
"""`true`: the checked-in settings' hooks run, whatever they are."""
TRUST_FLAG = "--trust-project-hooks"
CHECKED_IN = "project"

AsksAboutHooks = Callable[[Sequence[HookCommand]], bool]
"""Shows the project's hooks to the user and returns whether to run them."""


def hooks_digest(hooks: Sequence[HookCommand]) -> str:
    described = [h.described for h in hooks]
    return hashlib.sha256(json.dumps(described).encode()).hexdigest()


def remembered(value: Any, digest: str) -> bool | None:
    """The remembered answer for hooks of `digest`; None when there is none (or they changed)."""
    if isinstance(value, dict) and value.get("sha256") == digest and isinstance(value.get("trusted"), bool):
        return bool(value["trusted"])
    return None


def remember(local_settings: Path, digest: str, trusted: bool) -> str | None:
    """Save the answer; a message for the user when it could not be saved."""

    def change(data: dict[str, Any]) -> None:
        data[TRUST_KEY] = {"sha256": digest, "trusted": trusted}

    try:
        update_settings(local_settings, change)
    except (OSError, UsageError) as error:
        return f"Could not remember the answer about the project's hooks in {local_settings}: {error}"
    return None


def trusted_config(
    config: HookConfig,
    remembered_value: Any,
    local_settings: Path,
    ask: AsksAboutHooks | None,
    notify: Callable[[str], None],
    *,
    trusted: bool = False,
) -> HookConfig:
    """`config` without the checked-in file's hooks unless the user trusts them: `trusted` (the
    flag, or `ENABLE_ALL_KEY` in their own settings), else the answer remembered for these very
    hooks, else the answer to `ask` (saved to `local_settings`). With nobody to ask (`agentcli
    run`) and no answer, they are left out, with one notice saying how to trust them."""
    checked_in = config.of_scope(CHECKED_IN)
    if trusted:
        return config
    if not checked_in:  # its guards alone (`HookConfig.guards`) stand for hooks that would not run untrusted
        return config.without_scope(CHECKED_IN)
    digest = hooks_digest(checked_in)
    answer = remembered(remembered_value, digest)
    if answer is None:
        if ask is None:
            notify(_how_to_trust(checked_in, changed=_trusted_before(remembered_value)))
            return config.without_scope(CHECKED_IN)
        answer = ask(checked_in)
        if problem := remember(local_settings, digest, answer):
            notify(problem)
    if answer:
        return config
    notify(
        f"Not running the {len(checked_in)} hook(s) of {checked_in[0].source}: you chose not to trust them. "
        f'To be asked again, remove "{TRUST_KEY}" from {local_settings}.'
    )
    return config.without_scope(CHECKED_IN)


def _trusted_before(value: Any) -> bool:
    """An answer is remembered, "trusted", for hooks other than today's."""
    return isinstance(value, dict) and value.get("trusted") is True


def _how_to_trust(hooks: Sequence[HookCommand], *, changed: bool) -> str:
    why = "they changed since you trusted them" if changed else "this project's hooks are not trusted yet"
    return (
        f"Not running the {len(hooks)} hook(s) of {hooks[0].source}: {why}. To trust them, start agentcli "
        f"(the REPL) here once and answer yes, pass {TRUST_FLAG}, or set {ENABLE_ALL_KEY}: true in "
        ".agentcli/settings.local.json."
    )
