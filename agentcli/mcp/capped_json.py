"""One JSON text, read in pieces as it arrives, copied with its size bounded: what the stdio
transport does with a message too big to hold (`agentcli.mcp.stdio`), so a server's 50 MB answer
never sits in memory whole.

    capper = JsonCapper(string_limit=4 << 20, total_limit=4 << 20)
    for piece in pieces:
        capper.feed(piece)
    text = capper.text()    # valid JSON again when the input was

The copy keeps the structure and every object member, so `id`, `isError` and the like survive
wherever they stand, and bounds what can grow:

- a string keeps its first `string_limit` characters (an escape counts as one; an object's key
  at least 1,024) and ends with `[... N more characters were cut as they arrived ...]`; a binary
  one (the value of `data` or `blob`: an image, a file) is emptied instead, a part of one being
  worth nothing;
- once the copy holds `total_limit` characters, the rest of every array is left out (elements
  are whole values, so what is kept stays valid JSON);
- a number or word over 64 characters is cut; whitespace between tokens may be dropped.

Nothing is parsed into objects. A scanner with a stack takes whole strings, runs of plain
characters and flat containers (a content block, a row) each with one regular expression, so the
cost is close to one pass over the text; the expressions are possessive, so they hold no
backtracking state however long the run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BINARY_KEYS = frozenset({"data", "blob"})
KEY_LIMIT = 1024
LITERAL_LIMIT = 64
CUT_NOTE = "\\n\\n[... {count:,} more characters were cut as they arrived ...]"
"""Ends a string that was cut, as it stands inside the JSON string (so `\\n` is escaped)."""
CUT_COUNT = re.compile(r"\[\.\.\. ([\d,]+) more characters were cut as they arrived \.\.\.\]")
"""Finds that note in the decoded text, and its count."""
_TOKEN_END = re.compile(r'[\s,:\[\]{}"]')
_SPACE = re.compile(r"\s++")
# Possessive (`*+`, `++`): the expressions never give back what they took, so matching a few
# megabytes keeps no backtracking stack (which grows by the repetition and took 700 MB).
_STRING_REST = re.compile(r'[^"\\]*+(?:(?:\\u[0-9a-fA-F]{4}|\\[^u])[^"\\]*+)*+')
"""What is left of a string up to its closing quote, or up to an escape the piece ends in the middle of."""
_STRING = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_FLAT_BODY = rf'(?:[^"\[\]{{}}]++|{_STRING})*+'
_FLAT = re.compile(rf"\{{{_FLAT_BODY}\}}|\[{_FLAT_BODY}\]")
"""A whole object or array with no container inside (a content block, a row): taken in one piece."""
_DROPPED = re.compile(rf'(?:[^"\[\]{{}}]++|{_STRING}|\{{{_FLAT_BODY}\}}|\[{_FLAT_BODY}\])*+')
"""What is left out of an array without a look: all but brackets, whole strings, flat containers."""
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)")
_PIECES = re.compile(r"[^\\]++|\\(?:u[0-9a-fA-F]{4}|.)")
"""A string's content as plain runs and single escapes."""
_KEY_KEPT = 8
"""Characters of an object's key remembered, enough to tell `data` and `blob`."""


@dataclass
class _Frame:
    kind: str
    """`{` or `[`."""
    expect_key: bool = False
    key: str = ""
    """In an object: the key whose value comes next."""


class JsonCapper:
    def __init__(self, string_limit: int, total_limit: int) -> None:
        self.string_limit = string_limit
        self.total_limit = total_limit
        self._out: list[str] = []
        self._size = 0
        self._stack: list[_Frame] = []
        self._mode = "between"  # or "string", "literal"
        self._dropping = 0
        """While leaving out the rest of an array: 1, plus the containers opened inside it since."""
        self._escape = ""
        """An escape sequence begun but not ended in the last piece."""
        self._kept = 0
        self._cut = 0
        self._start = 0
        """Where the current string's characters begin in `_out`."""
        self._key: str | None = None
        """The current string's first characters, when it is an object's key."""
        self._limit = string_limit
        """The current string's: a key's is at least KEY_LIMIT, so `id` and the like stay themselves."""
        self._binary = False
        self._literal = 0

    def text(self) -> str:
        return "".join(self._out)

    def feed(self, text: str) -> None:
        at, end = 0, len(text)
        while at < end:
            if self._mode == "string":
                at = self._string(text, at)
            elif self._mode == "literal":
                at = self._literal_run(text, at)
            elif self._dropping:
                at = self._drop(text, at)
            else:
                at = self._between(text, at)

    # ------------------------------------------------------------------ between tokens

    def _between(self, text: str, at: int) -> int:
        char = text[at]
        if char.isspace():
            space = _SPACE.match(text, at)
            assert space is not None
            return space.end()
        frame = self._stack[-1] if self._stack else None
        in_array = frame is not None and frame.kind == "["
        if char == '"':
            self._begin_string(frame)
        elif char in "{[":
            flat = _FLAT.match(text, at)
            if flat is not None and flat.end() - at <= self.string_limit and self._size < self.total_limit:
                self._emit(flat.group())  # no string in it can be over the limit: copied whole
                return flat.end()
            self._emit(char)
            self._stack.append(_Frame(char, expect_key=char == "{"))
            if char == "[" and self._size >= self.total_limit:
                self._dropping = 1
        elif char in "}]":
            self._close(char)
        elif char == "," and in_array and self._size >= self.total_limit:
            self._dropping = 1
        elif char in ",:":
            if char == "," and frame is not None and not in_array:
                frame.expect_key = True
            self._emit(char)
        else:
            self._mode, self._literal = "literal", 0
            return at
        return at + 1

    def _drop(self, text: str, at: int) -> int:
        """Leave out what follows in an array, up to its `]`: whole strings and everything but
        brackets are skipped by one expression, so only the brackets are looked at one by one."""
        end = len(text)
        while at < end:
            skipped = _DROPPED.match(text, at)
            assert skipped is not None  # the pattern matches the empty string
            at = skipped.end()
            if at >= end:
                break
            char = text[at]
            at += 1
            if char == '"':  # a string that goes on in the next piece
                self._mode, self._escape, self._key = "string", "", None
                return at
            if char in "{[":
                self._dropping += 1
                continue
            self._dropping -= 1
            if not self._dropping:
                self._close(char)
                return at
        return at

    def _close(self, char: str) -> None:
        if self._stack:
            self._stack.pop()
        self._emit(char)

    def _literal_run(self, text: str, at: int) -> int:
        found = _TOKEN_END.search(text, at)
        stop = found.start() if found else len(text)
        room = LITERAL_LIMIT - self._literal
        if room > 0 and not self._dropping:
            self._emit(text[at : min(stop, at + room)])
        self._literal += stop - at
        if found:
            self._mode = "between"
        return stop

    # ------------------------------------------------------------------ strings

    def _begin_string(self, frame: _Frame | None) -> None:
        in_object = frame is not None and frame.kind == "{"
        is_key = in_object and frame is not None and frame.expect_key
        self._key = "" if is_key else None
        self._limit = max(self.string_limit, KEY_LIMIT) if is_key else self.string_limit
        self._binary = in_object and not is_key and frame is not None and frame.key in BINARY_KEYS
        self._emit('"')
        self._mode, self._escape, self._kept, self._cut = "string", "", 0, 0
        self._start = len(self._out)

    def _string(self, text: str, at: int) -> int:
        end = len(text)
        while at < end:
            if self._escape:
                at = self._escape_run(text, at)
                continue
            rest = _STRING_REST.match(text, at)
            assert rest is not None  # the pattern matches the empty string
            if rest.end() > at:
                self._take(text[at : rest.end()])
            at = rest.end()
            if at >= end:
                break
            if text[at] == "\\":  # an escape the piece ends in the middle of
                self._escape = "\\"
                at += 1
            else:
                self._end_string()
                return at + 1
        return at

    def _take(self, run: str) -> None:
        """Whole characters and escapes of the current string: kept while it has room, counted after."""
        if self._dropping:
            return
        units = _units(run)
        if units <= self._limit - self._kept:
            self._keep(run, units)
            return
        for piece in _PIECES.finditer(run):  # the string's limit falls in this run: piece by piece to it
            if self._kept >= self._limit:
                self._cut += _units(run[piece.start() :])
                return
            self._keep(piece.group(), 1 if piece.group().startswith("\\") else len(piece.group()))

    def _escape_run(self, text: str, at: int) -> int:
        """Take the rest of an escape (`\\n`, `\\u00e9`), which may be split between pieces."""
        if self._escape == "\\" and text[at] != "u":
            self._escape += text[at]
            at += 1
        else:
            take = min(6 - len(self._escape), len(text) - at)
            self._escape += text[at : at + take]
            at += take
            if len(self._escape) < 6:
                return at
        self._keep(self._escape, 1)
        self._escape = ""
        return at

    def _keep(self, piece: str, units: int) -> None:
        """Keep what room the string has left of `piece` (`units` characters once decoded): plain
        characters are cut at the limit, an escape is kept or cut whole."""
        if self._dropping:
            return
        if self._key is not None and len(self._key) < _KEY_KEPT:
            self._key += piece[: _KEY_KEPT - len(self._key)]
        room = self._limit - self._kept
        if units <= room:
            self._emit(piece)
            self._kept += units
            return
        if room > 0 and units == len(piece):  # plain characters: keep the first `room`
            self._emit(piece[:room])
            self._kept += room
            units -= room
        self._cut += units

    def _end_string(self) -> None:
        self._mode = "between"
        if self._dropping:
            return
        frame = self._stack[-1] if self._stack else None
        if self._key is not None and frame is not None:
            frame.key, frame.expect_key = self._key, False
        if self._cut and self._binary:
            self._size -= sum(len(piece) for piece in self._out[self._start :])
            del self._out[self._start :]
        elif self._cut:
            self._emit(CUT_NOTE.format(count=self._cut))
        self._emit('"')

    def _emit(self, piece: str) -> None:
        self._out.append(piece)
        self._size += len(piece)


def _units(run: str) -> int:
    """The characters `run` (whole characters and escapes of a JSON string) stands for."""
    if "\\" not in run:
        return len(run)
    return len(run) - sum(len(escape) - 1 for escape in _ESCAPE.findall(run))
