"""A session releases what it holds when closed: its transcript's lock, the tool threads and
the model's connections. In-process, with the scripted model (a new conversation's release of
the last one's threads: tests/test_session_bookkeeping.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentcli.errors import UsageError
from agentcli.events import MAIN_AGENT, Event
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.session import Session, SessionOptions
from agentcli.sessions.transcript import TranscriptWriter
from tests.conftest import RunAgent


def tool_threads() -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name.startswith("tool")}


def read_three(project: Path, model: ScriptedModel) -> None:
    """Script a turn of three concurrent Reads (they run on the tool threads), then an answer."""
    for name in "abc":
        (project / f"{name}.txt").write_text(f"{name}\n")
    model.script(reply(*(tool_use("Read", {"file_path": f"{name}.txt"}) for name in "abc")), reply(text("Read.")))


def test_leaving_a_with_block_releases_the_threads_the_transcript_and_the_model(
    in_process_env: None, project: Path, model: ScriptedModel
) -> None:
    read_three(project, model)
    before = tool_threads()
    events: list[Event] = []

    with Session(SessionOptions(), project, events.append, model=model) as session:
        session.send("read a, b and c")
        started = tool_threads() - before
        path = session.transcript.path
        with pytest.raises(UsageError, match="in use by another agentcli process"):
            TranscriptWriter.existing(path, lambda note: None)
        assert model.closed == 0

    assert started and not any(thread.is_alive() for thread in started)
    assert model.closed == 1
    TranscriptWriter.existing(path, lambda note: None).close()  # the lock is free: another agentcli may go on
    assert {event.agent_id for event in events} == {MAIN_AGENT}


def test_a_run_closes_the_model_when_it_ends(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(text("hello")))
    assert run_agent("hi").returncode == 0
    assert model.closed == 1
    assert run_agent("hi again").returncode == 1  # the script ran out: the run fails, and closes all the same
    assert model.closed == 2
