"""The InstructionsLoaded hooks: run, with Claude Code's input, for each instruction file the
model is sent: at the start, when a file changes or appears, and after a compaction; an import
is `include`, naming the file that imports it; the matcher takes the load reason."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.providers.scripted import ScriptedModel, reply, text
from tests.hooks_helpers import hook_command, hook_entry, logged
from tests.test_hooks import Recorder, project_hooks, session


def loads(log: Path) -> list[tuple[str, str, str, str | None]]:
    """(file, memory_type, load_reason, parent) of each run, the paths by name below the project."""
    return [
        (entry["file_path"], entry["memory_type"], entry["load_reason"], entry.get("parent_file_path"))
        for entry in logged(log)
    ]


def test_each_file_sent_runs_the_hooks_with_its_type_and_why(
    model: ScriptedModel, project: Path, home: Path, tmp_path: Path, in_process_env: None
) -> None:
    every, after_compaction = tmp_path / "every.log", tmp_path / "compact.log"
    project_hooks(
        project,
        {
            "InstructionsLoaded": [
                hook_entry(hook_command(tmp_path, every)),
                hook_entry(hook_command(tmp_path, after_compaction), matcher="compact"),
            ]
        },
    )
    user = home / ".agentcli" / "CLAUDE.md"
    user.write_text("Be brief.\n")
    claude = project / "CLAUDE.md"
    claude.write_text("See @docs/style.md\n")
    (project / "docs").mkdir()
    style = project / "docs" / "style.md"
    style.write_text("Tabs.\n")
    local = project / "CLAUDE.local.md"
    model.script(*(reply(text(f"answer {n}")) for n in range(4)), reply(text("The summary.")), reply(text("after")))

    with session(project, model, Recorder()) as s:
        s.send("first")
        first = loads(every)
        assert first == [
            (str(user), "User", "session_start", None),
            (str(claude), "Project", "session_start", None),
            (str(style), "Project", "include", str(claude)),
        ]
        [entry] = logged(every)[:1]
        assert entry["hook_event_name"] == "InstructionsLoaded" and entry["session_id"] == s.id
        assert entry["cwd"] == str(project)

        s.send("second")  # nothing changed: nothing loaded
        assert loads(every) == first

        local.write_text("My sandbox is at :8080.\n")
        style.write_text("Spaces.\n")
        s.send("third")
        assert loads(every)[3:] == [  # in load order: an import right after its importer
            (str(style), "Project", "include", str(claude)),
            (str(local), "Local", "session_start", None),
        ]

        s.send("fourth")
        assert s.compact().summarised
        s.send("fifth")

    again = [
        (str(user), "User", "compact", None),
        (str(claude), "Project", "compact", None),
        (str(style), "Project", "include", str(claude)),
        (str(local), "Local", "compact", None),
    ]
    assert loads(every)[5:] == again
    assert loads(after_compaction) == [load for load in again if load[2] == "compact"]
    assert "Spaces." in str(model.requests[-1].messages[0]) and "My sandbox" in str(model.requests[-1].messages[0])


def test_a_file_that_could_not_be_read_is_not_loaded_and_no_hook_blocks_the_prompt(
    model: ScriptedModel, project: Path, tmp_path: Path, in_process_env: None
) -> None:
    log = tmp_path / "loaded.log"
    project_hooks(
        project, {"InstructionsLoaded": [hook_entry(hook_command(tmp_path, log, exit=2, stderr="no thanks"))]}
    )
    (project / "CLAUDE.md").write_text("Rules.\n")
    (project / "AGENTS.md").mkdir()  # a folder: not an instruction file
    os.mkfifo(project / "CLAUDE.local.md")
    model.script(reply(text("fine")))
    recorder = Recorder()

    with session(project, model, recorder) as s:
        s.send("go")

    assert loads(log) == [(str(project / "CLAUDE.md"), "Project", "session_start", None)]
    assert len(model.requests) == 1  # exit 2 blocks nothing
    assert not any("no thanks" in notice for notice in recorder.notices())
