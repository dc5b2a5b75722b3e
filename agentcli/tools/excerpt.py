"""A slice of a file's lines in bounded memory, however big the file or long its lines.

Read uses this for files too big to read whole. The file is read a chunk at a time and
decoded incrementally; lines before the slice are only counted, at most `keep` characters of
each line in it are kept (the rest only counted), and reading stops as soon as the slice is
complete (or the kept text passes `budget`). So the file's line count and whole-file hash
are known only when reading reached its end; `Excerpt` says which.

Decoding matches `textfile.decode` line by line: the file's byte-order mark's codec if it has
one, else UTF-8, and a line that is not valid UTF-8 is shown as Latin-1.
"""

from __future__ import annotations

import codecs
import hashlib
from dataclasses import dataclass, field

from agentcli.workspace.contract import Readable

CHUNK = 1 << 20


@dataclass
class Excerpt:
    lines: list[tuple[str, int]] = field(default_factory=list)
    """The lines of the slice: (the text kept, how many characters more the line has)."""
    total: int | None = None
    """Lines in the file, when reading reached its end; None when it stopped before."""
    sha256: str | None = None
    """Hash of the whole file, when reading reached its end."""


def read_excerpt(stream: Readable, first: int, count: int, *, encoding: str | None, keep: int, budget: int) -> Excerpt:
    """Lines `first` … `first + count - 1` (1-based) of the open file `stream`, read from its start.

    `encoding` is the codec of the file's byte-order mark, or None for UTF-8 (Latin-1 lines).
    """
    decoder = codecs.getincrementaldecoder(encoding or "utf-8")(errors="replace" if encoding else "surrogateescape")
    digest = hashlib.sha256()
    scan = _Scan(first, first + count - 1, keep, budget, latin1_fallback=encoding is None)
    while True:
        raw = stream.read(CHUNK)
        digest.update(raw)
        rest = scan.feed(decoder.decode(raw, final=not raw))
        if not raw:
            scan.end_of_file()
            return Excerpt(scan.lines, scan.number - 1, digest.hexdigest())
        if rest is not None:  # the slice is complete; known to be the end only if nothing follows
            if rest:
                return Excerpt(scan.lines)
            after = stream.read(CHUNK)
            digest.update(after)
            if after or decoder.decode(b"", final=True):
                return Excerpt(scan.lines)
            return Excerpt(scan.lines, scan.number - 1, digest.hexdigest())


class _Scan:
    """Splits decoded text into lines, keeping what the slice needs."""

    def __init__(self, first: int, last: int, keep: int, budget: int, *, latin1_fallback: bool) -> None:
        self.first, self.last, self.keep, self.budget = first, last, keep, budget
        self.latin1_fallback = latin1_fallback
        self.number = 1
        """The line being read."""
        self.started = False
        """Whether the line being read has any characters yet."""
        self.parts: list[str] = []
        self.kept = 0
        self.more = 0
        self.last_char = ""
        self.size = 0
        self.lines: list[tuple[str, int]] = []

    def feed(self, text: str) -> str | None:
        """Take in `text`; once the slice is complete, return the text after it (else None)."""
        pos = 0
        while pos < len(text):
            if self.number < self.first:
                pos = self._skip(text, pos)
                continue
            newline = text.find("\n", pos)
            end = len(text) if newline < 0 else newline
            self._take(text[pos:end])
            if newline < 0:
                return None
            pos = newline + 1
            self._end_line()
            if self.number > self.last or self.size > self.budget:
                return text[pos:]
        return None

    def end_of_file(self) -> None:
        if self.started:
            if self.number >= self.first:
                self._end_line()
            else:
                self.number += 1

    def _skip(self, text: str, pos: int) -> int:
        """Count the lines before the slice, passing a whole chunk at once when it ends before the slice."""
        needed = self.first - self.number
        newlines = text.count("\n", pos)
        if newlines < needed:
            self.number += newlines
            tail = text.rfind("\n", pos) + 1 if newlines else pos
            self.started = (self.started and not newlines) or tail < len(text)
            return len(text)
        for _ in range(needed):
            pos = text.index("\n", pos) + 1
        self.number, self.started = self.first, False
        return pos

    def _take(self, piece: str) -> None:
        if not piece:
            return
        self.started = True
        room = self.keep - self.kept
        if room > 0:
            self.parts.append(piece[:room])
            self.kept += min(room, len(piece))
        self.more += max(0, len(piece) - max(room, 0))
        self.last_char = piece[-1]

    def _end_line(self) -> None:
        text = "".join(self.parts)
        more = self.more
        if self.last_char == "\r":  # the \r of CRLF is not part of the line
            if more:
                more -= 1
            else:
                text = text[:-1]
        if self.latin1_fallback and _has_undecodable(text):
            text = text.encode("utf-8", "surrogateescape").decode("latin-1")
        self.lines.append((text, more))
        self.size += len(text) + 8
        self.number += 1
        self.started, self.parts, self.kept, self.more, self.last_char = False, [], 0, 0, ""


def _has_undecodable(text: str) -> bool:
    """Bytes that were not UTF-8 come back from surrogateescape as U+DC80…U+DCFF."""
    return any("\udc80" <= char <= "\udcff" for char in text)
