"""What a conversation did that a compaction must carry over: the user's requests, word for
word, and the files its calls changed and looked at, most recent last.

A subscriber to the conversation's agent events (`ToolCallRunning` carries what each admitted
call declared it reads and writes, as the gate judged it), told by the conversation what only it
knows: each request as the user typed it (`note_request`). A file is fingerprinted (sha256) just
before the first call that declares writing it runs, so a compaction can say whether it still
differs from how it was then. Changes a call does not declare (a Bash command's, a sub-agent's)
are not seen here: the checkpoints see them (`checkpoints.turns.TurnCheckpoints.changed_files`).

Everything is kept in memory, small per item (a request, a path and a digest), and written to
the transcript as it comes (`take_unrecorded`), so a resumed conversation takes it up again.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from agentcli.events import MAIN_AGENT, Event, ToolCallRunning
from agentcli.regular_file import NotRegularFile
from agentcli.workspace.contract import Workspace, WorkspaceError

RECENT_KEPT = 32
"""Paths remembered as recently used (a compaction re-reads only the newest few of them)."""
ABSENT = None
"""The baseline of a file that did not exist before the conversation created it."""
UNREADABLE = ""
"""The baseline of a file that could not be read before its first change."""
Baseline = str | None
"""A file's sha256 before the conversation first changed it; `ABSENT` or `UNREADABLE`."""
_CHUNK = 1 << 20


class WorkLog:
    """The requests and file activity of one conversation; subscribe it to the conversation's agent."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        requests: Sequence[str] = (),
        changed: Mapping[Path, Baseline] | None = None,
        recent: Iterable[Path] = (),
    ) -> None:
        """`requests`, `changed` and `recent` are what a resumed transcript recorded."""
        self.workspace = workspace
        self._lock = threading.Lock()
        self._requests = list(requests)
        self._changed: dict[Path, Baseline] = dict(changed or {})
        self._recent: dict[Path, None] = {}
        for path in recent:
            self._touch(path)
        self._unrecorded: dict[Path, Baseline] = {}

    # ------------------------------------------------------------------ what is told

    def note_request(self, text: str) -> None:
        """The user sent `text` (as typed: a /command with its arguments, not its expansion)."""
        if text.strip():
            with self._lock:
                self._requests.append(text)

    def __call__(self, event: Event) -> None:
        if not isinstance(event, ToolCallRunning) or event.access is None or event.agent_id != MAIN_AGENT:
            return
        for path in event.access.writes:
            with self._lock:
                known = path in self._changed
            if not known:
                baseline = self.fingerprint(path)
                with self._lock:
                    self._changed.setdefault(path, baseline)
                    self._unrecorded.setdefault(path, baseline)
        with self._lock:
            for path in (*event.access.reads, *event.access.writes):
                self._touch(path)

    def _touch(self, path: Path) -> None:
        self._recent.pop(path, None)
        self._recent[path] = None
        if len(self._recent) > RECENT_KEPT:
            del self._recent[next(iter(self._recent))]

    # ------------------------------------------------------------------ what is asked

    @property
    def requests(self) -> list[str]:
        """Every request of the conversation so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def changed(self) -> dict[Path, Baseline]:
        """Each file a call declared writing → its baseline, in the order they were first changed."""
        with self._lock:
            return dict(self._changed)

    def recent(self) -> list[Path]:
        """Paths read or written by the conversation's calls, most recent first."""
        with self._lock:
            return list(reversed(self._recent))

    def take_unrecorded(self) -> dict[Path, Baseline]:
        """The files first changed since the last call (for the transcript)."""
        with self._lock:
            taken, self._unrecorded = self._unrecorded, {}
        return taken

    def fingerprint(self, path: Path) -> Baseline:
        """`path`'s sha256 now (`ABSENT`, `UNREADABLE` when it is not there, cannot be read)."""
        digest = hashlib.sha256()
        try:
            with self.workspace.read_file(path) as opened:
                while chunk := opened.stream.read(_CHUNK):
                    digest.update(chunk)
        except (FileNotFoundError, NotADirectoryError):
            return ABSENT
        except (OSError, NotRegularFile, WorkspaceError):
            return UNREADABLE
        return digest.hexdigest()
