"""The spelling the tools show a file name in, and take back: one spelling per name, both ways."""

from __future__ import annotations

import itertools
import os

from agentcli.path_text import from_shown, is_escaped, shown_name

PIECES = [b"\\", b"x", b"5c", b"e9", b"\xe9", b"\xc3\xa9"]
"""Bytes that make escapes (`\\x5c`, `\\xe9`, `\\x5cx5c`...), an undecodable byte and UTF-8 é."""


def test_every_name_has_one_spelling_that_reads_back_as_it() -> None:
    spellings: dict[str, bytes] = {}
    for length in range(6):
        for parts in itertools.product(PIECES, repeat=length):
            raw = b"".join(parts)
            name = os.fsdecode(raw)
            shown = shown_name(name)
            shown.encode("utf-8")  # a request can carry it (no lone surrogate left)
            assert os.fsencode(from_shown(shown)) == raw, raw
            assert spellings.setdefault(shown, raw) == raw, (shown, raw, spellings[shown])


def test_plain_names_are_shown_as_they_are() -> None:
    for name in ("notes.txt", "café.md", "a\\b", "dir/sub dir/x.py", "\\x41"):
        assert shown_name(name) == name and not is_escaped(name)
    assert shown_name(os.fsdecode(b"caf\xe9.txt")) == "caf\\xe9.txt"
    assert shown_name("caf\\xe9.txt") == "caf\\x5cxe9.txt"
    assert is_escaped("caf\\xe9.txt") and from_shown("CAF\\XE9") == os.fsdecode(b"CAF\xe9")
