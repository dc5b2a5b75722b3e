"""Text from outside (files, programs, the model, a server) made safe where it goes next.

Two destinations, one function each:

- `for_conversation(text)`: before text enters the conversation (and so the transcript and
  every later request). Undecodable bytes, which Python keeps as lone surrogates
  (`os.fsdecode(b"caf\\xe9")` is `"caf\\udce9"`), cannot be encoded as UTF-8: one of them
  would make every later request of the session fail. They are shown escaped instead
  (`caf\\xe9.txt`), and the API credentials agentcli holds are redacted
  (`agentcli.credentials.redact`). Applied to every tool result (content, summary, diff) by
  the executor and to every user message by the loop, so no tool has to remember it.
- `for_terminal(text)`: before a string the model or a program controls is printed on the
  user's terminal. Control characters (C0 but newline and tab, ESC, DEL, C1) and the bidi
  controls that reorder what is shown (U+202E and friends) are shown escaped (`\\x1b[2J`),
  so a command cannot clear the screen or disguise itself in the permission question.
"""

from __future__ import annotations

import re

from agentcli.credentials import redact

_SURROGATE = re.compile("[\ud800-\udfff]")
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_ESCAPED_BYTES = range(0xDC80, 0xDD00)
"""Where `surrogateescape` puts an undecodable byte (0xDC00 + the byte)."""


def _escaped(match: re.Match[str]) -> str:
    point = ord(match.group())
    if point in _ESCAPED_BYTES:
        return f"\\x{point - 0xDC00:02x}"
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def is_valid_unicode(text: str) -> bool:
    """Does `text` encode as UTF-8 (no lone surrogates)?"""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def valid_unicode(text: str) -> str:
    """`text` with every lone surrogate escaped (an undecodable byte as `\\xe9`), so it encodes as UTF-8."""
    return text if is_valid_unicode(text) else _SURROGATE.sub(_escaped, text)


def for_conversation(text: str) -> str:
    """`text` as it may enter the conversation: valid Unicode, credentials redacted."""
    return redact(valid_unicode(text))


def for_terminal(text: str) -> str:
    """`text` safe to print: control characters, bidi controls and lone surrogates shown escaped.

    Newlines and tabs are kept; everything else that would move the cursor, change the
    screen or reorder characters becomes visible (`\\x1b`, `\\x9b`, `\\u202e`).
    """
    if _TERMINAL_UNSAFE.search(text) is None:
        return text
    return _TERMINAL_UNSAFE.sub(_escaped, text)
