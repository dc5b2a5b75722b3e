"""The `env` setting: environment variables your own settings files set for agentcli, as Claude
Code's `env` does (`{"env": {"ANTHROPIC_BASE_URL": "https://gateway.example/api"}}`).

They are applied once, as agentcli starts and before anything reads the environment
(`apply_settings_env`), as if they had been exported in the shell: the providers read them
(`ANTHROPIC_BASE_URL`, `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_MODEL`…), and the programs agentcli
starts inherit them, except the credentials, which `agentcli.credentials.child_environment`
withholds whichever way they came. A stdio MCP server, which starts from a minimal
environment, gets them beside it (`applied_variables`), credentials withheld too.

- **Only your own files count** (user and local, untracked): `env` is an own-only key, so a
  checked-in file's `env` was dropped with a notice while the settings were read
  (`agentcli.settings`). A repository could otherwise set `PATH` so an allowed
  `Bash(npm test:*)` runs its own `npm`, or `ANTHROPIC_BASE_URL` to collect your key.
- **Merged variable by variable**, in the settings' order, so a later file wins for a variable
  both set; and **a file's value beats the shell's**, as in Claude Code. An Anthropic key or
  token `env` sets is the one sent: the shell's other one (`ANTHROPIC_API_KEY` beside an
  `env`'s `ANTHROPIC_AUTH_TOKEN`, or the reverse) is taken out of the environment, so a
  gateway `env` names never receives the key you exported for another server.
- **Not settable**: `AGENTCLI_HOME` and `CLAUDE_CONFIG_DIR`, which say where the settings
  files are (they were read already).
- **Read leniently**: a number or `true`/`false` is its JSON text (`8080`, `true`); a `null`,
  an object or a list, a name that is empty or holds `=`, and a NUL anywhere are skipped, with
  one notice per file naming the variables, never their values.
"""

from __future__ import annotations

import json
import os
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.credentials import hold_secret, withheld_variables
from agentcli.errors import UsageError
from agentcli.setting_keys import setting
from agentcli.settings import Settings, load_settings

ENV_SETTING = setting("env")
ANTHROPIC_CREDENTIALS = {"ANTHROPIC_API_KEY": "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN": "ANTHROPIC_API_KEY"}
"""Each Anthropic credential and the other: the one `env` sets replaces the shell's other one,
which would otherwise be sent (the API key first) to the server `env` names."""
LOCATING_VARIABLES = ("AGENTCLI_HOME", "CLAUDE_CONFIG_DIR")
"""Variables that say where the settings files are: read before `env` could set them."""


@dataclass(frozen=True)
class SettingsEnv:
    variables: dict[str, str] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    """Variables skipped, per file, by name only."""


def settings_environment(settings: Settings) -> SettingsEnv:
    """The variables the `env` of the files in `settings` set (the checked-in files' are gone already)."""
    found = SettingsEnv()
    for _scope, path, data in settings.raw:
        entries = data.get(ENV_SETTING)
        if not isinstance(entries, dict):
            continue
        skipped: list[str] = []
        for name, value in entries.items():
            text = _as_text(value)
            if text is None or not _usable_name(name) or "\0" in text:
                skipped.append(name or '""')
            else:
                found.variables[name] = text
        if skipped:
            found.notices.append(
                f"Skipped in {path} env: {', '.join(skipped)} (a variable needs a name without `=` "
                "and a string value; AGENTCLI_HOME and CLAUDE_CONFIG_DIR cannot be set there)."
            )
    return found


_applied: frozenset[str] = frozenset()
"""The names `apply_settings_env` set in agentcli's environment (replaced, never changed in place)."""


def apply_settings_env(cwd: Path, environ: MutableMapping[str, str] | None = None) -> None:
    """Set the variables of the `env` of your settings at `cwd` in `environ` (agentcli's own
    environment). Settings that cannot be read set nothing: the session reports why."""
    global _applied
    try:
        settings = load_settings(cwd)
    except UsageError:
        return
    variables = settings_environment(settings).variables
    target = os.environ if environ is None else environ
    for name, other in ANTHROPIC_CREDENTIALS.items():
        if name in variables and other not in variables and other in target:
            hold_secret(target.pop(other))  # still redacted, never sent
    target.update(variables)
    if environ is None:
        _applied = _applied | variables.keys()


def applied_variables() -> dict[str, str]:
    """The variables your settings' `env` set in agentcli's environment, as they are now, without
    the credentials: what a stdio MCP server gets beside its minimal environment, as a
    program agentcli starts would from the shell."""
    withheld = withheld_variables()
    return {name: os.environ[name] for name in _applied if name in os.environ and name not in withheld}


def _as_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def _usable_name(name: str) -> bool:
    return bool(name) and "=" not in name and "\0" not in name and name not in LOCATING_VARIABLES
