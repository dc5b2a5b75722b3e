"""Each project's sessions in a folder of its own; the older, shared folder layout is still read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentcli.context.paths import legacy_state_dir, memory_dir, project_state_dir
from agentcli.providers.scripted import ScriptedModel, reply, text
from tests.conftest import Ran, RunAgent


def look_alike_projects(tmp_path: Path) -> tuple[Path, Path]:
    """Two projects whose paths differ only in `-` versus `_`: the same slug in the old layout."""
    first, second = tmp_path / "x" / "proj-a", tmp_path / "x" / "proj_a"
    for path in (first, second):
        path.mkdir(parents=True)
    return first, second


def sent(model: ScriptedModel, request: int = -1) -> str:
    return json.dumps(model.requests[request].messages)


def session_id(done: Ran) -> str:
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["session_id"])


def test_continue_in_one_project_never_resumes_a_look_alike_projects_session(
    run_agent: RunAgent, model: ScriptedModel, home: Path, tmp_path: Path
) -> None:
    first, second = look_alike_projects(tmp_path)
    model.script(reply(text("noted")), reply(text("still here")))
    assert run_agent("the plan of project A", cwd=first).returncode == 0

    other = run_agent("go on", continue_session=True, cwd=second)

    assert other.returncode == 2
    assert f"No earlier session to continue in {second}" in other.stderr
    assert len(model.requests) == 1
    agentcli_home = home / ".agentcli"
    assert project_state_dir(first, agentcli_home) != project_state_dir(second, agentcli_home)

    same = run_agent("go on", continue_session=True, cwd=first)
    assert same.returncode == 0, same.stderr
    assert "the plan of project A" in sent(model)


def test_sessions_in_the_old_shared_folder_are_found_by_the_project_they_record(
    run_agent: RunAgent, model: ScriptedModel, home: Path, tmp_path: Path
) -> None:
    first, second = look_alike_projects(tmp_path)
    agentcli_home = home / ".agentcli"
    model.script(reply(text("a")), reply(text("b")))
    id_first = session_id(run_agent("words of project A", output_format="json", cwd=first))
    id_second = session_id(run_agent("words of project B", output_format="json", cwd=second))
    shared = legacy_state_dir(first, agentcli_home)
    assert shared == legacy_state_dir(second, agentcli_home)
    shared.mkdir(parents=True)
    for cwd, sid in ((first, id_first), (second, id_second)):  # as an older agentcli left them
        shutil.move(project_state_dir(cwd, agentcli_home) / f"{sid}.jsonl", shared / f"{sid}.jsonl")

    model.script(reply(text("resumed A")), reply(text("resumed B")))
    resumed_first = run_agent("more", continue_session=True, output_format="json", cwd=first)
    assert session_id(resumed_first) == id_first
    assert "words of project A" in sent(model) and "words of project B" not in sent(model)
    resumed_second = run_agent("more", resume=id_second[:8], output_format="json", cwd=second)
    assert session_id(resumed_second) == id_second
    assert "words of project B" in sent(model) and "words of project A" not in sent(model)

    wrong = run_agent("more", resume=id_second, cwd=first)
    assert wrong.returncode == 2
    assert f"No session {id_second!r} in {first}" in wrong.stderr
    assert len(model.requests) == 4


@pytest.fixture
def agentcli_home(tmp_path: Path) -> Path:
    return tmp_path / "agentcli-home"


def old_transcript(folder: Path, name: str, cwd: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "session_id": name, "cwd": str(cwd), "system": []}
    (folder / f"{name}.jsonl").write_text(json.dumps(header) + "\n")


def test_an_old_memory_folder_stays_in_use_only_when_it_is_certainly_this_projects(
    tmp_path: Path, agentcli_home: Path
) -> None:
    first, second = look_alike_projects(tmp_path)
    shared = legacy_state_dir(first, agentcli_home)
    (shared / "memory").mkdir(parents=True)
    old_transcript(shared, "one", first)

    assert memory_dir(first, agentcli_home) == shared / "memory"
    assert memory_dir(second, agentcli_home) == project_state_dir(second, agentcli_home) / "memory"

    old_transcript(shared, "two", second)  # the folder is shared: its memory could be either project's
    assert memory_dir(first, agentcli_home) == project_state_dir(first, agentcli_home) / "memory"

    (shared / "two.jsonl").unlink()
    (project_state_dir(first, agentcli_home) / "memory").mkdir(parents=True)  # the new folder, once made, wins
    assert memory_dir(first, agentcli_home) == project_state_dir(first, agentcli_home) / "memory"
