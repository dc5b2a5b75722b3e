"""Text files as the file tools see them: encoding, line endings, binary sniffing."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from agentcli.tools.base import ToolError

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
SNIFF_BYTES = 8192


def bom_encoding(head: bytes) -> str | None:
    """The codec named by a byte-order mark at the start of `head`, if any."""
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding
    return None


def looks_binary(head: bytes) -> bool:
    """A NUL byte near the start (and no UTF-16/32 byte-order mark) means binary."""
    return b"\0" in head[:SNIFF_BYTES] and bom_encoding(head) in (None, "utf-8-sig")


@dataclass(frozen=True)
class TextFile:
    text: str
    """Decoded text, line endings exactly as stored."""
    encoding: str
    """Codec that writes the file back byte for byte (`latin-1` for non-UTF-8 bytes)."""

    @property
    def newline(self) -> str:
        """The file's dominant line ending."""
        crlf = self.text.count("\r\n")
        return "\r\n" if crlf and crlf >= self.text.count("\n") - crlf else "\n"


def decode(data: bytes) -> TextFile:
    encoding = bom_encoding(data)
    if encoding is not None:
        return TextFile(data.decode(encoding, errors="replace"), encoding)
    try:
        return TextFile(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        return TextFile(data.decode("latin-1"), "latin-1")


def encode(text: str, encoding: str, shown: str) -> bytes:
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as error:
        bad = text[error.start : error.end]
        raise ToolError(
            f"{shown} is stored as {encoding}, which cannot hold {bad!r}. "
            "Use only characters that encoding supports, or convert the file to UTF-8 with Write."
        ) from None


def split_lines(text: str) -> list[str]:
    """Lines as editors and grep count them: split on \\n only, \\r of CRLF dropped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
