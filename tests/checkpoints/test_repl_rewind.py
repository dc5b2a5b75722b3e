"""`/rewind` and Esc Esc in the REPL (pty): files and conversation back to before a turn."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import StartRepl
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use


def test_esc_esc_rewinds_code_and_conversation_and_puts_the_prompt_back(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "app.py").write_text("x = 1\n")
    fake_api.script(
        reply(text("Hello.")),
        reply(tool_use("Bash", {"command": "sed -i s/1/2/ app.py && echo new > extra.txt"}, id="toolu_1")),
        reply(text("Changed it.")),
        reply(text("Fresh answer.")),
    )
    repl = start_repl("--permission-mode", "bypassPermissions")
    repl.submit("say hello")
    repl.wait_for_prompt("Hello.")
    repl.submit("change app.py")
    repl.wait_for_prompt("Changed it.")
    assert (project / "app.py").read_text() == "x = 2\n"

    repl.press("esc", "esc")
    screen = repl.wait_for("Rewind to before which turn?")
    assert "change app.py" in screen and "app.py, extra.txt" in screen
    repl.submit("2")
    repl.wait_for("Restore 1) code and conversation")
    repl.submit("1")
    repl.wait_for("The conversation is back to before turn 2.")
    assert (project / "app.py").read_text() == "x = 1\n"
    assert not (project / "extra.txt").exists()
    repl.wait_for("> change app.py")  # the prompt is back in the input line

    repl.press("enter")
    repl.wait_for_prompt("Fresh answer.")
    sent = fake_api.requests[-1].body["messages"]
    prompts = [m for m in sent if m["role"] == "user" and "change app.py" in str(m["content"])]
    assert len(prompts) == 1 and "Changed it." not in str(sent)  # the rewound turn is gone for the model
