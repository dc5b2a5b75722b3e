"""One conversation's checkpoints: the work tree before the first change of each user turn, and after it.

`before(turn, access)` is called (through `workspace.checkpointed.CheckpointedWorkspace.before_change`)
before each call that may change something; only the first of a turn records, and every other
call of that turn (a concurrent one, a sub-agent's) waits until it has, so nothing changes the
tree before its checkpoint exists. `after(turn)` is called when the turn's run ends, whatever
ended it; it records only for a turn that recorded a `before`. A turn that changed nothing
costs nothing.

`before` looks at the whole tree: since the last checkpoint, anything may have changed it (you,
your editor, another program). `after` looks only at the paths the turn's calls declared
writing (`ShadowRepo.snapshot_paths`) when every change of the turn was such a call (Write,
Edit): from `before` to `after` nothing else of agentcli's changed the tree, and whatever else
changed in the meantime was changed outside agentcli, which the next `before` records as such.
A command (Bash, a skill's `!`, a sub-agent's), an MCP tool that may change something, a call
that does not say what it does, or hooks that run commands (`hooks_run_commands`) make the turn's
`after` look at the whole tree again.

A checkpoint that cannot be recorded (git missing, the disk full, a file that cannot be read)
never stops the turn: it is said in one notice (git missing: once for the session) and the
turn goes on. Files left out of a checkpoint (over the size limit, unreadable, another
repository) are said once each.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from agentcli.access import Access
from agentcli.checkpoints.shadow import CheckpointError, GitMissing, Snapshot
from agentcli.checkpoints.store import CheckpointStore, step_name

MAX_SKIPPED_SHOWN = 10
MAX_FILES_READ = 1_000
"""Changed files read to tell how they are now (a compaction lists a few hundred at most)."""


class TurnCheckpoints:
    """Records the checkpoints of the conversation `session_id` in `store` (None: checkpoints are off)."""

    def __init__(
        self,
        store: CheckpointStore | None,
        session_id: str,
        on_notice: Callable[[str], None],
        prune: Callable[[CheckpointStore], None] | None = None,
        *,
        hooks_run_commands: Callable[[], bool] = lambda: False,
    ) -> None:
        """`prune` runs once, before the first checkpoint (`CheckpointStore.prune`);
        `hooks_run_commands` says whether hooks that run commands are configured (the session's
        or a sub-agent type's): those may change files during a turn, so a turn's `after` then
        looks at the whole tree."""
        self._store = store
        self._session_id = session_id
        self._on_notice = on_notice
        self._prune = prune
        self._hooks_run_commands = hooks_run_commands
        self._lock = threading.Lock()
        self._recorded: set[int] = set()
        """Turns whose `before` was recorded (or tried: a failure is not retried in the same turn)."""
        self._base: dict[int, str] = {}
        """Turn → its latest snapshot (its `before`), which its `after` may build on."""
        self._declared: dict[int, set[Path]] = {}
        """Turn → the paths its calls declared writing, while those are all it changed."""
        self._undeclared: set[int] = set()
        """Turns that ran a call that may change what it does not declare (a command)."""
        self._skipped_said: set[str] = set()

    @property
    def store(self) -> CheckpointStore | None:
        return self._store

    def before(self, turn: int, access: Access) -> None:
        """A call of user turn `turn` that declared `access` is about to change something."""
        with self._lock:
            if self._store is None:
                return
            if _declares_all(access):
                self._declared.setdefault(turn, set()).update(access.writes)
            else:
                self._undeclared.add(turn)
            if turn in self._recorded:
                return
            self._recorded.add(turn)
            if self._prune is not None:
                prune, self._prune = self._prune, None
                self._record(prune, "Old checkpoints were not cleaned up")
            self._record(lambda store: self._took(turn, store.record(self._session_id, step_name(turn), "before")))

    def after(self, turn: int) -> None:
        """User turn `turn`'s run ended."""
        with self._lock:
            if self._store is None or turn not in self._recorded:
                return
            base, declared = self._base.pop(turn, None), self._declared.pop(turn, set())
            if turn in self._undeclared or base is None or self._hooks_run_commands():
                self._undeclared.discard(turn)
                self._record(lambda store: self._say_skipped(store.record(self._session_id, step_name(turn), "after")))
            else:
                step = step_name(turn)
                self._record(
                    lambda store: self._say_skipped(
                        store.record_paths(self._session_id, step, "after", base, sorted(declared))
                    )
                )

    def changed_files(self, turn: int) -> dict[Path, tuple[str | None, str | None]] | None:
        """Each file the conversation's turns changed, whichever tool changed it, as their
        checkpoints recorded (the turn `turn`, if it is under way, up to now: the tree is recorded
        for that) → its git blob id before the first turn that changed it and now (None: there was
        none, "": cannot be told, or past the first `MAX_FILES_READ`). None when checkpoints are off
        or cannot be read."""
        with self._lock:
            store = self._store
            if store is None:
                return None
            if not store.repo.exists:
                return {}  # nothing recorded yet (and nothing made for asking)
            try:
                with store.repo.locked():
                    steps = [step for step in store.steps(self._session_id) if step.rewind == 0 and step.before]
                    pairs = []
                    for step in steps:
                        assert step.before is not None
                        if step.turn == turn and step.turn in self._base:  # under way: its `after` is to come
                            now = store.repo.snapshot().commit
                            self._base[turn] = now  # the index holds it now: the turn's `after` builds on it
                            pairs.append((step.before, now))
                        elif step.after:
                            pairs.append((step.before, step.after))
                    before: dict[bytes, str | None] = {}
                    for change in store.repo.changes_of_steps(pairs):
                        before.setdefault(change.path, None if set(change.old_blob) == {"0"} else change.old_blob)
                    root, hashed = store.repo.root, set(list(before)[:MAX_FILES_READ])
                    return {
                        root / os.fsdecode(name): (blob, store.repo.blob_now(name) if name in hashed else "")
                        for name, blob in before.items()
                    }
            except CheckpointError:
                return None

    def _took(self, turn: int, snapshot: Snapshot) -> None:
        self._base[turn] = snapshot.commit
        self._say_skipped(snapshot)

    def _record(self, action: Callable[[CheckpointStore], object], failed: str = "") -> None:
        store = self._store
        assert store is not None
        try:
            with store.repo.locked():
                action(store)
        except CheckpointError as error:
            if isinstance(error, GitMissing):
                self._store = None  # said once; no checkpoint is tried again in this session
            self._on_notice(
                f"{failed}: {error}."
                if failed
                else f"Checkpoint not recorded: {error}. The turn goes on; a rewind cannot restore the files "
                "as they were before it."
            )

    def _say_skipped(self, snapshot: Snapshot) -> None:
        new = [line for line in snapshot.skipped if line not in self._skipped_said]
        if not new:
            return
        self._skipped_said.update(new)
        shown = "; ".join(new[:MAX_SKIPPED_SHOWN])
        more = f"; and {len(new) - MAX_SKIPPED_SHOWN} more" if len(new) > MAX_SKIPPED_SHOWN else ""
        self._on_notice(f"Left out of checkpoints (a rewind will not restore them): {shown}{more}.")


def _declares_all(access: Access) -> bool:
    """A call whose every change is a path it names (Write, Edit): no command, no MCP server, nothing unknown."""
    return bool(access.writes) and access.command is None and access.server is None and not access.unknown
