"""Settings files: user, project and local JSON, merged in that order (later wins).

Each scope has two files, Claude Code's and agentcli's own, read in that order, so agentcli's
wins where both set a key (`settings_files`):

    ~/.claude/settings.json, $AGENTCLI_HOME/settings.json              user
    .claude/settings.json, .agentcli/settings.json                     project (checked in)
    .claude/settings.local.json, .agentcli/settings.local.json         local

The keys they may hold, with their types, defaults and files, are declared in
`agentcli.setting_keys` (and listed in docs/settings.md). A key that is not declared is
ignored, with one notice per file naming such keys (files written for Claude Code hold many
keys agentcli has no use for); `$schema` is ignored quietly.

A local file that git tracks (`git ls-files`) comes with the repository: it is read as a
checked-in (project) file, with one notice, so a repository never approves itself through it.

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
from agentcli.git_tracked import tracked_by_git
from agentcli.regular_file import NotRegularFile, read_regular_file
from agentcli.setting_keys import OWN_FILES, SETTING_KEYS, SHAPES, TOP_LEVEL, Shape

MAX_SETTINGS_BYTES = 4 << 20


class SettingsFileSkipped(UsageError):
    """A settings file that is not a regular file: loading goes on without it, with a notice."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"Cannot read settings file {path}: {why}.")
        self.notice = f"Skipped settings file {path}: {why}."


QUIETLY_IGNORED = frozenset({"$schema"})
"""Keys a settings file may hold that agentcli ignores without a word (an editor's schema)."""


def agentcli_home() -> Path:
    return Path(os.environ.get("AGENTCLI_HOME") or Path.home() / ".agentcli")


def claude_home() -> Path:
    """Claude Code's user folder, `~/.claude` (or `$CLAUDE_CONFIG_DIR`, as Claude Code has it):
    its settings, CLAUDE.md, commands, agents and skills are read too."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def settings_files(cwd: Path) -> list[tuple[str, Path]]:
    """(scope, path) of every settings file, lowest precedence first: in each scope Claude
    Code's file, then agentcli's own."""
    return [
        ("user", claude_home() / "settings.json"),
        ("user", agentcli_home() / "settings.json"),
        ("project", cwd / ".claude" / "settings.json"),
        ("project", cwd / ".agentcli" / "settings.json"),
        ("local", cwd / ".claude" / "settings.local.json"),
        ("local", own_local_settings(cwd)),
    ]


def own_local_settings(cwd: Path) -> Path:
    """`.agentcli/settings.local.json`: where agentcli saves the user's answers for this project."""
    return cwd / ".agentcli" / "settings.local.json"


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
    files = settings_files(cwd)
    git = tracked_by_git(cwd, [path for scope, path in files if scope == "local" and path.exists()])
    for scope, path in files:
        if path in git.files:
            scope = CHECKED_IN
        try:
            data = read_settings_file(path)
        except SettingsFileSkipped as skipped:
            settings.notices.append(skipped.notice)
            continue
        if data is None:
            continue
        if path in git.files:
            settings.notices.append(_tracked_notice(path, cwd, git.unsure, sorted(OWN_KEYS.keys() & data.keys())))
            data = _without_own_keys(data, path, None)
        elif scope not in OWN_SCOPES:
            data = _without_own_keys(data, path, settings.notices)
        if unknown := [key for key in data if key not in TOP_LEVEL and key not in QUIETLY_IGNORED]:
            settings.notices.append(
                f"Ignored in {path}: {', '.join(unknown)} (not settings agentcli uses; docs/settings.md lists them)."
            )
            data = {key: value for key, value in data.items() if key not in unknown}
        for key, shape in SHAPES.items():
            if key in data and not _has_shape(data[key], shape):
                raise UsageError(
                    f"Settings file {path}: {key} must be {SHAPE_NAMES[shape]}, not {_json_type(data[key])}."
                )
        settings.raw.append((scope, path, data))
        for key, value in data.items():
            settings.values[key] = value
            settings.sources[key] = path
    return settings


CHECKED_IN = "project"
SHAPE_NAMES: dict[Shape, str] = {
    "text": "a string",
    "flag": "true or false",
    "names": 'a list of names (["a", "b"])',
    "object": "an object",
}


def _has_shape(value: Any, shape: Shape) -> bool:
    if shape == "text":
        return isinstance(value, str)
    if shape == "flag":
        return isinstance(value, bool)
    if shape == "names":
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    return isinstance(value, dict)


def _json_type(value: Any) -> str:
    """What `value` is, as JSON names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, list):
        return next((f"a list holding {_json_type(item)}" for item in value if not isinstance(item, str)), "a list")
    names = {str: "a string", int: "a number", float: "a number", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def _tracked_notice(path: Path, cwd: Path, unsure: str, ignored: list[str]) -> str:
    name = path.relative_to(cwd).as_posix()
    also = f" Ignored there: {', '.join(ignored)}." if ignored else ""
    said = (
        f"agentcli cannot tell whether git tracks {name} ({unsure}), so it"
        if unsure
        else f"{name} is tracked by git, so it comes with the repository: agentcli"
    )
    return (
        f"{said} reads it as the project's "
        "shared settings (its hooks need your trust; it cannot approve MCP servers, hooks or outside files, "
        f"nor pass credentials or set environment variables).{also} "
        + (
            "It counts as yours once git can say it does not track it."
            if unsure
            else f"To keep your own settings there, untrack it: git rm --cached {name}, and list it in .gitignore."
        )
    )


def _without_own_keys(data: dict[str, Any], path: Path, notices: list[str] | None) -> dict[str, Any]:
    """`data` without the keys only the user's own files may set; each named in `notices`, if given."""
    for key in sorted(OWN_KEYS.keys() & data.keys()):
        if notices is not None:
            notices.append(
                f"Ignored {key} in {path}: {OWN_KEYS[key]} only by your own settings "
                "(.agentcli/settings.local.json or $AGENTCLI_HOME/settings.json, or Claude Code's "
                ".claude/settings.local.json or ~/.claude/settings.json), never by the repository's."
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
