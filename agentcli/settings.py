"""Settings files: user, project and local JSON, merged in that order (later wins).

The keys they may hold, with their types, defaults and files, are declared in
`agentcli.setting_keys` (and listed in docs/settings.md).

A key whose values add up instead (permission rules, `hooks`) is read from each file's own
content, `Settings.raw`, which keeps the file every value came from.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.bounds import JSON_DIGITS
from agentcli.errors import UsageError
from agentcli.regular_file import NotRegularFile, read_regular_file
from agentcli.setting_keys import OWN_FILES, SETTING_KEYS, TOP_LEVEL

MAX_SETTINGS_BYTES = 4 << 20


class SettingsFileSkipped(UsageError):
    """A settings file that is not a regular file: loading goes on without it, with a notice."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"Cannot read settings file {path}: {why}.")
        self.notice = f"Skipped settings file {path}: {why}."


def agentcli_home() -> Path:
    return Path(os.environ.get("AGENTCLI_HOME") or Path.home() / ".agentcli")


def claude_home() -> Path:
    """Claude Code's user folder, `~/.claude`: its commands, agents and skills are read too."""
    return Path.home() / ".claude"


def settings_files(cwd: Path) -> list[tuple[str, Path]]:
    """(scope, path) of every settings file, lowest precedence first."""
    return [
        ("user", agentcli_home() / "settings.json"),
        ("project", cwd / ".agentcli" / "settings.json"),
        ("local", cwd / ".agentcli" / "settings.local.json"),
    ]


OWN_SCOPES = OWN_FILES
"""The user's own settings files. The project file is checked in: a hostile repository controls it."""
OWN_KEYS = {key.name: key.own_only for key in SETTING_KEYS if key.own_only}
"""Keys that only the user's own files may set, and what they control (for the notice)."""


@dataclass
class Settings:
    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, Path] = field(default_factory=dict)
    """For each top-level key, the file that set it last."""
    raw: list[tuple[str, Path, dict[str, Any]]] = field(default_factory=list)
    """Each file's own content, for merging keys such as permission rules."""
    notices: list[str] = field(default_factory=list)
    """Files skipped while loading, and why (the session shows them once it starts)."""

    def get(self, key: str, default: Any = None) -> Any:
        """The merged value of the top-level key `key`, declared in `agentcli.setting_keys`."""
        if key not in TOP_LEVEL:
            raise LookupError(f"{key!r} is not a declared settings key: add it to agentcli/setting_keys.py.")
        return self.values.get(key, default)


def load_settings(cwd: Path) -> Settings:
    settings = Settings()
    for scope, path in settings_files(cwd):
        try:
            data = read_settings_file(path)
        except SettingsFileSkipped as skipped:
            settings.notices.append(skipped.notice)
            continue
        if data is None:
            continue
        if scope not in OWN_SCOPES:
            data = _without_own_keys(data, path, settings.notices)
        settings.raw.append((scope, path, data))
        for key, value in data.items():
            settings.values[key] = value
            settings.sources[key] = path
    return settings


def _without_own_keys(data: dict[str, Any], path: Path, notices: list[str]) -> dict[str, Any]:
    for key in OWN_KEYS.keys() & data.keys():
        notices.append(
            f"Ignored {key} in {path}: {OWN_KEYS[key]} only by your own settings "
            "(.agentcli/settings.local.json or $AGENTCLI_HOME/settings.json), never by the repository's."
        )
    return {key: value for key, value in data.items() if key not in OWN_KEYS}


def read_settings_file(path: Path) -> dict[str, Any] | None:
    """The file's JSON object; None when there is no file. Raises UsageError when it is unusable
    (SettingsFileSkipped when it is not a regular file, e.g. a FIFO, which is never waited on)."""
    try:
        raw = read_regular_file(path, MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return None
    except NotRegularFile as error:
        raise SettingsFileSkipped(path, error.strerror or str(error)) from None
    except OSError as error:
        raise UsageError(f"Cannot read settings file {path}: {error.strerror}") from None
    if len(raw) > MAX_SETTINGS_BYTES:
        raise UsageError(f"Settings file {path} is over {MAX_SETTINGS_BYTES:,} bytes; settings files are small JSON.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(
            f"Settings file {path} is not UTF-8 text (at byte offset {error.start:,}); save it as UTF-8."
        ) from None
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as error:
        raise UsageError(
            f"Settings file {path} is not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}"
        ) from None
    except ValueError:  # valid JSON that Python will not read
        raise UsageError(f"Settings file {path} holds a number of more than {JSON_DIGITS:,} digits.") from None
    if not isinstance(data, dict):
        raise UsageError(f"Settings file {path} must hold a JSON object, not {type(data).__name__}.")
    return data
