"""The `sandbox` settings (Claude Code's keys), merged so that a repository can only tighten them.

Each settings file may hold a `sandbox` object; `sandbox_settings` reads every file's own
object (`Settings.raw`) and the command line's `--sandbox`/`--no-sandbox`:

- your own files (user, then local, which wins) set every key;
- the checked-in project file may only narrow what they allow: turn the sandbox on, set
  `failIfUnavailable`, turn `autoAllowBashIfSandboxed` and `allowUnsandboxedCommands` off, and
  add to `filesystem.denyRead` and `filesystem.denyWrite`. Anything else it says (turning the
  sandbox off, `excludedCommands`, `network.allowedDomains`, `filesystem.allowRead`,
  `filesystem.allowWrite`, `network.allowUnixSockets`, `network.allowAllUnixSockets`) is
  ignored with a notice, since a hostile repository controls that file;
- `--sandbox` / `--no-sandbox` decide `enabled` for one run, over every file.

Lists add up across the files whose value counts. A value of the wrong type is a usage error
naming the file; a key agentcli does not know inside `sandbox` is ignored with a notice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.errors import UsageError
from agentcli.setting_keys import keys_inside, setting
from agentcli.settings import OWN_SCOPES, Settings

SANDBOX = setting("sandbox")
KNOWN = frozenset(keys_inside(SANDBOX))
"""`enabled`, `network.allowedDomains`, …: every key declared inside `sandbox`."""


@dataclass(frozen=True)
class SandboxSettings:
    enabled: bool = False
    auto_allow: bool = True
    """`autoAllowBashIfSandboxed`: a sandboxed Bash call no rule denies or asks about runs without a question."""
    excluded_commands: tuple[str, ...] = ()
    """`excludedCommands`: commands that run outside the sandbox, through the usual permission questions."""
    allow_unsandboxed: bool = False
    """`allowUnsandboxedCommands`: Bash offers the model `dangerouslyDisableSandbox` (each such call is asked)."""
    fail_if_unavailable: bool = False
    allowed_domains: tuple[str, ...] = ()
    allow_unix_sockets: bool = False
    """`network.allowAllUnixSockets`: commands may open Unix sockets (the machine's daemons are then reachable)."""
    unix_sockets: tuple[str, ...] = ()
    """`network.allowUnixSockets`: socket files bound into the sandbox, which commands may connect to."""
    deny_read: tuple[str, ...] = ()
    allow_read: tuple[str, ...] = ()
    allow_write: tuple[str, ...] = ()
    deny_write: tuple[str, ...] = ()
    enabled_by: str = "the default"
    """What decided `enabled`, for /sandbox: `--sandbox`, a settings file's path, or the default."""


_FIELDS = {
    "enabled": "enabled",
    "autoAllowBashIfSandboxed": "auto_allow",
    "excludedCommands": "excluded_commands",
    "allowUnsandboxedCommands": "allow_unsandboxed",
    "failIfUnavailable": "fail_if_unavailable",
    "network.allowedDomains": "allowed_domains",
    "network.allowAllUnixSockets": "allow_unix_sockets",
    "network.allowUnixSockets": "unix_sockets",
    "filesystem.denyRead": "deny_read",
    "filesystem.allowRead": "allow_read",
    "filesystem.allowWrite": "allow_write",
    "filesystem.denyWrite": "deny_write",
}
_LISTS = frozenset(
    {
        "excludedCommands",
        "network.allowedDomains",
        "network.allowUnixSockets",
        "filesystem.denyRead",
        "filesystem.allowRead",
        "filesystem.allowWrite",
        "filesystem.denyWrite",
    }
)
_NARROWING: dict[str, object] = {
    "enabled": True,
    "failIfUnavailable": True,
    "autoAllowBashIfSandboxed": False,
    "allowUnsandboxedCommands": False,
    "network.allowAllUnixSockets": False,
}
"""Booleans the project file may set to this value only (the safer one)."""
_PROJECT_LISTS = frozenset({"filesystem.denyRead", "filesystem.denyWrite"})
"""Lists the project file may add to: they only take away."""
_WIDENS = {
    "enabled": "turn the sandbox off",
    "failIfUnavailable": "let commands run unsandboxed when the sandbox cannot start",
    "autoAllowBashIfSandboxed": "approve sandboxed commands without asking",
    "allowUnsandboxedCommands": "let the model ask to leave the sandbox",
    "excludedCommands": "run commands outside the sandbox",
    "network.allowedDomains": "open the network to more hosts",
    "network.allowAllUnixSockets": "open Unix sockets to commands",
    "network.allowUnixSockets": "open Unix sockets to commands",
    "filesystem.allowRead": "show secret places to commands",
    "filesystem.allowWrite": "let commands write outside the project",
}


def sandbox_settings(
    settings: Settings, flag: bool | None = None, on_notice: Callable[[str], None] | None = None
) -> SandboxSettings:
    """The sandbox settings of a session: the files' (see the module's docstring), with `flag`
    (`--sandbox` True, `--no-sandbox` False) deciding `enabled`. Raises UsageError for a value of the wrong type."""

    def notice(text: str) -> None:
        if on_notice is not None:
            on_notice(text)

    values: dict[str, Any] = {}
    lists: dict[str, list[str]] = {name: [] for name in _LISTS}
    for scope, path, data in settings.raw:
        block = data.get(SANDBOX)
        if block is None:
            continue
        own = scope in OWN_SCOPES
        for name, value in _flatten(block, path, notice).items():
            if name not in KNOWN:
                notice(f"Ignored sandbox.{name} in {path}: not a sandbox setting agentcli knows.")
                continue
            if name in _LISTS:
                items = _strings(value, name, path)
                if own or name in _PROJECT_LISTS:
                    lists[name] += [item for item in items if item not in lists[name]]
                elif items:
                    notice(_ignored(name, path))
                continue
            if not isinstance(value, bool):
                raise UsageError(f"Setting sandbox.{name} in {path} must be true or false, not {value!r}.")
            if not own and value != _NARROWING[name]:
                notice(_ignored(name, path))
                continue
            values[_FIELDS[name]] = value
            if name == "enabled":
                values["enabled_by"] = str(path)
    values.update({_FIELDS[name]: tuple(items) for name, items in lists.items()})
    if flag is not None:
        values.update(enabled=flag, enabled_by="--sandbox" if flag else "--no-sandbox")
    return SandboxSettings(**values)


def _flatten(block: Any, path: Path, notice: Callable[[str], None]) -> dict[str, Any]:
    """`{"network": {"allowedDomains": …}}` → `{"network.allowedDomains": …}`."""
    if not isinstance(block, dict):
        raise UsageError(f"Setting sandbox in {path} must be an object, not {block!r}.")
    flat: dict[str, Any] = {}
    for key, value in block.items():
        if key in ("network", "filesystem"):
            if not isinstance(value, dict):
                raise UsageError(f"Setting sandbox.{key} in {path} must be an object, not {value!r}.")
            flat.update({f"{key}.{inner}": item for inner, item in value.items()})
        else:
            flat[key] = value
    return flat


def _strings(value: Any, name: str, path: Path) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise UsageError(f"Setting sandbox.{name} in {path} must be a list of strings, not {value!r}.")
    return list(value)


def _ignored(name: str, path: Path) -> str:
    return (
        f"Ignored sandbox.{name} in {path}: it would {_WIDENS[name]}, which only your own settings "
        "(.agentcli/settings.local.json or $AGENTCLI_HOME/settings.json) may do, never the repository's."
    )
