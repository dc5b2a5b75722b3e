"""The REPL and what the project's files may grant: skill rules per turn, files outside the project."""

from __future__ import annotations

from pathlib import Path

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
