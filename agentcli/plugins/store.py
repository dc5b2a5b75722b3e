"""What is installed: marketplaces and plugins under `$AGENTCLI_HOME/plugins`, each pinned.

    plugins/
      known_marketplaces.json     name → {"source": ..., "installLocation": ..., "commit": ..., "lastUpdated": ...}
      marketplaces/NAME/          a git marketplace's clone (a local folder is read where it is)
      installed_plugins.json      {"version": 2, "plugins": {"name@mkt": [{"installPath": ..., "gitCommitSha": ...}]}}
      cache/MKT/NAME/PIN/         an installed plugin's files, PIN its commit (or content digest)
      .staging/                   work in progress, never read

The two JSON files have the shape of Claude Code's own (`~/.claude/plugins/`), which are read too,
never written: Claude Code's marketplaces are known here (`PluginStore.marketplaces`), and a plugin
installed with Claude Code and enabled in the settings loads (`read_installed`).

Nothing is half-installed: files are fetched and checked in `.staging/` and moved into `cache/`
with one rename, and the records are replaced atomically only then; a failure removes the staged
files. A plugin stays at its pin until `update` fetches its source again.
"""

from __future__ import annotations

import contextlib
import datetime
import difflib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentcli.permissions.persist import locked_beside, write_json_atomically
from agentcli.plugins.fetch import clone, content_digest, copy_folder, head_commit
from agentcli.plugins.manifest import COMPONENT_KEYS, PluginError, check_name, read_json_object, read_plugin
from agentcli.plugins.marketplace import (
    GITHUB_REPO,
    MARKETPLACE_FILE,
    GitSource,
    Marketplace,
    git_source,
    github_url,
    read_marketplace,
)
from agentcli.plugins.remote import fetch_marketplace_file, is_marketplace_url
from agentcli.settings import claude_home

KNOWN_FILE = "known_marketplaces.json"
INSTALLED_FILE = "installed_plugins.json"
DIRECT = "local"
"""The marketplace name of a plugin installed from a folder or git URL directly."""


@dataclass(frozen=True)
class KnownMarketplace:
    name: str
    source: dict[str, Any]
    """`{"source": "directory", "path": ...}`, `{"source": "git", "url": ...}` or
    `{"source": "github", "repo": ...}`."""
    location: Path
    claude: bool = False
    """Claude Code's (`~/.claude/plugins/known_marketplaces.json`): read, never updated or removed here."""


@dataclass(frozen=True)
class Installed:
    key: str
    """`name@marketplace`."""
    path: Path
    commit: str = ""
    version: str = ""
    source: dict[str, Any] | None = None
    """How to fetch it again (`update`)."""
    entry: dict[str, Any] | None = None
    """Its marketplace entry's components (`strict: false`, or more than its manifest names)."""

    @property
    def name(self) -> str:
        return self.key.rpartition("@")[0]

    @property
    def marketplace(self) -> str:
        return self.key.rpartition("@")[2]


@dataclass(frozen=True)
class Staged:
    """A plugin's files fetched into `.staging/`, not yet installed."""

    key: str
    folder: Path
    """The plugin's files."""
    commit: str
    source: dict[str, Any]
    work: Path
    """The staging folder to remove (or move from)."""
    entry: dict[str, Any] | None = None
    """Its marketplace entry's components, if it names any."""


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def parse_source(text: str) -> dict[str, Any]:
    """A marketplace or plugin source as the user typed it: a local folder, a git URL, GitHub's
    owner/repo, or the URL of a marketplace file (`https://…/marketplace.json`)."""
    if is_marketplace_url(text):
        return {"source": "url", "url": text}
    path = Path(text).expanduser()
    if path.is_dir() and (path / "HEAD").is_file() and (path / "objects").is_dir():  # a bare repository
        return {"source": "git", "url": str(path.resolve())}
    if path.exists():
        return {"source": "directory", "path": str(path.resolve())}
    if "://" in text or text.startswith("git@") or text.endswith(".git"):
        if text.startswith("-"):
            raise PluginError(f"{text!r} is not a git URL.")
        return {"source": "git", "url": text}
    if GITHUB_REPO.fullmatch(text) and ".." not in text:
        return {"source": "github", "repo": text}
    raise PluginError(f"{text!r} is not a folder, a git URL or a GitHub owner/repo.")


def source_git(source: dict[str, Any]) -> GitSource | None:
    """The repository of a recorded source; None for a local folder."""
    if source.get("source") == "github":
        return GitSource(github_url(str(source.get("repo", ""))))
    if source.get("source") == "git":
        return GitSource(str(source.get("url", "")))
    return None


def is_local(source: dict[str, Any]) -> bool:
    """A folder read where it is (nothing fetched, nothing to update)."""
    return source.get("source") == "directory"


def _folders_in(source: dict[str, Any]) -> bool:
    """Whether a marketplace from `source` has folders its entries may name (not a fetched file)."""
    return source.get("source") != "url"


def shown_source(source: dict[str, Any]) -> str:
    if "marketplace" in source:
        return f"the marketplace {source['marketplace']}"
    return str(source.get("path") or source.get("url") or source.get("repo") or source)


class PluginStore:
    def __init__(self, home: Path, claude: Path | None = None) -> None:
        """`home`: `$AGENTCLI_HOME`; `claude`: Claude Code's folder (`~/.claude`), whose
        marketplaces are known here too, read where Claude Code keeps them and never changed."""
        self.root = home / "plugins"
        self.claude_root = (claude or claude_home()) / "plugins"

    # ------------------------------------------------------------------ marketplaces

    def marketplaces(self) -> dict[str, KnownMarketplace]:
        """agentcli's marketplaces, and Claude Code's that agentcli has not added itself."""
        known: dict[str, KnownMarketplace] = {}
        claude_file = self.claude_root / KNOWN_FILE
        try:
            claude_records = read_json_object(claude_file) if claude_file.exists() else {}
        except PluginError:
            claude_records = {}  # Claude Code's file, read leniently: unreadable is as good as absent
        for records, claude in ((claude_records, True), (self._read(KNOWN_FILE), False)):
            for name, record in records.items():
                if isinstance(record, dict) and isinstance(record.get("source"), dict):
                    location = record.get("installLocation")
                    if isinstance(location, str):
                        known[name] = KnownMarketplace(name, record["source"], Path(location), claude)
        return known

    def marketplace(self, name: str) -> Marketplace:
        known = self.marketplaces().get(name)
        if known is None:
            listed = ", ".join(sorted(self.marketplaces())) or "none yet"
            raise PluginError(
                f"No marketplace {name!r} (added: {listed}); add it with: agentcli plugin marketplace add SOURCE"
            )
        return read_marketplace(known.location, folders=_folders_in(known.source))

    def add_marketplace(self, source: dict[str, Any]) -> Marketplace:
        """Add (clone, or fetch) the marketplace `source`; PluginError if it cannot be read or its name is taken."""
        if is_local(source):
            market = read_marketplace(Path(source["path"]))
            self._claim_marketplace(market.name, source)
            self._record_marketplace(market.name, source, market.root, "")
            return market
        with self._staging() as work:
            commit = _fetch_marketplace(source, work / "clone")
            market = read_marketplace(work / "clone", folders=_folders_in(source))
            self._claim_marketplace(market.name, source)
            final = self.root / "marketplaces" / market.name
            final.parent.mkdir(parents=True, exist_ok=True)
            (work / "clone").rename(final)
        self._record_marketplace(market.name, source, final, commit)
        return read_marketplace(final, folders=_folders_in(source))

    def update_marketplace(self, name: str) -> Marketplace:
        """Fetch the marketplace `name` again (a local folder is read where it is)."""
        known = self._own(name)
        if is_local(known.source):
            return read_marketplace(known.location)
        with self._staging() as work:
            commit = _fetch_marketplace(known.source, work / "clone")
            market = read_marketplace(work / "clone", folders=_folders_in(known.source))
            if market.name != name:
                raise PluginError(
                    f"{shown_source(known.source)} now names its marketplace {market.name!r}, not {name!r}."
                )
            old = work / "old"
            if known.location.exists():
                known.location.rename(old)
            (work / "clone").rename(known.location)
        self._record_marketplace(name, known.source, known.location, commit)
        return market

    def remove_marketplace(self, name: str) -> None:
        known = self._own(name)
        self._update(KNOWN_FILE, lambda records: records.pop(name, None))
        clones = self.root / "marketplaces"
        if clones in known.location.parents:
            shutil.rmtree(known.location, ignore_errors=True)

    def _own(self, name: str) -> KnownMarketplace:
        known = self.marketplaces().get(name)
        if known is None:
            raise PluginError(f"No marketplace {name!r}.")
        if known.claude:
            raise PluginError(f"The marketplace {name} is Claude Code's: update or remove it with Claude Code.")
        return known

    def _claim_marketplace(self, name: str, source: dict[str, Any]) -> None:
        if name == DIRECT:
            raise PluginError(
                f"A marketplace cannot be called {DIRECT!r}: agentcli keeps that name for plugins installed directly."
            )
        known = self.marketplaces().get(name)
        if known is not None and not known.claude:
            raise PluginError(
                f"A marketplace named {name!r} is already added (from {shown_source(known.source)}); "
                f"update it with: agentcli plugin marketplace update {name}"
            )

    def _record_marketplace(self, name: str, source: dict[str, Any], location: Path, commit: str) -> None:
        record = {"source": source, "installLocation": str(location), "commit": commit, "lastUpdated": now()}
        self._update(KNOWN_FILE, lambda records: records.__setitem__(name, record))

    # ------------------------------------------------------------------ plugins

    def installed(self) -> dict[str, Installed]:
        return read_installed(self.root / INSTALLED_FILE)

    def stage_from_marketplace(self, name: str, market: Marketplace) -> Staged:
        """Fetch the plugin `name` of `market` into the staging folder."""
        entry = market.entries.get(name)
        if entry is None:
            close = difflib.get_close_matches(name, list(market.entries), n=3)
            hint = f"did you mean {', '.join(close)}?" if close else f"it lists {len(market.entries)}"
            raise PluginError(f"The marketplace {market.name!r} has no plugin {name!r} ({hint}).")
        if entry.problem:
            raise PluginError(
                f"The plugin {name!r} of the marketplace {market.name!r} cannot be installed: {entry.problem}"
            )
        source = {"marketplace": market.name}
        components = {key: value for key, value in entry.fields.items() if key in COMPONENT_KEYS} or None
        if entry.folder is not None:
            ours = self.root / "marketplaces" in market.root.parents  # a clean clone: its commit pins it
            commit = head_commit(market.root) if ours else ""
            return replace(self._stage_folder(f"{name}@{market.name}", entry.folder, source, commit), entry=components)
        assert entry.git is not None
        return replace(self._stage_git(f"{name}@{market.name}", entry.git, source), entry=components)

    def stage_direct(self, source: dict[str, Any]) -> Staged:
        """Fetch a plugin from a folder or git URL (`parse_source`); its key is `NAME@local`, NAME from its files."""
        if source.get("source") == "url":
            raise PluginError(
                f"{source.get('url')} is a marketplace file, not a plugin: add it with "
                f"agentcli plugin marketplace add {source.get('url')}, then install from it."
            )
        repo = source_git(source)
        if repo is None:
            folder = Path(source["path"])
            name = read_plugin(folder).name
            return self._stage_folder(f"{name}@{DIRECT}", folder, source, "")
        staged = self._stage_git(f"?@{DIRECT}", repo, source)
        try:
            name = read_plugin(staged.folder).name
        except PluginError:
            shutil.rmtree(staged.work, ignore_errors=True)
            raise
        return Staged(f"{name}@{DIRECT}", staged.folder, staged.commit, source, staged.work)

    def _stage_folder(self, key: str, folder: Path, source: dict[str, Any], commit: str) -> Staged:
        work = self._new_staging()
        try:
            copy_folder(folder, work / "plugin")
            pin = commit or content_digest(work / "plugin")
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return Staged(key, work / "plugin", pin, source, work)

    def _stage_git(self, key: str, repo: GitSource, source: dict[str, Any]) -> Staged:
        work = self._new_staging()
        try:
            commit = clone(repo.url, work / "clone", ref=repo.ref, sha=repo.sha)
            folder = (work / "clone" / repo.subdir) if repo.subdir else work / "clone"
            if not folder.is_dir():
                raise PluginError(f"{repo.url} has no folder {repo.subdir!r}.")
            copy_folder(folder, work / "plugin")
            shutil.rmtree(work / "clone", ignore_errors=True)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return Staged(key, work / "plugin", commit, source, work)

    def commit(self, staged: Staged, version: str) -> Installed:
        """Move `staged` into place and record it (replacing an earlier pin of the same plugin).
        Should the record not be written, the files go back out: nothing is half-installed."""
        name, _, market = staged.key.rpartition("@")
        check_name(name)
        final = self.root / "cache" / market / name / staged.commit[:16]
        earlier = self.installed().get(staged.key)
        record = {
            "scope": "user",
            "installPath": str(final),
            "version": version,
            "gitCommitSha": staged.commit,
            "installedAt": now(),
            "lastUpdated": now(),
            "source": staged.source,
            **({"entry": staged.entry} if staged.entry else {}),
        }
        try:
            if final.exists():  # the same pin again: the new copy replaces it
                final.rename(staged.work / "old")
            final.parent.mkdir(parents=True, exist_ok=True)
            staged.folder.rename(final)
            try:
                self._update(INSTALLED_FILE, lambda records: _plugins(records).__setitem__(staged.key, [record]))
            except BaseException:
                final.rename(staged.work / "unrecorded")
                raise
        except OSError as error:
            raise PluginError(f"Cannot install {staged.key} under {self.root}: {error.strerror or error}.") from None
        finally:
            shutil.rmtree(staged.work, ignore_errors=True)
        if earlier is not None and earlier.path != final and self.root in earlier.path.parents:
            shutil.rmtree(earlier.path, ignore_errors=True)
        return Installed(staged.key, final, staged.commit, version, staged.source, staged.entry)

    def discard(self, staged: Staged) -> None:
        shutil.rmtree(staged.work, ignore_errors=True)

    def uninstall(self, key: str) -> Installed:
        installed = self.installed().get(key)
        if installed is None:
            raise PluginError(f"{key} is not installed (agentcli plugin list shows what is).")
        self._update(INSTALLED_FILE, lambda records: _plugins(records).pop(key, None))
        if self.root in installed.path.parents:
            shutil.rmtree(installed.path, ignore_errors=True)
        return installed

    # ------------------------------------------------------------------ files

    def _read(self, name: str) -> dict[str, Any]:
        path = self.root / name
        if not path.exists():
            return {}
        return read_json_object(path)

    def _update(self, name: str, change: Callable[[dict[str, Any]], object]) -> None:
        """Read one of the store's files, let `change` edit it in place and write it back, with
        other agentcli processes kept out meanwhile (two installs at once both stay recorded)."""
        self.root.mkdir(parents=True, exist_ok=True)
        with locked_beside(self.root / name):
            records = self._read(name)
            change(records)
            write_json_atomically(self.root / name, records)

    def _new_staging(self) -> Path:
        staging = self.root / ".staging"
        staging.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(dir=staging))

    @contextlib.contextmanager
    def _staging(self) -> Iterator[Path]:
        work = self._new_staging()
        try:
            yield work
        finally:
            shutil.rmtree(work, ignore_errors=True)


def read_installed(path: Path) -> dict[str, Installed]:
    """The plugins an `installed_plugins.json` records (agentcli's or Claude Code's: version 1 or 2), leniently."""
    try:
        data = read_json_object(path) if path.exists() else {}
    except PluginError:
        return {}
    plugins = data.get("plugins")
    found: dict[str, Installed] = {}
    if not isinstance(plugins, dict):
        return found
    for key, value in plugins.items():
        record = value[0] if isinstance(value, list) and value else value
        if not isinstance(record, dict) or not isinstance(record.get("installPath"), str) or "@" not in key:
            continue
        found[key] = Installed(
            key,
            Path(record["installPath"]),
            str(record.get("gitCommitSha") or ""),
            str(record.get("version") or ""),
            record.get("source") if isinstance(record.get("source"), dict) else None,
            record.get("entry") if isinstance(record.get("entry"), dict) else None,
        )
    return found


__all__ = ["DIRECT", "Installed", "KnownMarketplace", "PluginStore", "Staged", "git_source", "parse_source"]


def _plugins(records: dict[str, Any]) -> dict[str, Any]:
    """The `plugins` object of an `installed_plugins.json` (made version 2, as written here)."""
    plugins = records.get("plugins")
    if not isinstance(plugins, dict):
        plugins = records["plugins"] = {}
    records["version"] = 2
    return plugins


def _fetch_marketplace(source: dict[str, Any], dest: Path) -> str:
    """A git or URL marketplace fetched into the new folder `dest`; its pin (a commit, or the file's digest)."""
    if source.get("source") == "url":
        return fetch_marketplace_file(str(source.get("url", "")), dest / MARKETPLACE_FILE)
    repo = source_git(source)
    if repo is None:
        raise PluginError(f"agentcli cannot fetch a marketplace from {shown_source(source)}.")
    return clone(repo.url, dest)
