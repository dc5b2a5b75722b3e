"""What a sandboxed command sees of the machine: where it may write, what is hidden from it, and
which of the project's own files stay read-only.

- Everything is readable, except the secret places (`SECRET_PLACES` in the home folder,
  agentcli's and Claude Code's home folders, `/etc/shadow`, and `sandbox.filesystem.denyRead`),
  which look empty; `filesystem.allowRead` shows a path inside one again. A hidden folder that
  holds the project (`denyRead: ["~"]` with the project in the home folder, or a batch's folder
  of task workspaces) looks empty but for the project, and any writable path, inside it.
- Writable: the project, `filesystem.allowWrite`, and the sandbox's own temporary folder.
- Read-only even there: the protected paths (`permissions.protected`: `.git/hooks` and
  `.git/config`, agentcli's and Claude Code's configuration, skills and commands, `.mcp.json`,
  editor and package-manager settings that run programs), and `filesystem.denyWrite`.
- The Unix sockets of `network.allowUnixSockets` are bound in at their own paths, even where
  the sandbox hides what is around them (`/run`, `/tmp`, a secret place); read-only, which
  does not stop a `connect`, only a `chmod`.

The protected paths at the project's root are judged again before every command
(`RootGuard`), so one created during the session (by you, or by an approved Write) is
read-only for the next command; those deeper down are found once, when the sandbox starts
(`nested_protected`, down to `NESTED_DEPTH` folders). A folder holding a nested one is bound
onto itself (`Layout.pinned`), so it cannot be renamed away and replaced.

Where agentcli's and Claude Code's configuration folders are missing at the root
(`GUARDED_WHEN_MISSING`, and `.git/hooks`), a command could create them and so approve itself:
for as long as a command runs, a placeholder holds each such name (mounted onto itself inside,
so it can be neither removed nor replaced), and is removed after. The placeholder is a named
pipe: git ignores it, so `git status` and `git add -A` in the sandbox see the project as it is,
and making and removing one costs the file system no block (an empty folder's removal waited
milliseconds on the journal). A missing `.mcp.json` is not held: a command may create one, and
its servers then wait for your approval as a checked-in file's do.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.permissions.protected import PROTECTED_DIRS, PROTECTED_FILES
from agentcli.workspace.sandbox_settings import SandboxSettings

SECRET_PLACES = (
    ".ssh",
    ".aws",
    ".config/gcloud",
    ".gnupg",
    ".netrc",
    ".azure",
    ".kube",
    ".docker",
    ".config/gh",
    ".git-credentials",
    ".pypirc",
    ".password-store",
    ".local/share/keyrings",
    ".claude",
    ".claude.json",
)
"""In the home folder: keys, tokens and credentials of common tools, and Claude Code's home."""
SECRET_FILES = ("/etc/shadow", "/etc/gshadow")
"""Readable by a root user's commands otherwise."""
GUARDED_WHEN_MISSING = (".agentcli", ".claude", ".commands")
"""Configuration folders agentcli or Claude Code would trust at the project's root, held while a
command runs if absent."""
NESTED_DEPTH = 3
NESTED_LIMIT = 20_000
"""Folder entries looked at, at most, for nested protected paths."""
_SKIPPED = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".cache", "target"})
"""Folders never searched for nested protected paths (their contents are built, not configuration)."""
GIT_PROTECTED = ("hooks", "config")
_ROOT_NAMES = tuple(sorted({*PROTECTED_DIRS, *PROTECTED_FILES} - {".git"}))


@dataclass(frozen=True)
class Layout:
    """The mounts of one sandbox, as real paths that exist (see the module's docstring)."""

    project: Path
    writable: tuple[Path, ...]
    """The project first, then `filesystem.allowWrite`."""
    hidden: tuple[Path, ...]
    """Secret places and `filesystem.denyRead`: folders look empty (but for the writable paths
    inside them), files read as empty."""
    shown: tuple[Path, ...] = ()
    """`filesystem.allowRead` paths inside hidden folders, or in the machine's `/tmp` (which the
    sandbox replaces with its own)."""
    pinned: tuple[Path, ...] = ()
    """Folders holding nested protected paths, bound onto themselves so they cannot be moved."""
    read_only: tuple[Path, ...] = ()
    """Nested protected paths and `filesystem.denyWrite`."""
    sockets: tuple[Path, ...] = ()
    """`network.allowUnixSockets` that are sockets."""
    unresolved: tuple[str, ...] = field(default=(), compare=False)
    """Paths the settings name that do not exist (nothing to mount), for /sandbox."""


PRIVATE_TMP = Path("/tmp")
"""Where the sandbox mounts its own folder instead of the machine's."""


def plan_layout(project: Path, settings: SandboxSettings, home: Path, homes: Sequence[Path]) -> Layout:
    """The layout for `project` (its real path), with `homes` (agentcli's, Claude Code's) hidden too."""
    missing: list[str] = []

    def existing(texts: Sequence[str]) -> list[Path]:
        found = []
        for text in texts:
            path = setting_path(text, project, home)
            if path is None:
                missing.append(text)
            else:
                found.append(path)
        return found

    secret = [home / place for place in SECRET_PLACES] + list(homes) + [Path(p) for p in SECRET_FILES]
    hidden = [p for p in (_real(path) for path in secret) if p is not None] + existing(settings.deny_read)
    hidden = [p for p in dict.fromkeys(hidden) if p != project]  # the project stays visible (bound back in)
    writable = [project, *(p for p in existing(settings.allow_write) if p != project)]
    pinned, read_only = nested_protected(project)
    read_only += [p for p in existing(settings.deny_write) if any(_within(p, w) for w in writable)]
    read_only += [p for p in own_install() if not _within(p, project)]
    shown = [
        p
        for p in existing(settings.allow_read)
        if any(_within(p, h) and p != h for h in hidden) or _within(p, PRIVATE_TMP)
    ]
    sockets = []
    for text in settings.unix_sockets:
        path = setting_path(text, project, home)
        if path is not None and stat.S_ISSOCK(path.stat().st_mode):
            sockets.append(path)
        else:
            missing.append(text)  # not there (yet), or not a socket: nothing is bound
    return Layout(
        project=project,
        writable=tuple(writable),
        hidden=tuple(hidden),
        shown=tuple(shown),
        pinned=tuple(pinned),
        read_only=tuple(dict.fromkeys(read_only)),
        sockets=tuple(dict.fromkeys(sockets)),
        unresolved=tuple(missing),
    )


def own_install() -> list[Path]:
    """agentcli's interpreter and package where the sandbox's private `/tmp` would hide them (a
    checkout or virtual environment under /tmp): the supervisor inside runs from them."""
    import agentcli

    places = (sys.prefix, sys.base_prefix, sys.exec_prefix, Path(agentcli.__file__).parent.parent)
    real = [p for p in (_real(Path(place)) for place in places) if p is not None]
    return [p for p in dict.fromkeys(real) if _within(p, PRIVATE_TMP)]


def setting_path(text: str, project: Path, home: Path) -> Path | None:
    """A path named in the settings (absolute, `~/…`, or relative to the project), resolved; None
    when it does not exist."""
    path = home / text[2:] if text.startswith("~/") else Path(text)
    return _real(path if path.is_absolute() else project / path)


def nested_protected(project: Path) -> tuple[list[Path], list[Path]]:
    """Protected paths below the project's root folders (down to `NESTED_DEPTH`), and the
    folders holding them: (pinned, read-only)."""
    pinned: dict[Path, None] = {}
    read_only: list[Path] = []
    budget = [NESTED_LIMIT]

    def walk(folder: Path, depth: int) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        budget[0] -= len(entries)
        for entry in entries:
            name = entry.name.lower()
            if depth > 0 and (name in PROTECTED_DIRS or name in PROTECTED_FILES):
                found = _protected_in(Path(entry.path))
                if found:
                    read_only.extend(found)
                    for parent in Path(entry.path).parents:
                        if parent == project:
                            break
                        pinned[parent] = None
                    if name == ".git" and entry.is_dir(follow_symlinks=False):
                        pinned[Path(entry.path)] = None
                continue
            if (
                depth < NESTED_DEPTH
                and budget[0] > 0
                and name not in _SKIPPED
                and entry.is_dir(follow_symlinks=False)
                and not (depth == 0 and name in PROTECTED_DIRS)
            ):
                walk(Path(entry.path), depth + 1)

    walk(project, 0)
    modules = project / ".git" / "modules"
    for module in _git_modules(modules):
        pinned[module] = None
        read_only.extend(p for p in (module / name for name in GIT_PROTECTED) if p.exists())
    return sorted(pinned, key=lambda p: len(p.parts)), read_only


def _git_modules(folder: Path, depth: int = 0) -> list[Path]:
    """The git folders of submodules (`.git/modules/NAME`, and theirs below `modules/`)."""
    found: list[Path] = []
    try:
        entries = [Path(e.path) for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return found
    for entry in entries:
        if (entry / "HEAD").exists():
            found.append(entry)
            if depth < NESTED_DEPTH:
                found += _git_modules(entry / "modules", depth + 1)
    return found


def _protected_in(path: Path) -> list[Path]:
    """What to make read-only for the protected path `path`: a git folder's hooks and config, else the path itself."""
    if path.name.lower() == ".git" and path.is_dir() and not path.is_symlink():
        return [p for p in (path / name for name in GIT_PROTECTED) if p.exists()]
    return [path] if not path.is_symlink() else []


@dataclass(frozen=True)
class RootProtection:
    """The mounts a command needs for the project's root, judged just before it starts."""

    pinned: tuple[str, ...]
    """Bound onto themselves, so that they can be neither moved nor replaced: the git folder, and
    the placeholders of the missing protected paths."""
    read_only: tuple[str, ...]
    """The protected paths there."""


class RootGuard:
    """The protected paths at the project's root, judged again for every command; holds the
    placeholders of the missing ones while commands run (counted: commands may overlap).

    Judged on every command, in plain strings and `os` calls (a few tenths of a millisecond, most
    of it the placeholders' own calls), not cached by the root's modification time: its
    granularity (a clock tick) would let a configuration folder made just after a command slip
    past the next one."""

    def __init__(self, project: Path, writable: Sequence[Path]) -> None:
        self._project = str(project)
        self._writable = tuple(str(path) for path in writable)
        self._lock = threading.Lock()
        self._held: dict[str, tuple[int, int]] = {}
        """Placeholder → (its inode, how many commands hold it)."""

    @contextlib.contextmanager
    def for_command(self) -> Iterator[RootProtection]:
        taken: list[str] = []
        try:
            with self._lock:
                protection = self._judge(taken)
            yield protection
        finally:
            with self._lock:
                for path in taken:
                    self._release(path)

    def _judge(self, taken: list[str]) -> RootProtection:
        pinned: list[str] = []
        read_only: list[str] = []

        def judge(path: str, there: bool, guarded: bool) -> None:
            """Read-only if it is there; held (if `guarded`) while it is not."""
            if (path in self._held or (guarded and not there)) and self._hold(path):
                taken.append(path)
                pinned.append(path)  # a named pipe holds nothing to write: bound onto itself is enough
                return
            if not there:
                return
            try:  # its folder is real already: only a symlink needs resolving
                real = os.path.realpath(path, strict=True) if stat.S_ISLNK(os.lstat(path).st_mode) else path
            except OSError:
                return
            if any(_within_text(real, w) for w in self._writable):
                read_only.append(real)

        try:
            present = {name.lower(): name for name in os.listdir(self._project)}
        except OSError:
            present = {}
        if ".git" in present:
            git = os.path.join(self._project, present[".git"])
            try:
                git_is_folder = stat.S_ISDIR(os.lstat(git).st_mode)
            except OSError:
                git_is_folder = False
            if git_is_folder:
                pinned.append(git)
                hooks = os.path.join(git, "hooks")
                judge(hooks, os.path.lexists(hooks), guarded=True)
                judge(os.path.join(git, "config"), True, guarded=False)
            else:
                judge(git, True, guarded=False)
        for name in _ROOT_NAMES:
            there = name in present
            judge(os.path.join(self._project, present.get(name, name)), there, guarded=name in GUARDED_WHEN_MISSING)
        return RootProtection(tuple(pinned), tuple(dict.fromkeys(read_only)))

    def _hold(self, path: str) -> bool:
        """Take `path`'s placeholder (made now if it is missing); False when something else is there."""
        if path in self._held:
            inode, count = self._held[path]
            if _inode(path) == inode:
                self._held[path] = (inode, count + 1)
                return True
            del self._held[path]
        try:
            os.mkfifo(path, 0o600)  # never follows a symlink: one in its place makes this fail
        except OSError:
            return False
        made = _inode(path)
        if made is None:
            return False
        self._held[path] = (made, 1)
        return True

    def _release(self, path: str) -> None:
        inode, count = self._held.get(path, (0, 0))
        if count > 1:
            self._held[path] = (inode, count - 1)
            return
        self._held.pop(path, None)
        try:
            info = os.lstat(path)
        except OSError:
            return
        if info.st_ino == inode and stat.S_ISFIFO(info.st_mode):
            with contextlib.suppress(OSError):
                os.unlink(path)


def _inode(path: str) -> int | None:
    try:
        return os.lstat(path).st_ino
    except OSError:
        return None


def _within_text(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _real(path: Path) -> Path | None:
    """`path` resolved, when it exists."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return real


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
