"""Keys typed while the model works: how each one edits the queued text, and how keys are read."""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import reduce

import pytest

from agentcli.repl.keys import edited, read_key


def typed(*keys: str) -> str:
    return reduce(edited, keys, "")


def test_printable_keys_are_kept_and_backspace_takes_the_last_back() -> None:
    assert typed("f", "i", "x", "x", "\x7f", " ", "é") == "fix é"
    assert typed("a", "\x08", "\x08", "b") == "b"


def test_ctrl_u_clears_and_enter_starts_a_new_line() -> None:
    assert typed("o", "l", "d", "\x15", "n", "e", "w", "\r", "m", "o", "r", "e") == "new\nmore"


def test_arrow_keys_and_control_characters_are_not_text() -> None:
    assert typed("a", "\x1b[A", "\x1b[Z", "\t", "\x07", "b") == "ab"


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    yield read_end, write_end
    os.close(read_end)
    os.close(write_end)


def test_a_character_of_several_bytes_is_read_as_one_key(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.write(write_end, "é€😀a".encode())

    assert [read_key(read_end, 1) for _ in range(4)] == ["é", "€", "😀", "a"]
    assert read_key(read_end, 0) is None


def test_an_escape_sequence_is_one_key(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.write(write_end, b"\x1b[A")

    assert read_key(read_end, 1) == "\x1b[A"


def test_keys_that_arrive_together_are_read_one_at_a_time(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.write(write_end, b"\x1b[B\x1b[B\x1bOA\x1b[1;5C\x1bxy")  # a held-down arrow key arrives like this

    keys = [read_key(read_end, 1) for _ in range(6)]

    assert keys == ["\x1b[B", "\x1b[B", "\x1bOA", "\x1b[1;5C", "\x1bx", "y"]
    assert read_key(read_end, 0) is None
