"""Which instruction files entered the conversation, and why: what the InstructionsLoaded hooks hear.

The instructions reminder (`context.session`) renders the files through `InstructionLoads.render`
and tells it when the reminder was sent (`sent`). A file is *loaded* when its content goes to
the model: every file the first time the reminder is sent in a conversation (`session_start`)
and again after a compaction dropped it (`compact`: sent while `compacting`); a file whose text
changed during the session (edited, or given a line with `# text`), or that appeared, when the
reminder carrying it is sent (as `session_start`: Claude Code names no reason of its own for a
file read again). A file another one imports with `@path` is always `include`,
with the importer as `parent_file_path`. A file that could not be read is not loaded.

agentcli has no counterpart of Claude Code's `nested_traversal` (CLAUDE.md files of subfolders
read when the agent works there), `path_glob_match` (`.claude/rules/` with `paths:`) or
managed (`Managed`) memory: those reasons and that type never occur.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agentcli.context.instructions import InstructionFile, render_instructions
from agentcli.contracts import JSON


@dataclass(frozen=True)
class InstructionsLoad:
    """One file entering the conversation."""

    file: InstructionFile
    load_reason: str
    """`session_start`, `compact` or `include` (the InstructionsLoaded hooks' matcher subject)."""

    def hook_fields(self) -> JSON:
        """The InstructionsLoaded input, as Claude Code documents it."""
        fields: JSON = {
            "file_path": str(self.file.path),
            "memory_type": self.file.memory_type,
            "load_reason": self.load_reason,
        }
        if self.file.imported_by is not None:
            fields["parent_file_path"] = str(self.file.imported_by)
        return fields


class InstructionLoads:
    """Remembers what the last render showed and what the model has been sent."""

    def __init__(self, on_load: Callable[[list[InstructionsLoad]], None]) -> None:
        self._on_load = on_load
        self._shown: list[InstructionFile] = []
        self._sent: set[tuple[Path, str]] = set()
        """(path, digest of the text) of each file the model has in its context now."""
        self._fresh_reason = "session_start"

    def render(self, files: list[InstructionFile]) -> str:
        """The reminder's body for `files`, which are what `sent` reports if it goes out."""
        self._shown = files
        return render_instructions(files)

    @contextmanager
    def compacting(self) -> Iterator[None]:
        """While a compaction runs: a whole reminder sent then (its new first message) is sent because of it."""
        self._fresh_reason = "compact"
        try:
            yield
        finally:
            self._fresh_reason = "session_start"

    def sent(self, fresh: bool) -> None:
        """The reminder of the last render was sent: whole (`fresh`), or as a change."""
        known = set() if fresh else self._sent
        reason = self._fresh_reason if fresh else "session_start"
        self._sent = set()
        loads: list[InstructionsLoad] = []
        for item in self._shown:
            if item.unreadable is not None:
                continue
            key = (item.path, hashlib.sha256(item.text.encode()).hexdigest())
            self._sent.add(key)
            if key not in known:
                loads.append(InstructionsLoad(item, "include" if item.imported_by is not None else reason))
        if loads:
            self._on_load(loads)
