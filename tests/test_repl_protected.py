"""A write to a protected path is asked about in the REPL every time, in every mode, with no "always"."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import StartRepl
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use


def test_bypass_mode_still_asks_before_a_git_hook_is_written(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    hook = {"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}
    fake_api.script(
        reply(tool_use("Write", hook)),
        reply(tool_use("Write", hook)),
        reply(text("Both asked.")),
    )
    repl = start_repl("--permission-mode", "bypassPermissions")

    repl.submit("add a hook")
    screen = repl.wait_for("Do you want to proceed?")
    assert "can make git run programs" in screen and "Such files are asked about" in screen
    assert "don't ask again" not in screen
    repl.press("1")  # yes, this once

    repl.wait_for("✓ Allowed Write(.git/hooks/pre-commit)")  # the first question, answered and erased
    repl.wait_for("Do you want to proceed?")  # asked again for the second write
    repl.press("n")

    repl.wait_for("Both asked.")
    assert (project / ".git" / "hooks" / "pre-commit").read_text() == "#!/bin/sh\ntouch pwned\n"
    [result] = fake_api.requests[2].body["messages"][-1]["content"]
    assert result["is_error"] is True and "denied" in result["content"]
