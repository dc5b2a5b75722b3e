"""The trust rule of `.commands/` holds in every place skills live: a skill folder written during the
session grants the model nothing until the user ran it once; and every such place is protected."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.permissions.protected import protection
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.context.gates import RuleGate
from tests.context.helpers import write
from tests.context.test_session import results, send, session

HELPER = "---\nallowed-tools: Bash(touch:*)\n---\nStamp: !`touch bang`"
LOCATIONS = [
    "repo/project/.claude/skills",
    "repo/project/.agentcli/skills",
    "repo/.claude/skills",  # a parent folder, up to the repository's top
    "agentcli-home/skills",
    "HOME/.claude/skills",
]


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    path = tmp_path / "repo" / "project"
    path.mkdir()
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "agentcli-home"))  # what protection judges by
    return path


def place(where: str, tmp_path: Path, own_home: Path) -> Path:
    base = own_home if where.startswith("HOME/") else tmp_path
    return base / where.removeprefix("HOME/")


@pytest.mark.parametrize("where", LOCATIONS)
def test_a_skill_folder_written_during_the_session_grants_nothing_until_the_user_runs_it(
    where: str, tmp_path: Path, own_home: Path, cwd: Path, home: Path, model: ScriptedModel
) -> None:
    notices: list[str] = []
    context, agent = session(cwd, home, model, RuleGate(), notices)
    skill_file = write(place(where, tmp_path, own_home) / "helper" / "SKILL.md", HELPER)  # after the session began
    assert protection(skill_file.resolve(), cwd) is not None  # a write there is asked about every time
    model.script(reply(tool_use("Skill", {"skill": "helper"}, id="toolu_1")), reply(text("stuck")))

    send(context, agent, "set it up")

    assert not (cwd / "bang").exists()
    [result] = results(model, 1)
    assert result["is_error"] is True and "/helper's allowed-tools are not in force" in result["content"]
    assert notices and "was created or changed during this session" in notices[0]

    model.script(reply(text("stamped")))
    send(context, agent, "/helper")  # the user runs it: from now on it is trusted
    assert (cwd / "bang").exists()
    (cwd / "bang").unlink()
    model.script(reply(tool_use("Skill", {"skill": "helper"}, id="toolu_2")), reply(text("done")))
    send(context, agent, "again")
    assert (cwd / "bang").exists()
