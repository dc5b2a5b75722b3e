"""Which paths of the project changed since the last whole-tree checkpoint, told by Linux inotify.

A whole-tree checkpoint (`ShadowRepo.snapshot`) asks git to look at every file: ~70 ms for
20,000 files however little changed. With this watcher, the checkpoint store instead takes the
paths that changed since its previous whole-tree checkpoint (`take`) and records only those on
top of it (`ShadowRepo.snapshot_changes`); it falls back to git's look whenever the watcher is
not sure. A missed change would make a rewind put back a stale file, so it is sure only when:

- its watches were complete before the previous checkpoint began: one on every folder of the
  project that is not ignored (asked of git: `ignored_folders`, which counts the shadow
  index's files, so a folder holding recorded files is watched even if ignored now), never on
  `.git`, nor below another repository inside the project (only that repository's own folder,
  for its `.git` coming or going);
- that checkpoint was recorded (`recorded`): the first of a process never has a base;
- no event was lost (the queue overflowed: `IN_Q_OVERFLOW`), no folder could not be watched or
  read, the project's folder is still the one watched (not moved, deleted or replaced), no
  `.gitignore` changed (nor `~/.config/git/ignore`), no other repository came or went, and not
  more than `limit` paths changed;
- the project is on a local file system (`inotify.LOCAL_FILE_SYSTEMS`): a network file system's
  other clients change files without this kernel seeing it.

Anything that breaks this makes the next `take` say "not sure" (None), and the watcher sets
itself up again from scratch (a new inotify instance and a walk of the tree) when it must (an
overflow, a `.gitignore`), at the latest in that `take`, so the checkpoint after is sure again. Off for
the process, saying so once, when the user's watch or instance limit is reached
(`fs.inotify.max_user_watches`); off without a word where there is no inotify (not Linux).

What it records per epoch (from one `take` to the next): `paths`, each path with an event
(created, written, its attributes changed, deleted, moved in or out), with every file found in
a folder that appeared (created, moved in: watched first, then listed, so a file made meanwhile
is seen either way); `folders`, each folder that went (deleted, moved out), whose recorded
files are all looked at again. Events are read from the instance's queue by a thread as they
come (so the queue seldom fills) and, at `take`, up to the last one queued: the kernel queues
an event before the write that caused it returns, so every change completed before `take` is
counted. A change during a checkpoint is counted in the next epoch too, so it is looked at again.

Blind spots of inotify itself, said in docs/checkpoints.md: a write through a shared `mmap` of
a file still open, and a file with a second name (hard link) outside the project changed
through that name.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentcli.checkpoints import inotify

IgnoredFolders = Callable[[Sequence[bytes]], Collection[bytes]]
"""Which of these folders (relative to the project) git ignores."""
MAX_READS = 64
"""Reads of the queue at one `take` before it counts as overflowing (a writer faster than the reading)."""
WATCH_LIMIT_FILE = "/proc/sys/fs/inotify/max_user_watches"


@dataclass(frozen=True)
class Known:
    """What may differ between the work tree and the snapshot `base`: nothing but these."""

    base: str
    paths: frozenset[bytes]
    folders: frozenset[bytes]
    """Folders that went: every path below them that `base` holds may be gone."""


@dataclass(frozen=True)
class Taken:
    epoch: int
    known: Known | None
    """None: not sure; look at the whole tree."""


class TreeWatcher:
    """Watches the project at `root` (see the module's docstring). Start it (`start`), close it (`close`)."""

    def __init__(
        self,
        root: Path,
        ignored_folders: IgnoredFolders,
        on_notice: Callable[[str], None],
        *,
        limit: int,
        make: Callable[[], inotify.Inotify] | None = None,
    ) -> None:
        self._root = os.fsencode(os.path.realpath(root))  # watched without following links: the folder itself
        self._ignored_folders = ignored_folders
        self._on_notice = on_notice
        self._limit = limit
        self._make = make or inotify.Inotify
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._wake_read, self._wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._closed = False
        self._off = False
        self._said: str | None = None
        # the watches
        self._inotify: inotify.Inotify | None = None
        self._folder_of: dict[int, bytes] = {}
        self._watch_of: dict[bytes, int] = {}
        self._repositories: set[int] = set()
        """Watches of another repository's folder inside the project: only its `.git` counts."""
        self._to_visit: list[tuple[bytes, bool]] = []
        """Folders found and not yet watched: (path, whether its files are new: count them)."""
        self._settling = False
        """Setting up all the watches (at the start, after a reset): not sure until done."""
        self._incomplete = False
        """A folder could not be watched or listed: not sure until the next reset."""
        self._reset_wanted = True
        self._root_id: tuple[int, int] | None = None
        self._file_systems: set[int] = set()
        # the epoch
        self._epoch = 0
        self._base: str | None = None
        self._sure = False
        self._paths: set[bytes] = set()
        self._folders: set[bytes] = set()
        self._too_many = False
        self._excludes: tuple[int, int, int] | None = _excludes_signature()
        self.watches_used = 0
        """How many folders are watched (for the benchmark)."""

    # ------------------------------------------------------------------ the store's side

    def start(self) -> None:
        """Set up the watches in a thread of its own, which then reads the events as they come."""
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(target=self._run, name="checkpoint-watcher", daemon=True)
            self._thread.start()

    def take(self) -> Taken:
        """What changed since the previous `take`'s checkpoint, if sure; a new epoch begins (the
        checkpoint about to be recorded is its base: say so with `recorded`)."""
        with self._lock:
            known = None
            if not self._off:
                self._read_all()
                self._visit_all()  # new folders' files are among the changes
                root_same = self._root_id is not None and _identity(self._root) == self._root_id
                excludes = _excludes_signature()
                if not root_same or excludes != self._excludes:
                    self._sure = False
                    self._reset_wanted = self._reset_wanted or not root_same
                self._excludes = excludes
                if self._sure and self._base is not None:
                    known = Known(self._base, frozenset(self._paths), frozenset(self._folders))
                if self._reset_wanted:
                    self._reset()
                self._visit_all()  # the walk, if the thread has not finished it: the next epoch can be sure
            self._epoch += 1
            self._base = None
            self._sure = self._ready
            self._paths, self._folders, self._too_many = set(), set(), False
            epoch, said, self._said = self._epoch, self._said, None
        if said:
            self._on_notice(said)
        return Taken(epoch, known)

    def recorded(self, epoch: int, commit: str) -> None:
        """The checkpoint of `epoch` (from `take`) is `commit`: the next epoch's changes are on top of it."""
        with self._lock:
            if epoch == self._epoch:
                self._base = commit

    def close(self) -> None:
        with self._lock:
            self._closed = True
            with contextlib.suppress(OSError):
                os.write(self._wake_write, b"x")
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self._inotify is not None:
                self._inotify.close()
                self._inotify = None
            for fd in (self._wake_read, self._wake_write):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def __enter__(self) -> TreeWatcher:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def _ready(self) -> bool:
        return not (self._off or self._settling or self._incomplete or self._reset_wanted or self._inotify is None)

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                if self._reset_wanted and not self._off:
                    self._reset()
                if self._to_visit:
                    self._visit_batch()
                    continue
                watched = self._inotify.fd if self._inotify is not None and not self._off else None
            poller = select.poll()
            poller.register(self._wake_read, select.POLLIN)
            if watched is not None:
                poller.register(watched, select.POLLIN)
            ready = {fd for fd, _ in poller.poll()}
            if self._wake_read in ready:
                with contextlib.suppress(OSError):
                    os.read(self._wake_read, 512)
            with self._lock:
                if not self._closed and self._inotify is not None and self._inotify.fd == watched:
                    self._read_all(to_the_end=False)

    def _reset(self) -> None:
        """Start again: a new instance, no watches, the whole tree to walk (under the lock)."""
        self._reset_wanted = False
        self._sure = False
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None
        self._folder_of.clear()
        self._watch_of.clear()
        self._repositories.clear()
        self._to_visit.clear()
        self._incomplete = False
        try:
            self._inotify = self._make()
        except inotify.Unavailable:
            self._turn_off(None)
            return
        except OSError as error:
            if error.errno == errno.EMFILE:
                self._turn_off(
                    "Checkpoints look at the whole project each time (slower in a big project): no more inotify "
                    "instances may be made (fs.inotify.max_user_instances); raise it with "
                    "`sudo sysctl fs.inotify.max_user_instances=1024`."
                )
            else:
                self._turn_off(None)
            return
        self._root_id = _identity(self._root)
        if self._root_id is None:
            self._incomplete = True  # the project is gone: tried again at the next checkpoint (`take`)
            return
        self._settling = True
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"x")  # the thread waits on the new instance from now
        self._visit(b"", count=False)
        self._settling = not self._off and bool(self._to_visit)
        if not self._settling:
            self._settled()

    def _turn_off(self, said: str | None) -> None:
        self._off, self._sure, self._said = True, False, said
        self._to_visit.clear()
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None

    def _want_reset(self) -> None:
        self._reset_wanted, self._sure = True, False
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"x")

    # ------------------------------------------------------------------ watching folders

    def _visit_all(self) -> None:
        while self._to_visit and not self._off:
            self._visit_batch()

    def _visit_batch(self) -> None:
        """Watch and list the folders found so far (one question to git for which are ignored)."""
        batch, self._to_visit = self._to_visit, []
        try:
            ignored = set(self._ignored_folders([path for path, _ in batch]))
        except Exception:  # git could not say: watch them all (more watches, never a missed change)
            ignored = set()
        for path, count in batch:
            if path not in ignored and not self._off:
                self._visit(path, count=count)
        if self._settling and not self._to_visit:
            self._settling = False
            self._settled()

    def _settled(self) -> None:
        self.watches_used = len(self._folder_of)

    def _visit(self, path: bytes, *, count: bool) -> None:
        """Watch the folder `path`, then list it: its folders are to be visited, its files (when
        `count`: the folder is new) changed."""
        assert self._inotify is not None
        full = self._full(path)
        try:
            wd = self._inotify.add_watch(full)
            if not self._local(full):
                return
            entries = list(os.scandir(full))
        except (FileNotFoundError, NotADirectoryError):
            if not path:
                self._incomplete, self._sure = True, False  # the project's own folder
            return  # gone already (or a link now): its parent's event says so
        except OSError as error:
            if error.errno == errno.ENOSPC:
                self._turn_off(_watch_limit_notice())
            else:
                self._incomplete, self._sure = True, False
            return
        old = self._folder_of.get(wd)
        if old is not None and old != path:
            self._watch_of.pop(old, None)
        self._folder_of[wd] = path
        self._watch_of[path] = wd
        self.watches_used = max(self.watches_used, len(self._folder_of))
        if path and any(entry.name.lower() == b".git" for entry in entries):
            self._repositories.add(wd)  # another repository: left out of checkpoints, only its `.git` counts
            if count:
                self._sure = False  # a new one: git's look says what is left out
            return
        prefix = path + b"/" if path else b""
        for entry in entries:
            try:
                folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                folder = False
            if folder:
                if entry.name.lower() != b".git":
                    self._to_visit.append((prefix + entry.name, count))
            elif count:
                self._changed(prefix + entry.name)

    def _local(self, full: bytes) -> bool:
        """Whether the folder is on a file system whose every change this kernel sees (else: off)."""
        device = os.lstat(full).st_dev
        if device in self._file_systems:
            return True
        if inotify.file_system(full) not in inotify.LOCAL_FILE_SYSTEMS:
            self._turn_off(None)
            return False
        self._file_systems.add(device)
        return True

    def _forget(self, path: bytes) -> None:
        """Stop watching the folder `path` and those below it (gone, or moved elsewhere)."""
        prefix = path + b"/"
        for folder in [f for f in self._watch_of if f == path or f.startswith(prefix)]:
            wd = self._watch_of.pop(folder)
            self._folder_of.pop(wd, None)
            self._repositories.discard(wd)
            if self._inotify is not None:
                self._inotify.remove_watch(wd)

    # ------------------------------------------------------------------ events

    def _read_all(self, *, to_the_end: bool = True) -> None:
        """Handle the events queued now (under the lock): all of them (`take`), or up to
        `MAX_READS` reads (the thread, which lets a checkpoint in and comes back for the rest)."""
        for _ in range(MAX_READS):
            if self._inotify is None or self._off:
                return
            events = list(self._inotify.read())
            if not events:
                return
            for event in events:
                self._handle(event)
        if to_the_end:
            self._want_reset()  # a writer faster than the reading: as good as an overflow

    def _handle(self, event: inotify.Event) -> None:
        if event.mask & inotify.Q_OVERFLOW:
            self._want_reset()
            return
        folder = self._folder_of.get(event.wd)
        if folder is None:
            return  # a watch already dropped (its folder went; a later walk covers where it went)
        if event.mask & (inotify.IGNORED | inotify.UNMOUNT | inotify.DELETE_SELF | inotify.MOVE_SELF):
            if folder == b"" or event.mask & inotify.UNMOUNT:
                self._want_reset()  # the project's own folder moved or went
            elif event.mask & inotify.IGNORED:
                self._watch_of.pop(self._folder_of.pop(event.wd), None)
            return
        name = event.name
        if not name:
            return
        if name.lower() == b".git":
            if folder:
                self._want_reset()  # a repository came or went inside the project
            return
        if event.wd in self._repositories:
            return
        path = folder + b"/" + name if folder else name
        self._changed(path)
        if name == b".gitignore":
            self._want_reset()  # what is ignored changed: folders to watch or not
        elif event.mask & inotify.ISDIR:
            if event.mask & (inotify.DELETE | inotify.MOVED_FROM):
                self._forget(path)
                if not self._too_many:
                    self._folders.add(path)
            if event.mask & (inotify.CREATE | inotify.MOVED_TO | inotify.ATTRIB):
                self._to_visit.append((path, True))  # ATTRIB: it may be readable again; look at all of it

    def _changed(self, path: bytes) -> None:
        if self._too_many:
            return
        self._paths.add(path)
        if len(self._paths) + len(self._folders) > self._limit:
            self._too_many, self._sure = True, False
            self._paths.clear()
            self._folders.clear()

    def _full(self, path: bytes) -> bytes:
        return self._root + b"/" + path if path else self._root


def _identity(path: bytes) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _excludes_signature() -> tuple[int, int, int] | None:
    """The user's own ignore file as git finds it (`$XDG_CONFIG_HOME/git/ignore`): when it changes, not sure."""
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    try:
        info = os.stat(os.path.join(config, "git", "ignore"))
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size, info.st_ino


def _watch_limit_notice() -> str:
    try:
        with open(WATCH_LIMIT_FILE, encoding="ascii") as file:
            limit = f" = {file.read().strip()}"
    except OSError:
        limit = ""
    return (
        "Checkpoints look at the whole project each time (slower in a big project): the limit of watched "
        f"folders was reached (fs.inotify.max_user_watches{limit}). Raise it with "
        "`sudo sysctl fs.inotify.max_user_watches=524288` (and a line in /etc/sysctl.d/ to keep it)."
    )
