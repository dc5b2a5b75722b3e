"""Completion for the prompt: `/commands` (built-ins and skills) and `@paths`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

CommandList = Callable[[], Iterable[tuple[str, str]]]
"""Returns (name without slash, description) for every command, built-ins first."""

SKIPPED_DIRS = {".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".ruff_cache"}
MAX_PATH_COMPLETIONS = 50


class PromptCompleter(Completer):
    def __init__(self, commands: CommandList, cwd: Path) -> None:
        self.commands = commands
        self.cwd = cwd

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            typed = before[1:]
            for name, description in self.commands():
                if name.startswith(typed):
                    yield Completion("/" + name, start_position=-len(before), display_meta=description)
            return
        word = before.rsplit(maxsplit=1)[-1] if before and not before[-1].isspace() else ""
        if word.startswith("@"):
            yield from self._paths(word[1:])

    def _paths(self, typed: str) -> Iterator[Completion]:
        folder, _, prefix = typed.rpartition("/")
        base = (self.cwd / folder) if folder else self.cwd
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            if not entry.name.startswith(prefix) or entry.name in SKIPPED_DIRS:
                continue
            if entry.name.startswith(".") and not prefix.startswith("."):
                continue
            suffix = "/" if entry.is_dir() else ""
            full = f"{folder}/{entry.name}" if folder else entry.name
            yield Completion("@" + full + suffix, start_position=-(len(typed) + 1), display=entry.name + suffix)
            shown += 1
            if shown >= MAX_PATH_COMPLETIONS:
                return
