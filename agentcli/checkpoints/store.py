"""A project's checkpoints, by session and step, as refs of its shadow repository.

Each session's checkpoints are refs `refs/agentcli/<session id>/<step>/<kind>`:

- a user turn that changed something has the step `<turn>` (six digits, so they sort): `before`
  is the work tree just before its first change, `after` the work tree when it ended (absent
  when the process was killed during the turn);
- a code rewind has the step `<turn>.r<n>` (the n-th rewind after that turn): `before` is the
  work tree it replaced (so the rewind can itself be undone), `after` what it left.

Between one step's `after` and the next one's `before`, only something other than agentcli
changed the work tree: those are the files "changed outside agentcli" a rewind shows first.

Refs point at commits of snapshots (`shadow.Snapshot`); many refs may share one commit (a tree
that did not change). A whole-tree checkpoint asks the project's watcher (`watch`,
`watcher.TreeWatcher`, Linux) what changed since the previous one and records only that when it
is sure (`ShadowRepo.snapshot_changes`); else git looks at the whole tree.

Pruning (`prune`) deletes the refs of sessions older than `cleanupPeriodDays`, then what nothing
reaches any more.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.checkpoints.shadow import MANY_PATHS, CheckpointError, ShadowRepo, Snapshot

if TYPE_CHECKING:
    from agentcli.checkpoints.inotify import Inotify
    from agentcli.checkpoints.watcher import TreeWatcher

REF_ROOT = "refs/agentcli"
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,200}")
_STEP = re.compile(r"(\d{6,})(?:\.r(\d+))?")
PRUNE_EVERY_S = 86_400
"""Pruning walks the whole repository: at most once a day per project."""


@dataclass(frozen=True)
class Step:
    """One turn's or one rewind's checkpoints."""

    turn: int
    rewind: int
    """0 for a turn; n for the n-th code rewind after turn `turn`."""
    before: str | None
    after: str | None
    time: int
    """When its newest snapshot was first recorded (seconds since the epoch)."""

    @property
    def name(self) -> str:
        return step_name(self.turn, self.rewind)


def step_name(turn: int, rewind: int = 0) -> str:
    return f"{turn:06d}" + (f".r{rewind}" if rewind else "")


class CheckpointStore:
    """The checkpoints of the project of `repo`."""

    def __init__(self, repo: ShadowRepo) -> None:
        self.repo = repo
        self.watcher: TreeWatcher | None = None
        self._watch_notice: Callable[[str], None] | None = None
        self._watch_lock = threading.Lock()
        self._make_inotify: Callable[[], Inotify] | None = None
        self._starting: threading.Thread | None = None

    def watch(self, on_notice: Callable[[str], None], *, make_inotify: Callable[[], Inotify] | None = None) -> None:
        """Have a watcher of the project tell whole-tree checkpoints what changed: started now
        when the shadow repository exists (git tells it which folders are ignored), else after
        the checkpoint that makes it. `on_notice` hears once why it had to stop (a limit reached).
        `close` stops it. `make_inotify` stands in for `inotify.Inotify` (tests: a lost event, a limit)."""
        if self._watch_notice is not None:
            return  # watching already
        self._watch_notice = on_notice
        self._make_inotify = make_inotify
        if self.repo.exists:  # imported and set up beside the session's start, not in its way
            self._starting = threading.Thread(target=self._start_watcher, name="checkpoint-watcher-start", daemon=True)
            self._starting.start()

    def close(self) -> None:
        self._started()
        with self._watch_lock:
            watcher, self.watcher, self._watch_notice = self.watcher, None, None
        if watcher is not None:
            watcher.close()

    def _start_watcher(self) -> None:
        with self._watch_lock:
            if self._watch_notice is None or self.watcher is not None or not self.repo.exists:
                return
            from agentcli.checkpoints.watcher import TreeWatcher  # ctypes and a thread: only for a session

            self.watcher = TreeWatcher(
                self.repo.root, self.repo.ignored_folders, self._watch_notice, limit=MANY_PATHS, make=self._make_inotify
            )
            self.watcher.start()

    def _started(self) -> None:
        """Wait for the watcher's start, if it is under way."""
        starting, self._starting = self._starting, None
        if starting is not None:
            starting.join()

    def record(self, session_id: str, step: str, kind: str) -> Snapshot:
        """Snapshot the work tree as `kind` (`before`, `after`) of `step` (under `repo.locked()`):
        what the watcher says changed, when it is sure; else the whole tree."""
        ref = self.ref(session_id, step, kind)
        self._started()
        watcher = self.watcher
        if watcher is None:
            snapshot = self.repo.snapshot([ref])
            self._start_watcher()
            return snapshot
        taken = watcher.take()
        known = taken.known
        found = None if known is None else self.repo.snapshot_changes(known.base, known.paths, known.folders, [ref])
        snapshot = found or self.repo.snapshot([ref])
        watcher.recorded(taken.epoch, snapshot.commit)
        return snapshot

    def record_paths(self, session_id: str, step: str, kind: str, base: str, paths: Sequence[Path]) -> Snapshot:
        """As `record`, for a work tree that differs from snapshot `base` at most in `paths`: only
        they are looked at (`ShadowRepo.snapshot_paths`), or the whole tree when that cannot be exact."""
        ref = self.ref(session_id, step, kind)
        return self.repo.snapshot_paths(base, paths, [ref]) or self.repo.snapshot([ref])

    def ref(self, session_id: str, step: str, kind: str) -> str:
        return f"{_checked(session_id)}/{step}/{kind}"

    def steps(self, session_id: str) -> list[Step]:
        """The session's steps, oldest first."""
        session_id = _checked(session_id).rsplit("/", 1)[-1]
        found: dict[tuple[int, int], dict[str, tuple[str, int]]] = {}
        for ref, commit, when in self.repo.refs(f"{REF_ROOT}/{session_id}/"):
            parts = ref.split("/")
            match = _STEP.fullmatch(parts[-2]) if len(parts) == 5 else None
            if match is None or parts[-1] not in ("before", "after"):
                continue
            key = (int(match[1]), int(match[2] or 0))
            found.setdefault(key, {})[parts[-1]] = (commit, when)
        steps = []
        for (turn, rewind), kinds in sorted(found.items()):
            before, after = kinds.get("before"), kinds.get("after")
            when = max(entry[1] for entry in kinds.values())
            steps.append(Step(turn, rewind, before and before[0], after and after[0], when))
        return steps

    def sessions(self) -> dict[str, int]:
        """Each session with checkpoints → the time of its newest one."""
        newest: dict[str, int] = {}
        for ref, _, when in self.repo.refs(f"{REF_ROOT}/"):
            session = ref.split("/")[2]
            newest[session] = max(newest.get(session, 0), when)
        return newest

    def prune(self, period_days: float, transcripts: Path, *, force: bool = False) -> list[str]:
        """Delete the checkpoints of sessions whose newest checkpoint and transcript are both
        older than `period_days` (under `repo.locked()`); at most once a day unless `force`.
        Returns the sessions pruned."""
        marker = self.repo.folder / "last-prune"
        now = time.time()
        try:
            if not force and now - marker.stat().st_mtime < PRUNE_EVERY_S:
                return []
        except OSError:
            pass
        cutoff = now - period_days * 86_400
        old = []
        for session, newest in self.sessions().items():
            try:
                seen = os.stat(transcripts / f"{session}.jsonl").st_mtime
            except OSError:
                seen = 0
            if max(newest, seen) < cutoff:
                old.append(session)
        if old:
            self.repo.delete_refs(
                [ref for ref, _, _ in self.repo.refs(f"{REF_ROOT}/") if ref.split("/")[2] in set(old)]
            )
            self.repo.prune()
        marker.touch()
        return old


def _checked(session_id: str) -> str:
    """The ref folder of a session; CheckpointError for an id that is not one (from a damaged transcript)."""
    if not SESSION_ID.fullmatch(session_id):
        raise CheckpointError(f"{session_id[:60]!r} is not a session id")
    return f"{REF_ROOT}/{session_id}"
