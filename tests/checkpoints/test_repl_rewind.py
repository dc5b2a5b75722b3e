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


def test_rewind_asks_before_overwriting_files_changed_outside_agentcli_and_can_be_undone(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "app.py").write_text("x = 1\n")
    fake_api.script(
        reply(tool_use("Bash", {"command": "sed -i s/1/2/ app.py"}, id="toolu_1")),
        reply(text("Changed it.")),
    )
    repl = start_repl("--permission-mode", "bypassPermissions")
    repl.submit("change app.py")
    repl.wait_for_prompt("Changed it.")
    (project / "notes.txt").write_text("mine\n")  # the user's own edit, after the turn

    repl.submit("/rewind 1 code")
    screen = repl.wait_for("Restore them too? [y/N]")
    assert "Changed outside agentcli since then, and would be overwritten: notes.txt" in screen
    repl.submit("n")
    repl.wait_for("Nothing was changed.")
    assert (project / "app.py").read_text() == "x = 2\n" and (project / "notes.txt").exists()

    repl.submit("/rewind 1 code")
    repl.wait_for_count("Restore them too? [y/N]", 2)
    repl.submit("y")
    repl.wait_for("Files restored: app.py, notes.txt")
    assert (project / "app.py").read_text() == "x = 1\n" and not (project / "notes.txt").exists()

    repl.submit("/rewind undo")
    repl.wait_for_count("Files restored: app.py, notes.txt", 2)
    assert (project / "app.py").read_text() == "x = 2\n" and (project / "notes.txt").read_text() == "mine\n"
