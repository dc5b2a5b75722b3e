"""Which plugins a session loads: `enabledPlugins` in the user's own settings, found where they are installed.

    {"enabledPlugins": {"formatter@team-tools": true, "linter@team-tools": false}}

Only the user's own files enable a plugin: `$AGENTCLI_HOME/settings.json` and `~/.claude/settings.json`
(user), then `.agentcli/settings.local.json` and `.claude/settings.local.json` (local), the later
file winning for a key. The checked-in project file comes with the repository: its
`enabledPlugins` and `extraKnownMarketplaces` are recommendations, said in one notice with the
command that would act on them, never acted on (a repository never approves itself).

An enabled plugin is looked for in agentcli's store, then in Claude Code's
(`~/.claude/plugins/installed_plugins.json`); one that is in neither, or cannot be read, is named
in a notice and left out. Plugins are loaded in the order of their keys, which decides which one
keeps a short name two of them share (skills/catalog.py).

`--plugin-dir DIR` (Claude Code's flag) loads the plugin in DIR for one session, without
installing or enabling it: the user named it on the command line, so it is trusted as an
installed plugin is. It comes first, and an installed plugin of the same name is left out for the
session (the folder is the copy being worked on). A folder that holds no plugin is a usage error,
not a notice: the user asked for it by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.errors import UsageError
from agentcli.plugins.manifest import Plugin, PluginError, read_plugin
from agentcli.setting_keys import setting
from agentcli.settings import OWN_SCOPES, Settings, agentcli_home, claude_home

if TYPE_CHECKING:
    from agentcli.plugins.store import Installed

ENABLED_KEY = setting("enabledPlugins")
MARKETPLACES_KEY = setting("extraKnownMarketplaces")


@dataclass(frozen=True)
class ActivePlugins:
    plugins: tuple[Plugin, ...] = ()
    notices: tuple[str, ...] = field(default_factory=tuple)
    protected: tuple[Path, ...] = ()
    """The `--plugin-dir` plugins' folders: protected paths while the session runs (an installed
    plugin's are protected as agentcli's or Claude Code's own files)."""


def enabled_states(settings: Settings) -> dict[str, bool]:
    """Each plugin key the user's own files name, and whether it is enabled (the last file wins)."""
    states: dict[str, bool] = {}
    for scope, _, data in settings.raw:
        value = data.get(ENABLED_KEY)
        if scope in OWN_SCOPES and isinstance(value, dict):
            states.update({key: flag for key, flag in value.items() if isinstance(flag, bool)})
    return states


def recommended(settings: Settings) -> tuple[list[str], dict[str, Any]]:
    """The plugins and marketplaces the checked-in project file recommends."""
    plugins: list[str] = []
    marketplaces: dict[str, Any] = {}
    for scope, _, data in settings.raw:
        if scope in OWN_SCOPES:
            continue
        value = data.get(ENABLED_KEY)
        if isinstance(value, dict):
            plugins.extend(key for key, flag in value.items() if flag is True and key not in plugins)
        more = data.get(MARKETPLACES_KEY)
        if isinstance(more, dict):
            marketplaces.update(more)
    return plugins, marketplaces


def installed_anywhere(home: Path | None = None, claude: Path | None = None) -> dict[str, Installed]:
    """Every installed plugin: Claude Code's, then agentcli's (which wins for a key both have)."""
    from agentcli.plugins.store import INSTALLED_FILE, PluginStore, read_installed  # not on the start-up path

    found = read_installed((claude or claude_home()) / "plugins" / INSTALLED_FILE)
    found.update(PluginStore(home or agentcli_home()).installed())
    return found


def active_plugins(
    settings: Settings, home: Path | None = None, claude: Path | None = None, folders: Sequence[Path] = ()
) -> ActivePlugins:
    """The plugins to load, and what to say about those that cannot be (see the module's docstring);
    `folders` are `--plugin-dir`'s. Raises UsageError (exit 2) for a folder that holds no plugin."""
    states = enabled_states(settings)
    wanted, marketplaces = recommended(settings)
    if not states and not wanted and not marketplaces and not folders:
        return ActivePlugins()  # the usual case: nothing read, nothing imported
    installed = installed_anywhere(home, claude) if any(states.values()) else {}
    from_folders = _from_folders(folders)
    plugins = list(from_folders)
    notices: list[str] = [warning for plugin in plugins for warning in plugin.warnings]
    for key in sorted(key for key, on in states.items() if on):
        name = key.rpartition("@")[0] or key
        if (shadow := next((p for p in plugins if p.name == name), None)) is not None:
            notices.append(f"The plugin {key} is left out for this session: --plugin-dir {shadow.root} has its name.")
            continue
        record = installed.get(key)
        if record is None:
            notices.append(
                f"The plugin {key} is enabled but not installed; install it with: agentcli plugin install {key}"
            )
            continue
        try:
            plugin = read_plugin(record.path, marketplace=record.marketplace, name=record.name, entry=record.entry)
        except PluginError as error:
            notices.append(f"The plugin {key} is left out: {error}")
            continue
        plugins.append(plugin)
        notices.extend(plugin.warnings)
    unanswered = [key for key in wanted if key not in states]
    if unanswered:
        notices.append(
            f"This project recommends the plugin{'s' if len(unanswered) > 1 else ''} {', '.join(unanswered)}; "
            "agentcli enables a plugin only when you say so: agentcli plugin install NAME@MARKETPLACE"
        )
    from agentcli.plugins.store import PluginStore

    known = PluginStore(home or agentcli_home()).marketplaces() if marketplaces else {}
    if missing := [name for name in marketplaces if name not in known]:
        notices.append(
            f"This project recommends the marketplace{'s' if len(missing) > 1 else ''} {', '.join(missing)}; "
            "add one with: agentcli plugin marketplace add SOURCE"
        )
    return ActivePlugins(tuple(plugins), tuple(notices), tuple(plugin.root for plugin in from_folders))


def _from_folders(folders: Sequence[Path]) -> list[Plugin]:
    """The `--plugin-dir` plugins, in the order given; the same folder twice counts once."""
    plugins: list[Plugin] = []
    for folder in folders:
        try:
            plugin = read_plugin(folder)
        except PluginError as error:
            raise UsageError(f"--plugin-dir {folder}: {error}") from None
        if any(p.root == plugin.root for p in plugins):
            continue
        if (other := next((p for p in plugins if p.name == plugin.name), None)) is not None:
            raise UsageError(
                f"--plugin-dir {folder}: its plugin is named {plugin.name!r}, as the one in {other.root} is; "
                "give one of them."
            )
        plugins.append(plugin)
    return plugins
