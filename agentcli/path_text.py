"""File names as text the model reads and writes back: one spelling for each name, both ways.

A name need not be UTF-8 (`b"caf\\xe9.txt"`): Python keeps an undecodable byte as a lone
surrogate (`os.fsdecode` gives `"caf\\udce9.txt"`), which no request can carry. The tools show
such a name with the byte escaped, `caf\\xe9.txt`, and take that spelling back as the name it
shows: `shown_name` and `from_shown` are inverses, so whatever Glob, Grep or an error message
shows can be passed to Read, Write, Edit, Grep or Glob (`ToolContext.resolve`).

The spelling is unambiguous: in a shown name, `\\xNN` with NN from 80 to ff is that byte, and
`\\x5c` is a backslash. A name is shown as it is unless it holds an undecodable byte or reads
differently once unescaped (a real backslash followed by `x5c` or `x80`…`xff`); such a name
has every backslash shown as `\\x5c` too. So `caf\\xe9.txt` (a backslash, typed) is shown as
`caf\\x5cxe9.txt`, and the two files never share a spelling. A name with a backslash that
reads the same either way (`a\\b`) is shown as it is.

Bash takes a command, not a name: there the model writes the bytes itself (`$'caf\\xe9.txt'`),
which `ESCAPED_NOTE` tells it when a listing shows such a name.
"""

from __future__ import annotations

import re

_SHOWN_BYTE = re.compile(r"\\x(5c|[89a-f][0-9a-f])", re.IGNORECASE)
_ESCAPE = re.compile("[\\\\\udc80-\udcff]")
BACKSLASH = 0x5C
SURROGATE_BASE = 0xDC00
"""Where `surrogateescape` puts an undecodable byte (0xDC00 + the byte)."""

ESCAPED_NOTE = (
    "(A name shown with \\xNN is not UTF-8, NN being the byte's value: pass it to Read, Write, Edit, "
    "Glob and Grep as shown; in Bash write it with $'...' quotes, e.g. cat $'caf\\xe9.txt'.)"
)


def from_shown(text: str) -> str:
    """The name `text` shows: `\\xNN` (80…ff) the byte (as `os.fsdecode` keeps it), `\\x5c` a backslash."""
    if "\\" not in text:
        return text
    return _SHOWN_BYTE.sub(_unescaped, text)


def shown_name(name: str) -> str:
    """`name` as the tools show it: as it is, unless it needs escaping (see the module's docstring)."""
    if not needs_escaping(name):
        return name
    return _ESCAPE.sub(_escaped, name)


def needs_escaping(name: str) -> bool:
    """Is `name` shown otherwise than as it is (an undecodable byte, or a backslash that would mislead)?"""
    if name.isascii() and "\\" not in name:
        return False
    return any(0xDC80 <= ord(c) <= 0xDCFF for c in name) or from_shown(name) != name


def is_escaped(shown: str) -> bool:
    """Is `shown` (what `shown_name` gave) the escaped spelling of a name?"""
    return from_shown(shown) != shown


def _unescaped(match: re.Match[str]) -> str:
    value = int(match.group(1), 16)
    return "\\" if value == BACKSLASH else chr(SURROGATE_BASE + value)


def _escaped(match: re.Match[str]) -> str:
    point = ord(match.group())
    return f"\\x{point - SURROGATE_BASE if point > 0xFF else point:02x}"
