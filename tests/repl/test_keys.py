"""Keys read while a turn runs (the Esc watcher), on a real pseudo-terminal as stdin."""

from __future__ import annotations

import os
import pty
import sys
import tty
from collections.abc import Iterator

import pytest

from agentcli.repl.keys import EscWatcher, read_key


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, int]]:
    """(the keyboard side, the program side) of a pty that is the program's stdin, keys unbuffered
    as the prompt reads them."""
    keyboard, program = pty.openpty()
    tty.setcbreak(program)
    with os.fdopen(os.dup(program), "r") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        yield keyboard, program
    os.close(keyboard)
    os.close(program)


def left_for_the_prompt(program: int) -> str:
    """The keys still waiting to be read."""
    keys = []
    while (key := read_key(program, timeout=0)) is not None:
        keys.append(key)
    return "".join(keys)


def test_no_key_typed_as_the_turn_ends_is_lost(terminal: tuple[int, int]) -> None:
    keyboard, program = terminal
    with EscWatcher() as watcher:
        os.write(keyboard, b"/co")
        typed = watcher.typeahead()  # the turn is over
        os.write(keyboard, b"st")  # typed just then: the watcher must leave these for the prompt

    assert typed + left_for_the_prompt(program) == "/cost"
