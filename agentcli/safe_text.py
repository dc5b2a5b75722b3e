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
- `colours_only(text)`: a program's line shown as it coloured it (the status line command's):
  SGR sequences (colours, bold, …) are kept, every other escape sequence and control character
  is dropped, so it cannot move the cursor, clear the screen or retitle the terminal.
"""

from __future__ import annotations

import re

from agentcli.credentials import redact

_SURROGATE = re.compile("[\ud800-\udfff]")
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: cursor moves, erases, modes (an unfinished one too)
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]?"  # any other escape (charset, keypad, reset)
)
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


def colours_only(text: str) -> str:
    """`text` with its colours (SGR sequences) kept and every other escape sequence and control
    character (tabs become spaces), bidi control and lone surrogate dropped."""
    kept: list[str] = []
    end = 0
    for colour in _SGR.finditer(text):
        kept.append(_without_controls(text[end : colour.start()]))
        kept.append(colour.group())
        end = colour.end()
    kept.append(_without_controls(text[end:]))
    return "".join(kept)


def _without_controls(text: str) -> str:
    text = _ESCAPE_SEQUENCE.sub("", text.replace("\t", " "))
    return _TERMINAL_UNSAFE.sub("", text.replace("\n", ""))
