"""Unified diffs of a file change, and the one-line description of it."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class Change:
    diff: str
    additions: int
    removals: int

    def describe(self, verb: str, name: str) -> str:
        """E.g. "Updated src/app.py: 1 addition, 1 removal"."""
        return f"{verb} {name}: {_plural(self.additions, 'addition')}, {_plural(self.removals, 'removal')}"


def diff_texts(old: str, new: str, name: str, *, created: bool = False) -> Change:
    """A unified diff (3 lines of context) between two versions; CRLF shown as plain lines."""
    old_lines = old.replace("\r\n", "\n").splitlines(keepends=True)
    new_lines = new.replace("\r\n", "\n").splitlines(keepends=True)
    before = "/dev/null" if created else f"a/{name}"
    out: list[str] = []
    additions = removals = 0
    for line in difflib.unified_diff(old_lines, new_lines, before, f"b/{name}", n=3):
        if line.startswith("+") and not line.startswith("+++"):
            additions += 1
        elif line.startswith("-") and not line.startswith("---"):
            removals += 1
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return Change("".join(out), additions, removals)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
