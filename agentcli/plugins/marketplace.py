"""A marketplace: a folder (a git repository's work tree, usually) with `.claude-plugin/marketplace.json`.

    {"name": "team-tools", "owner": {"name": "..."}, "metadata": {"pluginRoot": "./plugins"},
     "plugins": [
       {"name": "formatter", "source": "./plugins/formatter"},
       {"name": "linter", "source": {"source": "github", "repo": "owner/linter", "ref": "v2"}},
       {"name": "deploy", "source": {"source": "url", "url": "https://git.example.com/deploy.git", "sha": "..."}},
       {"name": "db", "source": {"source": "git-subdir", "url": "...", "path": "plugins/db"}}]}

An entry's source is a path inside the marketplace's folder (`./x`; a bare `x` is under
`metadata.pluginRoot`), or a git repository (`github`, `url`, `git-subdir`), pinned by `sha` or
following `ref`. The marketplace comes from someone else: a path that leads out of its folder (an
absolute path, `..`, a symlink), a name with `/` or `..`, a ref or URL that git could read as an
option, or a source agentcli cannot fetch (`npm`, `pip`) makes that entry unusable, saying why
(`Entry.problem`); the other entries stay usable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.plugins.manifest import PluginError, check_name, inside, read_json_object, shown_name

MARKETPLACE_FILE = Path(".claude-plugin") / "marketplace.json"
GITHUB_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.][A-Za-z0-9_.-]*")
SHA = re.compile(r"[0-9a-fA-F]{7,40}")
REF = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*")


@dataclass(frozen=True)
class GitSource:
    """A git repository, and where the plugin is in it."""

    url: str
    ref: str = ""
    """A branch or tag to check out (empty: the default branch)."""
    sha: str = ""
    """A commit to check out (wins over `ref`)."""
    subdir: str = ""
    """The plugin's folder inside the repository (empty: its top)."""


@dataclass(frozen=True)
class Entry:
    name: str
    fields: Mapping[str, Any]
    """The entry as written (its component keys count as a manifest's, see `manifest.read_plugin`)."""
    folder: Path | None = None
    """A source inside the marketplace's folder."""
    git: GitSource | None = None
    problem: str = ""
    """Why it cannot be installed; empty when it can."""

    @property
    def description(self) -> str:
        value = self.fields.get("description", "")
        return " ".join(value.split()) if isinstance(value, str) else ""


@dataclass(frozen=True)
class Marketplace:
    name: str
    root: Path
    entries: dict[str, Entry] = field(default_factory=dict)
    description: str = ""
    warnings: tuple[str, ...] = ()


def read_marketplace(root: Path, *, folders: bool = True) -> Marketplace:
    """The marketplace in the folder `root` (or `root` is the marketplace.json itself); PluginError if
    unusable. `folders` False: it was fetched as a file from a URL, so it has no folders, and only
    its entries that name a git repository can be installed."""
    path = root if root.is_file() else root / MARKETPLACE_FILE
    folder = (root.parent.parent if root.is_file() else root).resolve()
    if not path.is_file():
        raise PluginError(f"{root} is not a marketplace: it has no {MARKETPLACE_FILE.as_posix()}.")
    data = read_json_object(path)
    name = check_name(data.get("name"), "marketplace")
    plugins = data.get("plugins", [])
    if not isinstance(plugins, list):
        raise PluginError(f'{path}: "plugins" must be a list of plugin entries.')
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    plugin_root = metadata.get("pluginRoot", "") if isinstance(metadata, dict) else ""
    entries: dict[str, Entry] = {}
    warnings: list[str] = []
    for index, item in enumerate(plugins):
        if not isinstance(item, dict):
            warnings.append(f"{path}: plugins[{index}] is not an object; skipped")
            continue
        entry = _entry(item, folder if folders else None, plugin_root if isinstance(plugin_root, str) else "")
        if entry.name in entries:
            warnings.append(f"{path}: plugin {entry.name!r} is listed twice; the first is used")
            continue
        entries[entry.name] = entry
    description = data.get("description") or (metadata.get("description") if isinstance(metadata, dict) else "")
    return Marketplace(name, folder, entries, description if isinstance(description, str) else "", tuple(warnings))


def _entry(item: Mapping[str, Any], folder: Path | None, plugin_root: str) -> Entry:
    raw_name = item.get("name")
    try:
        name = check_name(raw_name)
    except PluginError as error:
        shown = shown_name(raw_name)
        return Entry(shown, item, problem=str(error))
    source = item.get("source")
    try:
        if isinstance(source, str):
            if folder is None:
                raise PluginError(
                    f"its source {source!r} is a folder, and a marketplace fetched from a URL has none: "
                    "only its entries that name a git repository can be installed."
                )
            return Entry(name, item, folder=_folder(folder, source, plugin_root))
        if isinstance(source, dict):
            return Entry(name, item, git=git_source(source))
        raise PluginError("its source must be a path (./plugins/x) or an object naming a git repository.")
    except PluginError as error:
        return Entry(name, item, problem=str(error))


def _folder(folder: Path, source: str, plugin_root: str) -> Path:
    relative = source if source.startswith(("./", "../", "/")) or not plugin_root else f"{plugin_root}/{source}"
    path = inside(folder, relative)
    if path is None:
        raise PluginError(f"its source {source!r} leads outside the marketplace's folder.")
    if not path.is_dir():
        raise PluginError(f"its source {source!r} is not a folder of the marketplace.")
    return path


def git_source(source: Mapping[str, Any]) -> GitSource:
    """The repository a `source` object names; PluginError for one agentcli cannot (or must not) fetch."""
    kind = source.get("source")
    ref, sha = _option(source, "ref", REF), _option(source, "sha", SHA)
    if kind == "github":
        repo = source.get("repo")
        if not isinstance(repo, str) or not GITHUB_REPO.fullmatch(repo) or ".." in repo:
            raise PluginError(f'its "repo" must be owner/name, not {shown_name(repo)}.')
        return GitSource(github_url(repo), ref, sha)
    if kind in ("url", "git", "git-subdir"):
        url = source.get("url")
        if not isinstance(url, str) or not url or url.startswith("-"):
            raise PluginError(f'its "url" must be a git repository\'s address, not {shown_name(url)}.')
        subdir = source.get("path", "") if kind == "git-subdir" else ""
        if not isinstance(subdir, str) or subdir.startswith("/") or ".." in Path(subdir).parts:
            raise PluginError(f'its "path" must be a folder inside the repository, not {shown_name(subdir)}.')
        return GitSource(url, ref, sha, subdir.strip("/"))
    raise PluginError(f"agentcli cannot install a plugin whose source is {shown_name(kind)} (git and folders only).")


def github_url(repo: str) -> str:
    return f"https://github.com/{repo}.git"


def _option(source: Mapping[str, Any], key: str, pattern: re.Pattern[str]) -> str:
    value = source.get(key, "")
    if value == "" or value is None:
        return ""
    if not isinstance(value, str) or not pattern.fullmatch(value) or ".." in value:
        raise PluginError(f'its "{key}" {shown_name(value)} is not a git {"commit" if key == "sha" else "ref"}.')
    return value
