"""The shadow repository: a git repository agentcli owns, holding snapshots of a project's work tree.

It lives at `$AGENTCLI_HOME/checkpoints/<project slug>-<hash>/` (`context.paths.project_slug`)
and is used with the project as its work tree, so git's own machinery does the work: the
ignore rules (`.gitignore` files, `~/.config/git/ignore`), the stat cache of its index (only
files whose size or time changed are read again) and the untracked cache (only folders that
changed are listed again). Nothing of the user's repository is read or written: not its
`.git` (git never adds a `.git` path), not its index, refs, config, hooks, stash or reflog;
and the project need not be a git repository at all.

What a snapshot holds: every file git would add (`git add -A`), except what it says it
skipped: files over the size limit, files it cannot read, other git repositories inside the
project (a submodule, a nested clone: their own `.git` holds them). FIFOs, sockets and devices
are not files and are never listed. Symlinks are recorded as links (their target's text), never
followed. A snapshot of a tree that did not change adds nothing: it is the last one again.

git runs with no configuration but the shadow repository's (no system or global file, so no
filter, hook or fsmonitor the user or the project configured runs) and with every attribute
that would change bytes on the way in or out turned off (`info/attributes`), so what is
restored is byte for byte what was recorded. It runs as agentcli's own program, outside any
sandbox (the sandbox may not write `$AGENTCLI_HOME`), with the environment every child gets and
no GIT_* variable of the caller's.

Two ways to record: `snapshot` looks at the whole tree (one `git status`, then only what changed
is added); `snapshot_paths` records a few named paths on top of an earlier snapshot, making the
objects itself (`objects`), for the end of a turn whose every change was a path a call declared.

Several threads and processes use one shadow repository: hold `locked()` around anything that
changes it (a flock on `agentcli.lock` beside it, and a thread lock).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentcli.checkpoints.objects import (
    EXECUTABLE_MODE,
    FILE_MODE,
    LINK_MODE,
    TREE_MODE,
    Entry,
    LooseObjects,
    NotLoose,
)
from agentcli.context.paths import project_slug
from agentcli.credentials import child_environment

MANY_PATHS = 200
"""Above this many changed paths, one `git add -A` over the tree is cheaper than naming each."""
READ_WHOLE_BYTES = 32_000_000
"""A declared file up to this size is read at once to be stored; a bigger one is left to git, which streams it."""
GIT_TIMEOUT_S = 600.0
"""A checkpoint of a huge first tree takes a while; a hung git does not hang the session forever."""
CONFIG = """\
[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tautocrlf = false
\tquotePath = false
\tuntrackedCache = true
\tsplitIndex = true
\tfsmonitor = false
\tlogAllRefUpdates = false
[index]
\tversion = 4
[splitIndex]
\tsharedIndexExpire = now
[gc]
\tauto = 0
"""
ATTRIBUTES = "* -text -filter -ident -working-tree-encoding\n"
"""`info/attributes` wins over the project's `.gitattributes`: bytes are stored as they are."""
_THREAD_LOCKS: dict[Path, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


class CheckpointError(Exception):
    """A checkpoint could not be recorded or read; the message says why and what to do."""


class GitMissing(CheckpointError):
    """git is not installed: no checkpoint can be recorded."""


class _WholeTree(Exception):
    """A declared path cannot be recorded by itself: record the whole tree."""


class _Keep:
    """Leave the entry as the earlier snapshot has it (a folder that is still one)."""


KEEP = _Keep()


@dataclass(frozen=True)
class Snapshot:
    """The work tree as recorded: its commit in the shadow repository, and what was left out."""

    commit: str
    skipped: tuple[str, ...] = ()
    """One line per path left out: `path: why` (over the size limit, unreadable, a repository of its own)."""


@dataclass
class _Scan:
    """What `git status` says differs from the last snapshot, sorted for recording."""

    head: str | None = None
    """The last snapshot's commit; None before the first."""
    index_differs: bool = False
    """A tracked path changed: the index's tree is not the last snapshot's any more."""
    changed: list[bytes] = field(default_factory=list)
    """Paths to record again."""
    tracked_left_out: list[bytes] = field(default_factory=list)
    """Paths left out that an earlier snapshot holds (to drop from the index)."""
    left_out: list[bytes] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def leave_out(self, path: bytes, why: str) -> None:
        self.left_out.append(path.rstrip(b"/"))
        self.skipped.append(f"{os.fsdecode(path.rstrip(b'/'))}: {why}")


@dataclass(frozen=True)
class TreeChange:
    """One path that differs between two snapshots (`git diff-tree --raw`)."""

    path: bytes
    status: str
    """`A` only in the newer, `D` only in the older, `M` changed, `T` changed kind (file ↔ link)."""
    old_mode: str
    new_mode: str
    new_blob: str
    old_blob: str = ""

    @property
    def name(self) -> str:
        return os.fsdecode(self.path)


def shadow_folder(root: Path, home: Path) -> Path:
    """Where the shadow repository of the project at `root` lives."""
    return home / "checkpoints" / project_slug(root)


class ShadowRepo:
    """The shadow repository of one project (see the module's docstring)."""

    def __init__(self, root: Path, folder: Path, max_file_bytes: int) -> None:
        self.root = root
        self.folder = folder
        self.max_file_bytes = max_file_bytes
        self._git_dir = folder / "git"
        self._real_root = Path(os.path.realpath(root))
        self._commits: dict[str, tuple[str, str]] = {}
        """Commit → (tree, message) of the snapshots seen: a snapshot that changed nothing needs no git to say so."""

    # ------------------------------------------------------------------ locking and set-up

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the repository for this thread and process (waits for another that holds it)."""
        with _thread_lock(self.folder):
            try:
                self.folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # it holds the projects' files
                self.folder.mkdir(exist_ok=True, mode=0o700)
                fd = os.open(self.folder / "agentcli.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as error:
                raise CheckpointError(f"cannot create {self.folder}: {error.strerror or error}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._drop_stale_locks()
                self._ensure_initialised()
                yield
            finally:
                os.close(fd)  # releases the flock

    def _drop_stale_locks(self) -> None:
        """git's own lock files left by a git that was killed: with our lock held, nobody else is in there."""
        for name in ("index.lock", "HEAD.lock", "packed-refs.lock"):
            with contextlib.suppress(OSError):
                (self._git_dir / name).unlink()

    def _ensure_initialised(self) -> None:
        config = self._git_dir / "config"
        if (self._git_dir / "HEAD").exists():
            with contextlib.suppress(OSError):  # one made by an earlier agentcli: today's settings
                if config.read_text(encoding="ascii", errors="replace") != CONFIG:
                    config.write_text(CONFIG, encoding="ascii")
            return
        self._git(["init", "-q", "--bare", "--template=", str(self._git_dir)], work_tree=False)
        try:
            config.write_text(CONFIG, encoding="ascii")
            (self._git_dir / "info").mkdir(exist_ok=True)
            (self._git_dir / "info" / "attributes").write_text(ATTRIBUTES, encoding="ascii")
        except OSError as error:
            raise CheckpointError(f"cannot set up {self._git_dir}: {error.strerror or error}") from None

    @property
    def exists(self) -> bool:
        return (self._git_dir / "HEAD").exists()

    # ------------------------------------------------------------------ recording

    def snapshot(self, refs: Sequence[str] = ()) -> Snapshot:
        """Record the work tree as it is now and point `refs` at it (under `locked()`). Raises CheckpointError.

        One `git status` finds what changed since the last snapshot (the index's stat cache and the
        untracked cache spare it reading files and folders that did not change); only those are
        added. An unchanged tree costs that `status` and the refs' update."""
        scan = self._scan()
        if scan.tracked_left_out:  # an earlier, smaller version must not stand for what is there now
            self._git(
                ["rm", "-r", "-q", "-f", "--cached", "--ignore-unmatch", *_from_stdin()],
                _literal(scan.tracked_left_out),
            )
        if len(scan.changed) > MANY_PATHS:
            excluded = [b":(exclude,literal)" + path for path in scan.left_out]
            self._git(["add", "-A", "--ignore-errors", *_from_stdin()], _nul_list([b":(top)", *excluded]))
        elif scan.changed:
            self._git(["add", "-A", "--ignore-errors", *_from_stdin()], _literal(scan.changed))
        index_moved = scan.index_differs or bool(scan.changed or scan.tracked_left_out)
        commit = self._commit(scan.head, _message(scan.left_out), refs, index_moved=index_moved)
        return Snapshot(commit, tuple(scan.skipped))

    def snapshot_paths(self, base: str, paths: Sequence[Path], refs: Sequence[str] = ()) -> Snapshot | None:
        """Snapshot `base` with only `paths` recorded again as they are now, without looking at the
        rest of the tree (under `locked()`): the objects are made here (`objects.LooseObjects`),
        and the refs written here too (one git says which new paths are ignored, if any). None
        when that would not be what a whole snapshot records: a path left out (too big,
        unreadable, not a file), beyond a symlink or inside another repository, or an object not
        stored loose; record the whole tree then. Paths outside the project are not recorded
        either way. The index is not updated: the next whole snapshot finds these paths changed
        against it and records them again, adding nothing new."""
        names = [name for name in (self._name_in_project(path) for path in paths) if name is not None]
        if any(not self._recordable_alone(name) for name in names):
            return None
        return self._snapshot_on(base, names, lambda objects, name, _: self._entry_now(objects, name), refs)

    def snapshot_changes(
        self, base: str, paths: Collection[bytes], folders: Collection[bytes], refs: Sequence[str] = ()
    ) -> Snapshot | None:
        """Snapshot `base` with `paths` (relative, as git names them) recorded again as they are
        now, and every path `base` holds below `folders` too, without looking at the rest of the
        tree (under `locked()`): for a watcher that knows nothing else changed
        (`watcher.TreeWatcher`). A path may now be a folder (its files are among `paths`), or
        gone with a folder above it. None in the cases of `snapshot_paths`, and for a path inside
        another repository: record the whole tree then."""
        objects = LooseObjects(self._git_dir)
        try:
            base_tree = self._commit_info(base)[0]
            names = set(paths)
            for folder in folders:
                names.update(objects.files_under(base_tree, folder))
                below = folder + b"/"
                names.update(path for path in self.left_out(base) if path.startswith(below))
        except (NotLoose, CheckpointError):
            return None
        return self._snapshot_on(base, sorted(names), self._entry_watched, refs)

    def _snapshot_on(
        self,
        base: str,
        names: Sequence[bytes],
        entry_now: Callable[[LooseObjects, bytes, Entry | None], Entry | _Keep | None],
        refs: Sequence[str],
    ) -> Snapshot | None:
        """Snapshot `base` with each of `names` set to `entry_now(objects, name, its entry in base)`."""
        objects = LooseObjects(self._git_dir)
        try:
            base_tree, base_message = self._commit_info(base)
            known = {name: objects.entry(base_tree, name) for name in names}
            changes: dict[bytes, Entry | None] = {}
            for name in names:
                entry = entry_now(objects, name, known[name])
                if not isinstance(entry, _Keep):
                    changes[name] = entry
            new = [name for name, entry in changes.items() if entry is not None and known[name] is None]
            for name in self._ignored(new):  # not recorded by a whole snapshot either (tracked ones are)
                del changes[name]
            tree = objects.with_changes(base_tree, changes) if changes else base_tree
            message = _message(sorted({os.fsencode(path) for path in _left_out_of(base_message)} - set(names)))
            if (tree, message) == (base_tree, base_message):
                commit, moved = base, list(refs)
            else:
                commit, moved = objects.write("commit", _commit_object(tree, message)), ["HEAD", *refs]
                self._commits[commit] = (tree, message)
            if moved:
                self._set_refs_loose(dict.fromkeys(moved, commit))
            return Snapshot(commit)
        except (NotLoose, _WholeTree, OSError, CheckpointError):
            return None

    def _entry_watched(self, objects: LooseObjects, name: bytes, before: Entry | None) -> Entry | _Keep | None:
        """The entry `name` has now, for `snapshot_changes`: None when it is gone (or below a link
        or a file), `KEEP` for a folder that is still one; _WholeTree when it cannot be recorded alone."""
        above = self._above(name)
        if above in ("gone", "not a folder"):
            return None  # gone with its folder; or git records nothing beyond a link or a file
        if above != "folders":
            raise _WholeTree(os.fsdecode(name))  # inside another repository, or cannot be told
        full = os.path.join(os.fsencode(self.root), name)
        try:
            info = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISDIR(info.st_mode):
            if os.path.lexists(os.path.join(full, b".git")):
                raise _WholeTree(os.fsdecode(name))  # a repository of its own: the whole look says so
            return KEEP if before is None or before.mode == TREE_MODE else None  # its files are named apart
        if self._why_left_out(name) is not None:
            raise _WholeTree(os.fsdecode(name))
        return self._entry_now(objects, name)

    def ignored_folders(self, folders: Sequence[bytes]) -> list[bytes]:
        """Which of `folders` the project's ignore rules leave out, counting the index: a folder
        holding a file an earlier whole snapshot recorded is not ignored (git keeps recording it)."""
        if not folders:
            return []
        out = self._git(["check-ignore", "-z", "--stdin"], _nul_list(folders))
        return [name for name in out.split(b"\0") if name]

    def _entry_now(self, objects: LooseObjects, name: bytes) -> Entry | None:
        """The tree entry `name` would have as it is now (its blob stored); None when it is gone."""
        full = os.path.join(os.fsencode(self.root), name)
        try:
            info = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(info.st_mode):
            return Entry(LINK_MODE, objects.write("blob", os.readlink(full)))
        with open(os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > min(self.max_file_bytes, READ_WHOLE_BYTES):
                raise _WholeTree(os.fsdecode(name))  # changed since it was checked, or big: git streams it
            data = file.read()
        return Entry(EXECUTABLE_MODE if info.st_mode & stat.S_IXUSR else FILE_MODE, objects.write("blob", data))

    def _ignored(self, names: Sequence[bytes]) -> list[bytes]:
        """Which of `names` (not in the last snapshot) the project's ignore rules leave out."""
        if not names:
            return []
        out = self._git(["check-ignore", "-z", "--stdin", "--no-index"], _nul_list(names))
        return [name for name in out.split(b"\0") if name]

    def _commit(self, head: str | None, message: str, refs: Sequence[str], *, index_moved: bool) -> str:
        """The commit of the index's tree with `message` (`head` again when it is the same), and
        point HEAD and `refs` at it."""
        known = self._commit_info(head) if head is not None else None
        tree = known[0] if known is not None and not index_moved else self._text(["write-tree"])
        if known is not None and head is not None and known == (tree, message):
            commit = head
        else:
            commit = self._text(["commit-tree", tree, "-m", message])
            self._commits[commit] = (tree, message)
            refs = ["HEAD", *refs]
        if refs:
            self.set_refs(dict.fromkeys(refs, commit))
        return commit

    def _scan(self) -> _Scan:
        """What differs between the work tree and the last snapshot (one `git status`)."""
        out = self._git(
            ["status", "--porcelain=v2", "--branch", "-z", "-unormal", "--no-renames", "--ignore-submodules=all"]
        )
        scan = _Scan()
        new_folders: list[bytes] = []
        untracked: list[bytes] = []
        for entry in out.split(b"\0"):
            if entry.startswith(b"# branch.oid "):
                oid = entry.split(b" ")[2].decode("ascii")
                scan.head = None if oid == "(initial)" else oid
            elif entry.startswith(b"1 "):
                scan.index_differs = True
                path = entry.split(b" ", 8)[8]
                if self._above(path) == "not a folder":
                    scan.tracked_left_out.append(path)  # a link or a file stands where its folder was: gone
                elif (why := self._why_left_out(path)) is None:
                    scan.changed.append(path)
                else:
                    scan.tracked_left_out.append(path)
                    scan.leave_out(path, why)
            elif entry.startswith(b"? "):
                path = entry[2:]
                if path.endswith(b"/") and not os.path.lexists(os.path.join(os.fsencode(self.root), path, b".git")):
                    new_folders.append(path)  # a new folder: `-unormal` names it, not its files
                else:
                    untracked.append(path)
        if new_folders:
            listed = self._git(["ls-files", "-o", "--exclude-standard", "-z", "--", *_argv_literal(new_folders)])
            untracked += [path for path in listed.split(b"\0") if path]
        for path in untracked:
            if (why := self._why_left_out(path)) is None:
                scan.changed.append(path)
            else:
                scan.leave_out(path, why)
        return scan

    def _why_left_out(self, path: bytes) -> str | None:
        """Why `path` (as `git status` listed it) cannot be recorded, or None when it can."""
        if path.endswith(b"/"):
            return "a git repository of its own (a submodule or a clone): not recorded, its own .git holds it"
        full = os.path.join(os.fsencode(self.root), path)
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            return None  # removed: recorded as gone
        except OSError as error:
            return f"cannot be read ({error.strerror})"
        if stat.S_ISLNK(info.st_mode):
            return None
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_size > self.max_file_bytes:
            return f"{info.st_size:,} bytes, over the checkpoint size limit of {self.max_file_bytes:,}"
        try:
            os.close(os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC))
        except OSError as error:
            return f"cannot be read ({error.strerror})"
        return None

    def _recordable_alone(self, name: bytes) -> bool:
        """Whether `name` can be recorded by itself as a whole snapshot would record it: a file or
        link (or nothing) that is not left out, with no symlink or other repository above it."""
        above = self._above(name)
        if above == "gone":
            return True  # gone with its folder: recorded as gone
        return above == "folders" and self._why_left_out(name) is None  # not beyond a link, a file, a repository

    def _above(self, name: bytes) -> Literal["folders", "gone", "not a folder", "repository", "unknown"]:
        """What stands above `name` in the project, looked at from the top: every one a folder
        (and `name` a plain one), one gone, one a link or a file, another repository, or one that
        cannot be looked at (or `name` has `.git`, `..` or an empty part)."""
        parts = name.split(b"/")
        if any(part in (b"", b".", b"..") or part.lower() == b".git" for part in parts):
            return "unknown"
        folder = os.fsencode(self.root)
        for part in parts[:-1]:
            folder = os.path.join(folder, part)
            try:
                if not stat.S_ISDIR(os.lstat(folder).st_mode):
                    return "not a folder"
            except (FileNotFoundError, NotADirectoryError):
                return "gone"
            except OSError:
                return "unknown"
            if os.path.lexists(os.path.join(folder, b".git")):
                return "repository"
        return "folders"

    def _name_in_project(self, path: Path) -> bytes | None:
        """`path` as git names it in the project (relative, with `/`), or None when it is outside."""
        path = Path(os.path.normpath(path))
        for root in (self.root, self._real_root):
            if path.is_relative_to(root) and path != root:
                return os.fsencode(path.relative_to(root).as_posix())
        return None

    def _commit_info(self, commit: str) -> tuple[str, str]:
        """A snapshot's tree and message (remembered: a commit never changes)."""
        if commit not in self._commits:
            body = self._git(["cat-file", "commit", commit])
            fields, _, message = body.partition(b"\n\n")
            tree = fields.split(b"\n", 1)[0].removeprefix(b"tree ").decode("ascii")
            self._commits[commit] = (tree, message.decode("utf-8", "surrogateescape").rstrip("\n"))
        return self._commits[commit]

    def left_out(self, commit: str) -> set[bytes]:
        """The paths a snapshot left out (its message says): a restore leaves them as they are."""
        return {os.fsencode(path) for path in _left_out_of(self._commit_info(commit)[1])}

    # ------------------------------------------------------------------ reading

    def changes(self, old: str, new: str) -> list[TreeChange]:
        """What differs between two snapshots, path by path."""
        if old == new:
            return []
        out = self._git(["diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", old, new])
        fields = out.split(b"\0")
        found: list[TreeChange] = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.decode("ascii", "replace").lstrip(":").split()
            if len(parts) == 5:
                found.append(TreeChange(path, parts[4][:1], parts[0], parts[1], parts[3], parts[2]))
        return found

    def changes_of_steps(self, pairs: Sequence[tuple[str, str]]) -> list[TreeChange]:
        """What differs in each (older, newer) pair of snapshots, pair after pair (one git)."""
        if not pairs:
            return []
        lines = b"".join(f"{new} {old}\n".encode("ascii") for old, new in pairs)  # git diffs each from its "parent"
        fields = self._git(["diff-tree", "--stdin", "-r", "-z", "--no-renames"], lines).split(b"\0")
        found: list[TreeChange] = []
        index = 0
        while index < len(fields) - 1:
            meta = fields[index].decode("ascii", "replace")
            parts = meta.lstrip(":").split()
            if meta.startswith(":") and len(parts) == 5:
                found.append(TreeChange(fields[index + 1], parts[4][:1], parts[0], parts[1], parts[3], parts[2]))
                index += 2
            else:
                index += 1  # the line's header: the newer commit
        return found

    def blob_now(self, name: bytes) -> str | None:
        """The git blob id of the file `name` as it is now (what a snapshot would record); None when
        there is none, "" when it cannot be read or would be left out."""
        full = os.path.join(os.fsencode(self.root), name)
        try:
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                data = os.readlink(full)
                return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
            with open(os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as file:
                info = os.fstat(file.fileno())
                if not stat.S_ISREG(info.st_mode) or info.st_size > self.max_file_bytes:
                    return ""
                digest = hashlib.sha1(b"blob %d\0" % info.st_size, usedforsecurity=False)
                read = 0
                while chunk := file.read(1 << 20):
                    digest.update(chunk)
                    read += len(chunk)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError:
            return ""
        return digest.hexdigest() if read == info.st_size else ""  # it changed while being read

    def changed_names(self, old: str, new: str) -> list[str]:
        return [change.name for change in self.changes(old, new)]

    def blobs(self, shas: Sequence[str]) -> Iterator[tuple[str, bytes]]:
        """The bytes of each blob, in order (one `git cat-file --batch`)."""
        if not shas:
            return
        with subprocess.Popen(
            ["git", *self._options(), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self._environment(),
            cwd=self.folder,
        ) as proc:
            stdin, stdout = proc.stdin, proc.stdout
            assert stdin is not None and stdout is not None

            def ask() -> None:  # from a thread: git answers as it reads, and would block on a full pipe
                with contextlib.suppress(OSError):
                    stdin.write(b"".join(sha.encode("ascii") + b"\n" for sha in shas))
                    stdin.close()

            asking = threading.Thread(target=ask, name="checkpoint-blobs", daemon=True)
            asking.start()
            try:
                for sha in shas:
                    header = stdout.readline().split()
                    if len(header) != 3 or header[1] != b"blob":
                        raise CheckpointError(f"the shadow repository {self._git_dir} has lost the file {sha}")
                    data = stdout.read(int(header[2]))
                    stdout.read(1)
                    yield sha, data
            finally:
                if proc.poll() is None:
                    proc.kill()  # a reader that stopped early: git would wait on its full pipe forever
                asking.join()

    # ------------------------------------------------------------------ refs

    def set_refs(self, refs: dict[str, str]) -> None:
        """Point each ref at its commit (in one transaction)."""
        lines = b"".join(f"update {ref} {commit}\n".encode("ascii") for ref, commit in refs.items())
        self._git(["update-ref", "--stdin"], lines)

    def _set_refs_loose(self, refs: dict[str, str]) -> None:
        """`set_refs` without starting git: each ref's file written (HEAD's branch for HEAD), as
        git writes a loose ref, and renamed into place (under `locked()`, so nobody else writes
        them meanwhile). OSError when a ref cannot be written so; git reads them as its own."""
        for ref, commit in refs.items():
            name = ref
            if ref == "HEAD":
                head = (self._git_dir / "HEAD").read_text(encoding="ascii").strip()
                name = head.removeprefix("ref: ") if head.startswith("ref: refs/") else "HEAD"
            parts = name.split("/")
            unsafe = any(part in ("", ".", "..") or part.endswith(".lock") for part in parts)
            if name != "HEAD" and (parts[0] != "refs" or unsafe):
                raise OSError(f"not a ref agentcli writes: {name}")
            path = self._git_dir.joinpath(*parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(path.name + ".agentcli-tmp")
            try:
                temporary.write_bytes(commit.encode("ascii") + b"\n")
                os.replace(temporary, path)
            except OSError:
                with contextlib.suppress(OSError):
                    temporary.unlink()
                raise

    def delete_refs(self, refs: Sequence[str]) -> None:
        if refs:
            self._git(["update-ref", "--stdin"], b"".join(f"delete {ref}\n".encode("ascii") for ref in refs))

    def refs(self, prefix: str) -> list[tuple[str, str, int]]:
        """(ref, commit, commit time) of every ref under `prefix`."""
        if not self.exists:
            return []
        out = self._text(["for-each-ref", "--format=%(refname) %(objectname) %(committerdate:unix)", prefix])
        found = []
        for line in out.splitlines():
            ref, commit, when = line.split(" ")
            found.append((ref, commit, int(when or 0)))
        return found

    def prune(self) -> None:
        """Delete what no ref reaches any more."""
        self._git(["prune", "--expire=now"])

    def size(self) -> int:
        """Bytes the shadow repository takes on disk."""
        total = 0
        for folder, _, files in os.walk(self.folder):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(folder, name)).st_blocks * 512
        return total

    # ------------------------------------------------------------------ running git

    def _options(self) -> list[str]:
        return ["-c", "safe.directory=*"]

    def _environment(self, work_tree: bool = True) -> dict[str, str]:
        env = {name: value for name, value in child_environment().items() if not name.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self._git_dir),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_AUTHOR_NAME="agentcli",
            GIT_AUTHOR_EMAIL="agentcli@localhost",
            GIT_COMMITTER_NAME="agentcli",
            GIT_COMMITTER_EMAIL="agentcli@localhost",
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="1",
            LC_ALL="C",
        )
        if work_tree:
            env["GIT_WORK_TREE"] = str(self.root)
        else:
            del env["GIT_DIR"]
        return env

    def _git(self, args: list[str], data: bytes | None = None, *, work_tree: bool = True) -> bytes:
        folder = self.root if work_tree else self.folder
        try:
            done = subprocess.run(
                ["git", *self._options(), *args],
                input=data if data is not None else b"",
                capture_output=True,
                env=self._environment(work_tree),
                cwd=folder,
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except FileNotFoundError:
            if not os.path.isdir(folder):
                raise CheckpointError(f"the folder {folder} is gone") from None
            raise GitMissing("git is not installed (checkpoints need it): install git to have them") from None
        except (OSError, subprocess.TimeoutExpired) as error:
            raise CheckpointError(f"git {args[0]} failed: {error}") from None
        if done.returncode != 0 and not (args[0] in ("add", "check-ignore") and done.returncode == 1):
            # add: some files unreadable; check-ignore: none ignored
            said = done.stderr.decode(errors="replace").strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed: {said[-1] if said else f'exit {done.returncode}'}")
        return done.stdout

    def _text(self, args: list[str]) -> str:
        return self._git(args).decode("utf-8", "surrogateescape").strip()


def _message(left_out: Sequence[bytes]) -> str:
    """A snapshot's commit message: what it left out, which a restore must not remove."""
    listed = json.dumps({"left_out": sorted(os.fsdecode(path) for path in left_out)}, ensure_ascii=True)
    return f"agentcli checkpoint\n\n{listed}"


def _commit_object(tree: str, message: str) -> bytes:
    """A snapshot's commit, as `git commit-tree` writes it."""
    when = f"{int(time.time())} +0000"
    person = f"agentcli <agentcli@localhost> {when}"
    return f"tree {tree}\nauthor {person}\ncommitter {person}\n\n{message}\n".encode("utf-8", "surrogateescape")


def _left_out_of(message: str) -> list[str]:
    """The paths a snapshot's message lists as left out."""
    try:
        listed = json.loads(message.partition("\n\n")[2] or "{}").get("left_out", [])
    except (ValueError, AttributeError):
        return []
    return [path for path in listed if isinstance(path, str)] if isinstance(listed, list) else []


def _argv_literal(paths: Sequence[bytes]) -> list[str]:
    return [":(top,literal)" + os.fsdecode(path) for path in paths]


def _from_stdin() -> list[str]:
    return ["--pathspec-from-file=-", "--pathspec-file-nul"]


def _literal(paths: Sequence[bytes]) -> bytes:
    return _nul_list([b":(top,literal)" + path for path in paths])


def _nul_list(items: Sequence[bytes]) -> bytes:
    return b"".join(item + b"\0" for item in items)


def _thread_lock(folder: Path) -> threading.Lock:
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(folder, threading.Lock())
