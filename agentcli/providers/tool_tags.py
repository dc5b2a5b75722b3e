"""The model's own tool-call tags in its text, told apart from tags it quotes (the text tool protocol).

A `<tool_call>` is a call only where the model wrote one: outside code. An answer that shows a
file, a tool result or an example holding a tag puts it in code, and there it is text, whatever
the file says. Code is what a Markdown reader shows as code; where this reading and Markdown's
could differ, it leans to code, so that a quoted tag is never run:

- **a fenced block**: a line whose first characters, after indentation, block-quote marks (`>`)
  and list markers (`-`, `*`, `+`, `1.`, `1)`), are three or more backticks or tildes (what
  follows them on that line included). It ends with a line holding only a fence of the same
  character at least as long, after as many `>` marks and at most three columns more than the
  opening fence's container; or with the text (a fence left open).
- **an indented line**: one indented four columns or more (before or after its quote marks).
  Markdown reads one that continues a paragraph as prose; here it is code all the same.
- **a code span**: a run of backticks, up to the next run of as many. Left open, it runs to the
  end of its paragraph (a blank line); Markdown would show those backticks as they are, but a
  tag behind a stray backtick stays text.
- **quoting markup**: a comment (`<!-- -->`), CDATA (`<![CDATA[ ]]>`), `<code>` or `<pre>`,
  up to its end, or the end of the text.
- A backslash makes the next character plain (`\\<tool_call>` is text).

Only the exact tag opens a call (`<TOOL_CALL>`, `< tool_call>` are text). Its body ends at the
first `</tool_call>` outside a JSON string, so arguments may hold that text; in a body that never
gets there (one that is not JSON), at the first `</tool_call>`; else the tag was never closed.

`TagScanner` reads a text block as it streams in and hands back what it has settled: prose
(quoted tags included) and tags. The prose filter shows the first, the parse runs the second;
both read with this one scanner, so what the user saw as prose is what stays prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["CALL_CLOSE", "CALL_OPEN", "Piece", "Tag", "TagScanner", "pieces"]

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"

_OPENER = re.compile(r"(?P<prefix>(?:[ \t>]|(?:[-*+]|\d{1,9}[.)])(?=[ \t]))*)(?P<fence>`{3,}|~{3,})")
"""A fence's opening: indentation, quote marks and list markers in any order, then the fence."""
_CLOSER = re.compile(r"(?P<prefix>[ \t>]*)(?P<fence>`+|~+)[ \t]*\r?")
_QUOTING = {"<!--": "-->", "<![cdata[": "]]>", "<code>": "</code>", "<pre>": "</pre>"}
"""Markup that quotes what it holds (matched in any case), and its end."""
_END_OF = {opener: re.compile(re.escape(end), re.IGNORECASE) for opener, end in _QUOTING.items()}
_OPENERS = (CALL_OPEN, *_QUOTING)
_LONGEST_OPENER = max(map(len, _OPENERS))
_LINE_KEPT = 1024
"""Characters of a line kept to tell what it is (a longer one is neither blank nor a closing fence)."""
_SPECIAL = re.compile(r"[\\`<\n]")
_IN_BODY = re.compile(r'["\\<]')


@dataclass(frozen=True)
class Tag:
    """A tool-call tag: its body (between the tags), and whether it was closed."""

    body: str
    closed: bool


Piece = str | Tag
"""Prose, or a tag."""


@dataclass(frozen=True)
class _Fence:
    char: str
    length: int
    quotes: int
    column: int
    """The least column (after the quote marks) its closing fence may stand at."""


Mode = Literal["line", "fence", "indented", "markup", "tag"]


class TagScanner:
    """Reads one text block, piece by piece (`feed`, then `finish`), into prose and tags."""

    def __init__(self) -> None:
        self._pending = ""
        """Text not read yet: it may be the start of a tag, so more is needed to tell."""
        self._out: list[Piece] = []
        self._reset()

    def _reset(self) -> None:
        self._mode: Mode = "line"
        self._line = ""
        """The current line as read so far, outside a tag (its first `_LINE_KEPT` characters)."""
        self._line_read = False
        """The current line's kind is settled: prose, or the code block the mode names."""
        self._opening_line = False
        """The current line opened the fence (so it cannot close it)."""
        self._span = 0
        """The backticks of the open code span, 0 when none is open."""
        self._span_at_line_start = 0
        self._fence: _Fence | None = None
        self._markup_open = ""
        self._body: list[str] = []
        self._in_string = False
        self._escaped = False

    @property
    def open_tag(self) -> str | None:
        """The start of the body so far (up to `_LINE_KEPT` characters) of a tag not yet closed; None outside one."""
        if self._mode != "tag":
            return None
        head = ""
        for part in self._body:
            head += part
            if len(head) >= _LINE_KEPT:
                break
        return head[:_LINE_KEPT]

    def feed(self, text: str) -> list[Piece]:
        """Read `text`; what it settled, in order (adjacent prose joined)."""
        self._pending += text
        self._read(final=False)
        return self._take()

    def finish(self, text: str = "") -> list[Piece]:
        """The block ended (with `text`): what was held back, settled; ready for the next block."""
        self._pending += text
        self._read(final=True)
        while self._mode == "tag":  # never closed outside a string: it ends at its first close, if any
            body = "".join(self._body)
            end = body.find(CALL_CLOSE)
            if end < 0:
                self._out.append(Tag(body, closed=False))
                break
            self._end_tag(body[:end])
            self._pending = body[end + len(CALL_CLOSE) :]
            self._read(final=True)
        pieces = self._take()
        self._reset()
        return pieces

    def _take(self) -> list[Piece]:
        joined: list[Piece] = []
        prose: list[str] = []
        for piece in [*self._out, Tag("", closed=False)]:
            if isinstance(piece, str):
                prose.append(piece)
                continue
            if text := "".join(prose):
                joined.append(text)
            prose = []
            joined.append(piece)
        self._out = []
        return joined[:-1]

    def _read(self, *, final: bool) -> None:
        text, at = self._pending, 0
        last_tag = text.rfind(CALL_OPEN) if final else len(text)
        while at < len(text):
            if at > last_tag and self._mode != "tag":  # the text ends with no tag ahead: all prose
                self._prose(text[at:])
                break
            moved = self._step(text, at, final)
            if moved == at:
                break
            at = moved
        self._pending = text[at:]

    def _step(self, text: str, at: int, final: bool) -> int:
        """Read `text` from `at`; where reading got to (`at` itself: more text is needed)."""
        if self._mode == "tag":
            return self._tag_step(text, at, final)
        if self._mode == "markup":
            return self._markup_step(text, at, final)
        if self._mode in ("fence", "indented"):
            end = text.find("\n", at)
            if end < 0:
                self._prose(text[at:])
                return len(text)
            self._prose(text[at : end + 1])
            self._end_code_line()
            return end + 1
        found = _SPECIAL.search(text, at)
        if found is None:
            self._prose(text[at:])
            return len(text)
        if found.start() > at:
            self._prose(text[at : found.start()])
            return found.start()
        return self._special(text, at, final)

    def _special(self, text: str, at: int, final: bool) -> int:
        """At a backslash, backtick, `<` or line end, on a line not in a code block."""
        char = text[at]
        if char == "\n":
            self._settle_line(at_end=True)
            self._prose("\n")
            self._end_line()
            return at + 1
        if char == "\\" and not self._span:
            if at + 1 == len(text) and not final:
                return at
            used = 1 if text[at + 1 : at + 2] in ("", "\n") else 2
            self._prose(text[at : at + used])
            return at + used
        if char == "`":
            end = at
            while end < len(text) and text[end] == "`":
                end += 1
            if end == len(text) and not final:
                return at  # the run may go on
            self._prose(text[at:end])
            if not self._span:
                self._span = end - at
            elif self._span == end - at:
                self._span = 0
            return end
        if char == "<":
            opener = next((o for o in _OPENERS if text[at : at + len(o)].lower() == o), None)
            rest = text[at : at + _LONGEST_OPENER].lower()
            if (
                opener is None
                and not final
                and len(rest) < _LONGEST_OPENER
                and any(o.startswith(rest) for o in _OPENERS)
            ):
                return at  # it may still become one
            if opener is not None:
                self._settle_line(at_end=False)  # all of the line before it is read
            if opener is not None and self._mode == "line" and not self._span:
                return self._open(text, at, opener)
        self._prose(char)  # a `<` that opens no call, or a backslash in a code span
        return at + 1

    def _open(self, text: str, at: int, opener: str) -> int:
        """At a call tag (as written: in another case it is text), or markup that quotes what it holds."""
        if opener != CALL_OPEN:
            self._mode, self._markup_open = "markup", opener
        elif text.startswith(CALL_OPEN, at):
            self._mode, self._body, self._in_string, self._escaped = "tag", [], False, False
            return at + len(CALL_OPEN)
        self._prose(text[at : at + len(opener)])
        return at + len(opener)

    def _markup_step(self, text: str, at: int, final: bool) -> int:
        """Read quoting markup (a comment, CDATA, `<code>`, `<pre>`) up to its end, as prose."""
        found = _END_OF[self._markup_open].search(text, at)
        if found is not None:
            used = found.end()
            self._mode = "line"
        else:
            keep = 0 if final else len(_QUOTING[self._markup_open]) - 1  # the end may be arriving
            used = max(at, len(text) - keep)
        for line in text[at:used].splitlines(keepends=True):
            self._prose(line)
            if line.endswith("\n"):
                self._new_line()
                self._line_read = True  # a line inside the markup: nothing on it opens anything
        return used

    def _tag_step(self, text: str, at: int, final: bool) -> int:
        """Read a tag's body up to its end: `</tool_call>` outside a JSON string."""
        position = at
        if self._escaped:  # the character after a backslash that ended the last piece
            self._escaped, position = False, at + 1
        while (found := _IN_BODY.search(text, position)) is not None:
            where = found.start()
            char = text[where]
            position = where + 1
            if char == "\\":
                if self._in_string:
                    self._escaped = where + 1 == len(text)
                    position = where + 2
            elif char == '"':
                self._in_string = not self._in_string
            elif self._in_string:
                continue
            elif text.startswith(CALL_CLOSE, where):
                self._end_tag("".join([*self._body, text[at:where]]))
                return where + len(CALL_CLOSE)
            elif not final and CALL_CLOSE.startswith(text[where:]):
                self._body.append(text[at:where])
                return where  # perhaps the end, still arriving
        self._body.append(text[at:])
        return len(text)

    def _end_tag(self, body: str) -> None:
        self._out.append(Tag(body, closed=True))
        self._mode, self._body = "line", []
        self._line += CALL_OPEN  # the line holds more than blanks

    def _prose(self, text: str) -> None:
        self._out.append(text)
        if len(self._line) < _LINE_KEPT:
            self._line += text[:_LINE_KEPT]

    def _settle_line(self, *, at_end: bool) -> None:
        """Decide what the current line is, from what was read of it: a fence's opening line, an
        indented code line, or prose (where a tag is the model's own unless in a code span)."""
        if self._line_read:
            return
        self._line_read = True
        line = self._line
        if self._span_at_line_start:
            return  # in a code span open since an earlier line
        blank = at_end and not line.strip(" \t>\r\n")
        if not blank and _indent(line[: len(line) - len(line.lstrip(" \t>"))]) >= 4:
            self._mode, self._span = "indented", 0
            return
        opener = _OPENER.match(line)
        if opener is not None:
            quotes, after = _container(opener["prefix"])
            column = _width(after) if after.strip(" \t") else 0  # in a list item: its content's column
            self._fence = _Fence(opener["fence"][0], len(opener["fence"]), quotes, column)
            self._mode, self._span, self._opening_line = "fence", 0, True

    def _end_line(self) -> None:
        """After a line not in a code block ended (a fence's opening line included)."""
        line = self._line.rstrip("\r\n")
        if self._mode == "fence":
            self._opening_line = False
        elif self._mode == "indented":
            self._mode = "line"
        elif not line.strip(" \t>"):
            self._span = 0  # a blank line ends a paragraph, and a code span left open in it
        self._new_line()

    def _end_code_line(self) -> None:
        """After a line of a fenced or indented block ended."""
        if self._mode == "indented":
            self._mode = "line"
        elif not self._opening_line and self._fence is not None and _closes(self._line, self._fence):
            self._mode, self._fence = "line", None
        self._opening_line = False
        self._new_line()

    def _new_line(self) -> None:
        self._line, self._line_read, self._span_at_line_start = "", False, self._span


def _closes(line: str, fence: _Fence) -> bool:
    """Does `line` close `fence`: the same quote marks, a fence of its character at least as
    long, within three columns of where its container's content begins, and nothing else."""
    closer = _CLOSER.fullmatch(line.removesuffix("\n"))
    if closer is None or len(line) >= _LINE_KEPT:
        return False
    quotes, after = _container(closer["prefix"])
    run = closer["fence"]
    return (
        run[0] == fence.char
        and len(run) >= fence.length
        and quotes == fence.quotes
        and fence.column <= _width(after) <= fence.column + 3
    )


def _container(prefix: str) -> tuple[int, str]:
    """The quote marks in a line's `prefix`, and what follows the last one (less the one space a mark takes)."""
    quotes = prefix.count(">")
    after = prefix.rsplit(">", 1)[-1]
    return quotes, after[1:] if quotes and after.startswith(" ") else after


def _indent(lead: str) -> int:
    """How far a line starting with `lead` (blanks and quote marks) is indented: before its first
    quote mark (then it is code, quote marks and all), else after its last."""
    before = len(lead) - len(lead.lstrip(" \t"))
    if _width(lead[:before]) >= 4 or ">" not in lead:
        return _width(lead[:before])
    return _width(_container(lead)[1])


def _width(text: str) -> int:
    """The columns `text` takes from the start of a line, tabs stopping every four columns."""
    column = 0
    for char in text:
        column = column + 4 - column % 4 if char == "\t" else column + 1
    return column


def pieces(text: str) -> list[Piece]:
    """A whole text block read into prose and tags, in order."""
    return TagScanner().finish(text)
