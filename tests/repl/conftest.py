"""REPLs built in this process, as `agentcli` builds one (`repl_with`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from agentcli.repl.app import Repl
from agentcli.session import SessionOptions
from tests.fake_anthropic import FakeAnthropic

MakeRepl = Callable[[], tuple[Repl, PipeInput]]
"""A REPL in this process (against the fake server, in the project), and the keys its questions read."""


@pytest.fixture
def repl_keys(fake_api: FakeAnthropic, in_process_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[PipeInput]:
    """The keys the questions of the REPLs `repl_with` builds read (send them before they are asked)."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    monkeypatch.setenv("TERM", "dumb")
    with (
        open(os.devnull) as stdin,  # not a terminal: no Esc watching while a turn runs
        create_pipe_input() as keys,
        create_app_session(input=keys, output=DummyOutput()),
    ):
        monkeypatch.setattr(sys, "stdin", stdin)
        yield keys


@pytest.fixture
def repl_with(repl_keys: PipeInput, project: Path) -> Iterator[MakeRepl]:
    """REPLs built in this process, as `agentcli` builds one, with the questions they ask read from a pipe."""
    made: list[Repl] = []

    def make() -> tuple[Repl, PipeInput]:
        repl = Repl(SessionOptions(), project)
        made.append(repl)
        return repl, repl_keys

    yield make
    for repl in made:
        repl.close("other")
