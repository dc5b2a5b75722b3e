"""The Workspace seam as a session uses it: every process the agent starts and every file its tools
read or write go through the session's workspace, which learns before each call that may change
something (with the user turn it belongs to) and may refuse it. The double is what a checkpointing
or sandboxing wrapper is: a small implementation of the contract around the local workspace."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TypeVar

import pytest

from agentcli.access import Access
from agentcli.contracts import JSON
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.session import Session, SessionOptions
from agentcli.tools.ripgrep import find_ripgrep
from agentcli.workspace.contract import (
    OUTPUT_LIMIT,
    Change,
    Command,
    Finished,
    Folder,
    OpenFile,
    Process,
    Verb,
    Workspace,
    WorkspaceError,
)
from agentcli.workspace.local import LocalWorkspace
from agentcli.workspace.wrapper import WorkspaceWrapper
from tests.fake_anthropic import validation_error

T = TypeVar("T")


class Recording(WorkspaceWrapper):
    """A workspace around the local one that records what goes through it; it refuses the
    changes of the tools named in `refuse`."""

    def __init__(self, root: Path, refuse: frozenset[str] = frozenset()) -> None:
        super().__init__(LocalWorkspace(root))
        self.refuse = refuse
        self.started: list[tuple[str, str]] = []
        """(program, origin) of every process, in order."""
        self.files: list[tuple[str, str]] = []
        """("read", path) and ("folder", path) of every file access, in order."""
        self.changes: list[Change] = []
        self.closed = False
        self._lock = threading.Lock()

    def run(
        self, command: Command, *, timeout: float, cancel: threading.Event, output_limit: int = OUTPUT_LIMIT
    ) -> Finished:
        self._note(self.started, (Path(command.argv[0]).name, command.origin))
        return self._inner.run(command, timeout=timeout, cancel=cancel, output_limit=output_limit)

    def start(self, command: Command) -> AbstractContextManager[Process]:
        self._note(self.started, (Path(command.argv[0]).name, command.origin))
        return self._inner.start(command)

    def read_file(self, real: Path) -> AbstractContextManager[OpenFile]:
        self._note(self.files, ("read", real.name))
        return self._inner.read_file(real)

    def open_folder(self, real: Path, verb: Verb, *, create: bool = False) -> AbstractContextManager[Folder]:
        self._note(self.files, ("folder", real.name))
        return self._inner.open_folder(real, verb, create=create)

    def before_change(self, change: Change) -> None:
        self._note(self.changes, change)
        if change.tool in self.refuse:
            raise WorkspaceError(f"This workspace takes no {change.tool} calls: it is read-only.")

    def close(self) -> None:
        self.closed = True

    def _note(self, log: list[T], item: T) -> None:
        with self._lock:
            log.append(item)


def turns(recording: Recording) -> list[tuple[str, int]]:
    return [(change.tool, change.user_turn) for change in recording.changes]


def results(model: ScriptedModel, request: int) -> list[JSON]:
    return [b for b in model.requests[request].messages[-1]["content"] if b.get("type") == "tool_result"]


@pytest.fixture
def workspace(project: Path) -> Iterator[Recording]:
    recording = Recording(project)
    with recording:
        yield recording


def session(project: Path, workspace: Workspace, model: ScriptedModel, **options: object) -> Session:
    return Session(
        SessionOptions(**options),  # type: ignore[arg-type]
        project,
        lambda event: None,
        model=model,
        workspace=workspace,
    )


def test_every_effect_of_a_session_goes_through_its_workspace_and_changes_are_announced_by_turn(
    project: Path, workspace: Recording, in_process_env: None
) -> None:
    (project / "a.txt").write_text("alpha\n")
    model = ScriptedModel(
        reply(
            tool_use("Read", {"file_path": "a.txt"}, id="t1"),
            tool_use("Grep", {"pattern": "alpha"}, id="t2"),
        ),
        reply(
            tool_use("Write", {"file_path": "b.txt", "content": "beta\n"}, id="t3"),
            tool_use("Bash", {"command": "touch c.txt"}, id="t4"),
        ),
        reply(text("done")),
        reply(tool_use("Edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}, id="t5")),
        reply(text("edited")),
        check=validation_error,
    )
    with session(project, workspace, model, permission_mode="acceptEdits", allowed_tools=["Bash(touch:*)"]) as s:
        s.send("look, then make b and c")
        s.send("shout alpha")

    assert (project / "b.txt").read_text() == "beta\n" and (project / "c.txt").exists()
    assert (project / "a.txt").read_text() == "ALPHA\n"
    assert turns(workspace) == [("Write", 1), ("Bash", 1), ("Edit", 2)]  # Read and Grep only read
    assert workspace.changes[1].access == Access(command="touch c.txt")
    assert workspace.changes[0].call_id == "t3"
    assert workspace.started[0] == ("git", "harness")  # the facts of the system prompt
    assert ("bash", "agent") in workspace.started
    if find_ripgrep() is not None:
        assert ("rg", "harness") in workspace.started
    assert ("read", "a.txt") in workspace.files and ("folder", project.name) in workspace.files
    assert not workspace.closed  # the session's owner closes a workspace it was given


def test_a_workspace_that_refuses_a_change_keeps_the_file_and_the_model_is_told_why(
    project: Path, in_process_env: None
) -> None:
    model = ScriptedModel(
        reply(tool_use("Write", {"file_path": "b.txt", "content": "beta\n"}, id="t1")),
        reply(text("ok")),
        check=validation_error,
    )
    refusing = Recording(project, refuse=frozenset({"Write"}))
    with refusing, session(project, refusing, model, permission_mode="acceptEdits") as s:
        s.send("make b")

    assert not (project / "b.txt").exists()
    [result] = results(model, 1)
    assert result["is_error"] and result["content"] == "This workspace takes no Write calls: it is read-only."
    assert refusing.files == []  # Write never reached the file


def test_a_sub_agent_s_change_counts_as_the_turn_that_started_it(
    project: Path, workspace: Recording, in_process_env: None
) -> None:
    task = {"description": "write it", "prompt": "write d.txt", "subagent_type": "general-purpose"}
    model = ScriptedModel(
        reply(text("hello")),
        reply(tool_use("Task", task, id="t1")),
        reply(tool_use("Write", {"file_path": "d.txt", "content": "delta\n"}, id="s1")),  # the sub-agent
        reply(text("written")),  # the sub-agent's answer
        reply(text("done")),
        check=validation_error,
    )
    with session(project, workspace, model, permission_mode="acceptEdits") as s:
        s.send("hi")
        s.send("have it written")

    assert (project / "d.txt").read_text() == "delta\n"
    assert turns(workspace) == [("Write", 2)]


def test_a_skill_s_command_is_announced_as_part_of_the_prompt_s_turn(
    project: Path, workspace: Recording, in_process_env: None
) -> None:
    (project / ".commands").mkdir()
    (project / ".commands" / "hi.md").write_text("---\nallowed-tools: Bash(echo:*)\n---\nSays: !`echo hi there`")
    model = ScriptedModel(reply(text("hello")), check=validation_error)
    with session(project, workspace, model) as s:
        s.send("/hi")

    assert "Says: hi there" in json.dumps(model.requests[0].messages[-1])
    [change] = workspace.changes
    assert (change.tool, change.call_id, change.access, change.user_turn) == (
        "Bash",
        "",
        Access(command="echo hi there"),
        1,
    )


def test_sessions_in_their_own_workspaces_each_work_in_their_own_folder(tmp_path: Path, in_process_env: None) -> None:
    """What a batch runner does: many sessions, each with a workspace of its own."""
    folders = [tmp_path / f"task{n}" for n in range(3)]
    recordings = []
    for n, folder in enumerate(folders):
        folder.mkdir()
        model = ScriptedModel(
            reply(tool_use("Write", {"file_path": "out.txt", "content": f"task {n}\n"}, id="t1")),
            reply(text("done")),
            check=validation_error,
        )
        recording = Recording(folder)
        recordings.append(recording)
        with session(folder, recording, model, permission_mode="acceptEdits") as s:
            s.send("write your number")

    assert [(folder / "out.txt").read_text() for folder in folders] == ["task 0\n", "task 1\n", "task 2\n"]
    assert [turns(recording) for recording in recordings] == [[("Write", 1)]] * 3
