"""The plugin operations `agentcli plugin …` and the REPL's `/plugin` offer, one front-end-free function each.

    plugin marketplace add SOURCE | list | update [NAME] | remove NAME
    plugin install NAME@MARKETPLACE | NAME | FOLDER | GIT-URL  [--scope user|project|local] [--yes]
    plugin list
    plugin enable|disable KEY [--scope ...] [--yes]
    plugin uninstall KEY
    plugin update [KEY] [--yes]

Each says what it did through `say` and raises `PluginError` (one line) when it cannot. Installing,
enabling and updating to other files first show what the plugin brings (`describe`) and go on
only when `ask` says yes; with nobody to ask (`ask` None: no terminal, and no `--yes`) they refuse,
saying how to go on. Enabled state is written to the settings file of the scope: `user`
(`$AGENTCLI_HOME/settings.json`, the default), `local` (`.agentcli/settings.local.json`), or
`project` (`.agentcli/settings.json`, checked in: it recommends the plugin to the team, and the
user's own yes goes to the local file, since the project file alone enables nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentcli.permissions.persist import update_settings
from agentcli.plugins.describe import describe
from agentcli.plugins.enabled import ENABLED_KEY, MARKETPLACES_KEY, enabled_states, installed_anywhere, recommended
from agentcli.plugins.manifest import Plugin, PluginError, read_plugin
from agentcli.plugins.marketplace import GITHUB_REPO
from agentcli.plugins.remote import is_marketplace_url
from agentcli.plugins.store import DIRECT, PluginStore, Staged, parse_source, shown_source
from agentcli.settings import agentcli_home, load_settings, own_local_settings

Scope = Literal["user", "project", "local"]
SCOPES: tuple[Scope, ...] = ("user", "project", "local")
Say = Callable[[str], None]
Ask = Callable[[list[str], str], bool]
"""Shows the lines describing a plugin and asks the question; True for yes."""
NOBODY_TO_ASK = "there is nobody to ask here (no terminal); pass --yes if you have read what it brings"


@dataclass
class PluginCommands:
    cwd: Path
    say: Say
    ask: Ask | None
    """None: nobody can answer (no terminal and no --yes): what needs a yes is refused."""
    home: Path | None = None

    @property
    def store(self) -> PluginStore:
        return PluginStore(self.home or agentcli_home())

    # ------------------------------------------------------------------ marketplaces

    def marketplace_add(self, source: str) -> None:
        market = self.store.add_marketplace(parse_source(source))
        self.say(f"Added the marketplace {market.name} ({len(market.entries)} plugins) from {source}.")
        for warning in market.warnings:
            self.say(f"  note: {warning}")

    def marketplace_list(self) -> None:
        known = self.store.marketplaces()
        for name, item in sorted(known.items()):
            try:
                count = f"{len(self.store.marketplace(name).entries)} plugins"
            except PluginError as error:
                count = f"unreadable: {error}"
            whose = " (Claude Code's)" if item.claude else ""
            self.say(f"{name} · {shown_source(item.source)} · {count}{whose}")
        settings = load_settings(self.cwd)
        _, suggested = recommended(settings)
        own = settings.get(MARKETPLACES_KEY) or {}
        for name, value in {**own, **suggested}.items():
            if name not in known:
                source = value.get("source") if isinstance(value, dict) else None
                shown = shown_source(source) if isinstance(source, dict) else "?"
                self.say(f"{name} · {shown} · not added (agentcli plugin marketplace add {shown})")
        if not known and not own and not suggested:
            self.say("No marketplaces yet; add one with: agentcli plugin marketplace add SOURCE")

    def marketplace_update(self, name: str | None) -> None:
        names = [name] if name else sorted(n for n, known in self.store.marketplaces().items() if not known.claude)
        for each in names:
            market = self.store.update_marketplace(each)
            self.say(f"Updated the marketplace {each} ({len(market.entries)} plugins).")

    def marketplace_remove(self, name: str) -> None:
        self.store.remove_marketplace(name)
        self.say(f"Removed the marketplace {name}; plugins installed from it stay installed until uninstalled.")

    # ------------------------------------------------------------------ plugins

    def install(self, spec: str, scope: Scope = "user") -> None:
        staged = self._stage(spec)
        if staged.key in self.store.installed():
            self.store.discard(staged)
            raise PluginError(
                f"{staged.key} is already installed: agentcli plugin update {staged.key} fetches it again, "
                f"agentcli plugin enable {staged.key} enables it"
            )
        plugin = self._approved(staged, "Install and enable it?", "Not installed")
        installed = self.store.commit(staged, plugin.version)
        self._set_enabled(installed.key, True, scope)
        self.say(f"Installed {installed.key} (pin {installed.commit[:12]}) and enabled it ({scope}).")

    def list_installed(self) -> None:
        states = enabled_states(load_settings(self.cwd))
        installed = installed_anywhere(self.home)
        if not installed:
            self.say("No plugins installed; install one with: agentcli plugin install NAME@MARKETPLACE")
        for key, record in sorted(installed.items()):
            state = "enabled" if states.get(key) else "disabled"
            version = f" {record.version}" if record.version else ""
            where = "" if self.store.root in record.path.parents else " (Claude Code's)"
            pin = f" · pin {record.commit[:12]}" if record.commit else ""
            self.say(f"{key}{version} · {state}{pin}{where}")
        wanted, _ = recommended(load_settings(self.cwd))
        for key in wanted:
            if key not in states:
                self.say(f"{key} · recommended by this project, not enabled (agentcli plugin install {key})")

    def enable(self, key: str, scope: Scope = "user") -> None:
        record = installed_anywhere(self.home).get(key)
        if record is None:
            raise PluginError(f"{key} is not installed; install it with: agentcli plugin install {key}")
        plugin = read_plugin(record.path, marketplace=record.marketplace, name=record.name, entry=record.entry)
        self._confirm(describe(plugin, self.cwd, str(record.path), record.commit), "Enable it?", "Not enabled")
        self._set_enabled(key, True, scope)
        self.say(f"Enabled {key} ({scope}).")

    def disable(self, key: str, scope: Scope = "user") -> None:
        self._set_enabled(key, False, scope)
        self.say(f"Disabled {key} ({scope}).")

    def uninstall(self, key: str) -> None:
        if key not in self.store.installed() and key in installed_anywhere(self.home):
            raise PluginError(
                f"{key} was installed by Claude Code, which uninstalls it; agentcli plugin disable {key} stops it here."
            )
        self.store.uninstall(key)
        for scope in ("user", "local"):
            path = self._settings_file(scope)
            if path.exists():
                update_settings(path, lambda data: _forget(data, key))
        self.say(f"Uninstalled {key}.")

    def update(self, key: str | None) -> None:
        keys = [key] if key else sorted(self.store.installed())
        if not keys:
            self.say("No plugins installed by agentcli; nothing to update.")
        updated_markets: set[str] = set()
        for each in keys:
            record = self.store.installed().get(each)
            if record is None:
                raise PluginError(f"{each} is not installed by agentcli (agentcli plugin list shows what is).")
            market = record.marketplace
            if market != DIRECT and market not in updated_markets:
                self.store.update_marketplace(market)
                updated_markets.add(market)
            staged = self._stage(each if market != DIRECT else _direct_spec(record.source))
            if staged.commit == record.commit:
                self.store.discard(staged)
                self.say(f"{each} is up to date (pin {record.commit[:12]}).")
                continue
            plugin = self._approved(staged, "Update to this version?", "Not updated")
            installed = self.store.commit(staged, plugin.version)
            self.say(f"Updated {each}: pin {record.commit[:12]} → {installed.commit[:12]}.")

    # ------------------------------------------------------------------ helpers

    def _stage(self, spec: str) -> Staged:
        """NAME@MARKETPLACE, NAME (in the one marketplace that has it), a folder, a git URL or owner/repo."""
        if Path(spec).exists() or "://" in spec or spec.startswith("git@") or spec.endswith(".git"):
            return self.store.stage_direct(parse_source(spec))
        name, at, market = spec.rpartition("@")
        if at:
            if market not in self.store.marketplaces():
                self._add_suggested(market)
            return self.store.stage_from_marketplace(name, self.store.marketplace(market))
        if "/" in spec:
            return self.store.stage_direct(parse_source(spec))
        return self._stage_by_name(spec)

    def _add_suggested(self, market: str) -> None:
        """Add the marketplace `market` if a settings file (`extraKnownMarketplaces`) says where it is:
        the user asked for a plugin of it, and is asked about the plugin next."""
        settings = load_settings(self.cwd)
        _, suggested = recommended(settings)
        value = {**suggested, **(settings.get(MARKETPLACES_KEY) or {})}.get(market)
        if value is None:
            return
        source = suggested_source(value, self.cwd)
        added = self.store.add_marketplace(source)
        if added.name != market:
            self.store.remove_marketplace(added.name)
            raise PluginError(f"{shown_source(source)} is the marketplace {added.name!r}, not {market!r}; not added.")
        self.say(f"Added the marketplace {market} from {shown_source(source)} ({MARKETPLACES_KEY}).")

    def _stage_by_name(self, name: str) -> Staged:
        holding = []
        for market in sorted(self.store.marketplaces()):
            try:
                if name in self.store.marketplace(market).entries:
                    holding.append(market)
            except PluginError:
                continue
        if len(holding) != 1:
            where = "no marketplace added has it" if not holding else f"several marketplaces have it: {holding}"
            raise PluginError(f"Say which marketplace: agentcli plugin install {name}@MARKETPLACE ({where}).")
        return self.store.stage_from_marketplace(name, self.store.marketplace(holding[0]))

    def _approved(self, staged: Staged, question: str, refused: str) -> Plugin:
        """The staged plugin, once the user said yes to what it brings; discarded otherwise."""
        name, _, market = staged.key.rpartition("@")
        try:
            plugin = read_plugin(
                staged.folder, marketplace=market, name=None if name == "?" else name, entry=staged.entry
            )
            self._confirm(describe(plugin, self.cwd, shown_source(staged.source), staged.commit), question, refused)
        except BaseException:
            self.store.discard(staged)
            raise
        return plugin

    def _confirm(self, lines: list[str], question: str, refused: str) -> None:
        if self.ask is None:
            for line in lines:
                self.say(line)
            raise PluginError(f"{refused}: {NOBODY_TO_ASK}.")
        if not self.ask(lines, question):
            raise PluginError(f"{refused}: you said no.")

    def _settings_file(self, scope: str) -> Path:
        if scope == "user":
            return (self.home or agentcli_home()) / "settings.json"
        if scope == "project":
            return self.cwd / ".agentcli" / "settings.json"
        return own_local_settings(self.cwd)

    def _set_enabled(self, key: str, on: bool, scope: Scope) -> None:
        if scope not in SCOPES:
            raise PluginError(f"{scope!r} is not a scope: user, project or local.")
        files = [self._settings_file(scope)]
        if scope == "project":  # the project file recommends; the user's yes is theirs, in the local file
            files.append(self._settings_file("local"))
        for path in files:
            update_settings(path, lambda data: _set(data, key, on))


def _set(data: dict[str, Any], key: str, on: bool) -> None:
    plugins = data.get(ENABLED_KEY)
    if not isinstance(plugins, dict):
        plugins = data[ENABLED_KEY] = {}
    plugins[key] = on


def _forget(data: dict[str, Any], key: str) -> None:
    plugins = data.get(ENABLED_KEY)
    if isinstance(plugins, dict):
        plugins.pop(key, None)


def suggested_source(value: object, cwd: Path) -> dict[str, Any]:
    """The source an `extraKnownMarketplaces` entry names (`{"source": {"source": "github", "repo": ...}}`),
    checked as one typed on the command line is."""
    source = value.get("source") if isinstance(value, dict) else None
    fields = source if isinstance(source, dict) else {}
    kind, repo, url, path = (fields.get(key) for key in ("source", "repo", "url", "path"))
    if kind == "github" and isinstance(repo, str) and GITHUB_REPO.fullmatch(repo) and ".." not in repo:
        return {"source": "github", "repo": repo}
    if kind == "git" and isinstance(url, str) and url and not url.startswith("-"):
        return {"source": "git", "url": url}
    if kind == "url" and isinstance(url, str) and is_marketplace_url(url):
        return {"source": "url", "url": url}
    if kind == "directory" and isinstance(path, str):
        return {"source": "directory", "path": str((cwd / path).resolve())}
    raise PluginError(f"agentcli cannot add the marketplace {value!r} (github, git, url and directory sources only).")


def _direct_spec(source: dict[str, Any] | None) -> str:
    if not source:
        raise PluginError("agentcli does not know where this plugin came from; uninstall and install it again.")
    return str(source.get("path") or source.get("url") or source.get("repo"))


PLUGIN_USAGE = (
    "Usage: /plugin [list] · install NAME@MARKETPLACE [--scope user|project|local] · enable|disable NAME@MARKETPLACE "
    "[--scope ...] · uninstall NAME@MARKETPLACE · update [NAME@MARKETPLACE] · marketplace add SOURCE|list|"
    "update [NAME]|remove NAME"
)


def run_words(commands: PluginCommands, words: list[str]) -> None:
    """The text form of the operations (the REPL's `/plugin ...`); PluginError for a usage mistake too."""
    scope: Scope = "user"
    rest: list[str] = []
    items = iter(words)
    for word in items:
        if word in ("--scope", "-s"):
            value = next(items, "")
            if value not in SCOPES:
                raise PluginError(f"--scope takes user, project or local, not {value!r}.")
            scope = SCOPES[SCOPES.index(value)]
        else:
            rest.append(word)
    verb, args = (rest[0], rest[1:]) if rest else ("list", [])
    single = args[0] if len(args) == 1 else None
    if verb == "marketplace":
        sub, names = (args[0], args[1:]) if args else ("list", [])
        one = names[0] if len(names) == 1 else None
        if sub == "list" and not names:
            return commands.marketplace_list()
        if sub == "add" and one:
            return commands.marketplace_add(one)
        if sub == "update" and len(names) <= 1:
            return commands.marketplace_update(one)
        if sub == "remove" and one:
            return commands.marketplace_remove(one)
    elif verb == "list" and not args:
        return commands.list_installed()
    elif verb == "install" and single:
        return commands.install(single, scope)
    elif verb == "enable" and single:
        return commands.enable(single, scope)
    elif verb == "disable" and single:
        return commands.disable(single, scope)
    elif verb == "uninstall" and single:
        return commands.uninstall(single)
    elif verb == "update" and len(args) <= 1:
        return commands.update(single)
    raise PluginError(PLUGIN_USAGE)
