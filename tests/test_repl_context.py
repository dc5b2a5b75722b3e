"""The REPL and what the project's files may grant: skill rules per turn, files outside the project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import StartRepl
from tests.context.helpers import write
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use

QUESTION = "Do you want to proceed?"


def test_a_skill_the_model_runs_grants_its_rules_for_that_user_message_only(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    write(project / ".commands" / "stamp.md", "---\nallowed-tools: Bash(touch:*)\n---\nStamp files.")
    fake_api.script(
        reply(tool_use("Skill", {"skill": "stamp"}, id="toolu_1")),
        reply(tool_use("Bash", {"command": "touch one"}, id="toolu_2")),
        reply(text("Stamped one.")),
        reply(tool_use("Bash", {"command": "touch two"}, id="toolu_3")),
        reply(text("Asked about two.")),
    )
    repl = start_repl()

    repl.submit("stamp one")
    screen = repl.wait_for_prompt("Stamped one.")
    assert QUESTION not in screen and (project / "one").exists()

    repl.submit("stamp two")
    repl.wait_for(QUESTION)  # the skill's Bash(touch:*) ended with the first message
    assert not (project / "two").exists()
    repl.press("n")
    repl.wait_for_prompt("Asked about two.")
    assert not (project / "two").exists()


OUTSIDE_QUESTION = "Allow agentcli to read these files and send them to the model?"
SECRET = "TOP SECRET CONTENT"


def outside_import(project: Path, tmp_path: Path) -> Path:
    secret = write(tmp_path / "outside" / "secret.md", SECRET).resolve()
    write(project / "CLAUDE.md", "Rules. See @../outside/secret.md")
    return secret


@pytest.mark.parametrize(
    ("key", "kept_under", "sent"), [("y", "allowedExternalImports", True), ("n", "deniedExternalImports", False)]
)
def test_an_outside_import_is_asked_about_once_before_anything_is_sent_and_the_answer_kept(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path, tmp_path: Path, key: str, kept_under: str, sent: bool
) -> None:
    secret = outside_import(project, tmp_path)
    fake_api.script(reply(text("First answer.")), reply(text("Second answer.")))
    repl = start_repl()

    repl.submit("hello")
    screen = repl.wait_for(OUTSIDE_QUESTION)
    assert str(secret) in screen and f"imported by {project / 'CLAUDE.md'}" in screen
    assert fake_api.requests == []
    repl.press(key)

    repl.wait_for_prompt("First answer.")
    first = json.dumps(fake_api.requests[0].body["messages"])
    assert (SECRET in first) is sent
    assert ("@../outside/secret.md was not imported: it is outside the project" in first) is not sent
    saved = json.loads((project / ".agentcli" / "settings.local.json").read_text())
    assert saved == {kept_under: [str(secret)]}
    repl.press("ctrl-d")
    assert repl.wait_exit() == 0

    again = start_repl()
    again.submit("hello again")
    screen = again.wait_for_prompt("Second answer.")
    assert OUTSIDE_QUESTION not in screen
    assert (SECRET in json.dumps(fake_api.requests[1].body["messages"])) is sent


def test_a_skills_outside_path_is_asked_about_and_a_model_supplied_one_is_a_read_question(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    write(tmp_path / "outside" / "secret.md", SECRET)
    write(project / ".commands" / "brief.md", "Summarise @../outside/secret.md")
    write(project / ".commands" / "explain.md", "Explain @$1")
    fake_api.script(
        reply(text("Summarised.")),
        reply(tool_use("Skill", {"skill": "explain", "args": str(tmp_path / "outside" / "other.md")}, id="toolu_1")),
        reply(text("Explained.")),
    )
    write(tmp_path / "outside" / "other.md", "OTHER OUTSIDE FILE")
    repl = start_repl()

    repl.submit("/brief")
    repl.wait_for(OUTSIDE_QUESTION)
    assert fake_api.requests == []
    repl.press("y")
    repl.wait_for_prompt("Summarised.")
    assert SECRET in json.dumps(fake_api.requests[0].body["messages"])

    repl.submit("explain the other file")
    screen = repl.wait_for(QUESTION)  # the gate's question about a Read outside the project
    assert "Outside the project directory." in screen
    repl.press("n")
    repl.wait_for_prompt("Explained.")
    [result] = fake_api.requests[2].body["messages"][-1]["content"]
    assert result["is_error"] is True and "was not attached" in result["content"]
    assert "OTHER OUTSIDE FILE" not in json.dumps(fake_api.requests[2].body["messages"])
