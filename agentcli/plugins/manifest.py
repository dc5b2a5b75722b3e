"""One plugin folder, read as Claude Code reads it: `.claude-plugin/plugin.json` and the default folders.

    my-plugin/
      .claude-plugin/plugin.json   {"name": "my-plugin", "version": "1.0.0", "description": ..., "author": ...}
      commands/*.md                answer to /my-plugin:NAME (skills/loader.py)
      agents/*.md                  agent types my-plugin:NAME (agents/definitions.py)
      skills/NAME/SKILL.md         skills my-plugin:NAME
      hooks/hooks.json             {"hooks": {"PreToolUse": [...]}}
      .mcp.json                    {"mcpServers": {...}}

The manifest is optional (the name then comes from the marketplace's entry, or the folder's
name). Its `commands`, `agents` and `skills` (a path or a list of paths: a folder of them, or one
file or skill folder) add to the default folders; `hooks` and `mcpServers` are a path, a list of
paths, or the configuration itself. Every path is relative to the plugin's folder (`./x`) and
must stay inside it, symlinks resolved: one that leads out is skipped with a warning, as is one
that is not there. `${CLAUDE_PLUGIN_ROOT}` in a hook's command or an MCP server's settings is
the plugin's folder (filled in by hooks/config.py and mcp/config.py).

Read leniently: a key agentcli does not know, or knows and does not do (`outputStyles`,
`lspServers`, `userConfig`, ...), is named in one warning and skipped. What makes the plugin
unusable (a manifest that is not a JSON object, a name with `/` or `..`, a known key of the
wrong kind) raises `PluginError`, one line saying what to fix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.regular_file import read_regular_file

MANIFEST = Path(".claude-plugin") / "plugin.json"
MAX_JSON_BYTES = 1 << 20
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
ROOT_VARIABLE = "CLAUDE_PLUGIN_ROOT"
PATH_KEYS = ("commands", "agents", "skills")
COMPONENT_KEYS = frozenset({*PATH_KEYS, "hooks", "mcpServers"})
DEFAULT_FOLDERS = {"commands": "commands", "agents": "agents", "skills": "skills"}
DEFAULT_HOOKS = Path("hooks") / "hooks.json"
DEFAULT_MCP = Path(".mcp.json")
METADATA = frozenset(
    {"$schema", "name", "version", "description", "author", "homepage", "repository", "license", "keywords"}
)
"""Manifest keys that describe the plugin; read or passed over quietly."""
NOT_DONE = frozenset({"outputStyles", "lspServers", "userConfig", "channels", "settings", "monitors"})
"""Claude Code's component keys agentcli does not load (named in the warning)."""
ENTRY_ONLY = frozenset({"source", "category", "tags", "strict", "displayName", "id"})
"""A marketplace entry's own keys (not components)."""


class PluginError(ValueError):
    """A plugin that cannot be used; `str()` is one line saying what to fix."""


@dataclass(frozen=True)
class Plugin:
    """A plugin's folder and what it brings, each component path checked to be inside it."""

    name: str
    root: Path
    """The plugin's folder, symlinks resolved: `${CLAUDE_PLUGIN_ROOT}`."""
    marketplace: str = ""
    """The marketplace it was installed from (`local` for a folder or URL installed directly)."""
    version: str = ""
    description: str = ""
    author: str = ""
    commands: tuple[Path, ...] = ()
    """Folders of command files, or single files."""
    agents: tuple[Path, ...] = ()
    skills: tuple[Path, ...] = ()
    """Folders of skill folders, or single skill folders."""
    hooks: tuple[tuple[Path, Mapping[str, Any]], ...] = ()
    """(the file that says it, the `hooks` object: event → matcher groups)."""
    mcp_servers: tuple[tuple[Path, Mapping[str, Any]], ...] = ()
    """(the file that says it, servers by name)."""
    warnings: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """`name@marketplace`, as `enabledPlugins` names it."""
        return f"{self.name}@{self.marketplace}" if self.marketplace else self.name

    @property
    def label(self) -> str:
        """Where something came from, for /help, /agents, /hooks and /mcp."""
        return f"plugin {self.key}"


def check_name(name: object, what: str = "plugin") -> str:
    """`name` if it may name a plugin or marketplace (a folder under the store): letters, digits, `.`, `_`, `-`."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or ".." in name:
        raise PluginError(
            f"{shown_name(name)} cannot name a {what}: use letters, digits, '.', '_' and '-' (up to 64, no '..')."
        )
    return name


def shown_name(name: object) -> str:
    text = json.dumps(name) if not isinstance(name, str) else repr(name)
    return text if len(text) <= 80 else text[:77] + "..."


def read_plugin(
    root: Path, *, marketplace: str = "", name: str | None = None, entry: Mapping[str, Any] | None = None
) -> Plugin:
    """The plugin in `root`. `name` is the marketplace entry's: it is the plugin's name (what
    `enabledPlugins` and its commands' `/name:` say), with a warning when the manifest says
    another; `entry`'s component keys (a marketplace entry with `strict: false`, or one that
    adds components) count as the manifest's do."""
    real = root.resolve()
    if not real.is_dir():
        raise PluginError(f"{root} is not a folder, so it holds no plugin.")
    manifest_path = real / MANIFEST
    manifest = read_json_object(manifest_path) if manifest_path.exists() else None
    if manifest is None and entry is None and name is None and not _has_components(real):
        raise PluginError(
            f"{root} is not a plugin: it has no {MANIFEST.as_posix()} and none of commands/, agents/, skills/, "
            f"{DEFAULT_HOOKS.as_posix()} or {DEFAULT_MCP.as_posix()}."
        )
    fields: dict[str, Any] = dict(manifest or {})
    own_name = fields.get("name")
    if manifest is not None and own_name is None:
        raise PluginError(f'{manifest_path} has no "name": give the plugin\'s name, e.g. "name": "my-plugin".')
    if own_name is not None:
        check_name(own_name)  # a manifest naming itself `../x` is hostile, whatever the marketplace says
    plugin_name = check_name(name if name is not None else own_name if own_name is not None else real.name)
    warnings: list[str] = []
    if own_name is not None and own_name != plugin_name:
        warnings.append(f"its manifest names it {own_name!r}; it is {plugin_name!r}, as the marketplace lists it")
    for key, value in (entry or {}).items():
        if key not in ENTRY_ONLY and key not in METADATA:
            fields.setdefault(key, value)
    where = manifest_path if manifest is not None else real
    unknown = sorted(k for k in fields if k not in METADATA and k not in NOT_DONE and k not in COMPONENT_KEYS)
    not_done = sorted(k for k in fields if k in NOT_DONE)
    if unknown:
        warnings.append(f"skipped {', '.join(unknown)} (not plugin keys agentcli knows)")
    if not_done:
        warnings.append(f"skipped {', '.join(not_done)} (agentcli does not load these)")
    paths = {key: _component_paths(real, key, fields.get(key), where, warnings) for key in PATH_KEYS}
    hooks = _configs(real, "hooks", fields.get("hooks"), DEFAULT_HOOKS, where, warnings)
    servers = _configs(real, "mcpServers", fields.get("mcpServers"), DEFAULT_MCP, where, warnings)
    return Plugin(
        name=plugin_name,
        root=real,
        marketplace=marketplace,
        version=_text(fields, "version", where),
        description=_text(fields, "description", where),
        author=_author(fields.get("author")),
        commands=paths["commands"],
        agents=paths["agents"],
        skills=paths["skills"],
        hooks=tuple((path, _hooks_object(value)) for path, value in hooks),
        mcp_servers=tuple((path, _servers_object(value)) for path, value in servers),
        warnings=tuple(f"Plugin {plugin_name} ({where}): {text}." for text in warnings),
    )


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object in `path`; PluginError saying what is wrong with it."""
    try:
        raw = read_regular_file(path, MAX_JSON_BYTES + 1)
    except OSError as error:
        raise PluginError(f"Cannot read {path}: {error.strerror or error}.") from None
    if len(raw) > MAX_JSON_BYTES:
        raise PluginError(f"{path} is over {MAX_JSON_BYTES:,} bytes; it should be small JSON.")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise PluginError(f"{path} is not valid JSON ({error}).") from None
    if not isinstance(data, dict):
        raise PluginError(f"{path} must hold a JSON object, not {type(data).__name__}.")
    return data


def inside(root: Path, relative: object) -> Path | None:
    """`root/relative` with symlinks resolved, if it is `root` or below it; None otherwise (an
    absolute path, `..` out of it, or a symlink that leads out)."""
    if not isinstance(relative, str) or not relative or relative.startswith(("/", "~")):
        return None
    target = (root / relative).resolve()
    return target if target == root or root in target.parents else None


def _has_components(root: Path) -> bool:
    return any((root / folder).is_dir() for folder in DEFAULT_FOLDERS.values()) or any(
        (root / file).is_file() for file in (DEFAULT_HOOKS, DEFAULT_MCP)
    )


def _component_paths(root: Path, key: str, value: object, where: Path, warnings: list[str]) -> tuple[Path, ...]:
    found: list[Path] = []
    default = inside(root, DEFAULT_FOLDERS[key])
    if default is not None and default.is_dir():
        found.append(default)
    for relative in _listed(value, key, where):
        path = inside(root, relative)
        if path is None:
            warnings.append(f"skipped {key} {relative!r}: it leads outside the plugin's folder")
        elif not path.exists():
            warnings.append(f"skipped {key} {relative!r}: there is no such file or folder")
        elif path not in found:
            found.append(path)
    return tuple(found)


def _configs(
    root: Path, key: str, value: object, default: Path, where: Path, warnings: list[str]
) -> list[tuple[Path, object]]:
    """(file, its content) for `hooks` or `mcpServers`: the default file, then each path or inline object."""
    found: list[tuple[Path, object]] = []
    seen: set[Path] = set()

    def add_file(path: Path) -> None:
        if path in seen:
            return
        seen.add(path)
        try:
            found.append((path, read_json_object(path)))
        except PluginError as error:
            warnings.append(f"skipped {key} {path.relative_to(root).as_posix()}: {error}")

    if (root / default).is_file():
        add_file((root / default).resolve())
    items = value if isinstance(value, list) else [] if value is None else [value]
    for item in items:
        if isinstance(item, dict):
            found.append((where, item))
            continue
        path = inside(root, item)
        if path is None:
            warnings.append(f"skipped {key} {item!r}: it leads outside the plugin's folder")
        elif not path.is_file():
            warnings.append(f"skipped {key} {item!r}: there is no such file")
        else:
            add_file(path)
    return found


def _hooks_object(value: object) -> Mapping[str, Any]:
    """`{"hooks": {...}}` (hooks.json) or the events themselves (inline)."""
    if isinstance(value, dict) and isinstance(value.get("hooks"), dict):
        return dict(value["hooks"])
    if isinstance(value, dict):
        return {key: item for key, item in value.items() if key != "description"}
    return {}


def _servers_object(value: object) -> Mapping[str, Any]:
    """`{"mcpServers": {...}}` (.mcp.json) or the servers themselves."""
    if isinstance(value, dict) and isinstance(value.get("mcpServers"), dict):
        return dict(value["mcpServers"])
    return value if isinstance(value, dict) else {}


def _listed(value: object, key: str, where: Path) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(item, str) for item in items):
        raise PluginError(f'{where}: "{key}" must be a path ("./{key}/") or a list of paths.')
    return [item for item in items if isinstance(item, str)]


def _text(fields: Mapping[str, Any], key: str, where: Path) -> str:
    value = fields.get(key, "")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise PluginError(f'{where}: "{key}" must be text.')
    return " ".join(value.split())


def _author(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return str(value["name"])
    return ""
