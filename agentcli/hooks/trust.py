"""Trusting the hooks of the checked-in settings file (`.agentcli/settings.json`).

Hooks run programs. The user's own files (user and local settings) are trusted as they are;
the project's file comes with the repository, so in the REPL the first session asks once
whether to run its hooks, and the answer is remembered in `.agentcli/settings.local.json`
under `TRUST_KEY` as the digest of the hooks it was given for: when they change, it is asked
again. `agentcli run` runs them without asking (as Claude Code's print mode does), since CI
relies on the team's own policy. The project's own file can never mark itself trusted (the
key is one of `settings.OWN_KEYS`).
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
) -> HookConfig:
    """`config` without the checked-in file's hooks when the user does not trust them. With
    nobody to ask (`agentcli run`) they run; otherwise the remembered answer holds, and without
    one (or when they changed since) the user is asked and the answer saved to `local_settings`."""
    checked_in = config.of_scope(CHECKED_IN)
    if not checked_in or ask is None:
        return config
    digest = hooks_digest(checked_in)
    answer = remembered(remembered_value, digest)
    if answer is None:
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
