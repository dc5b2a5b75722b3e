"""The rich rendering of the permission question (what the REPL will show)."""

from __future__ import annotations

from rich.console import Console

from agentcli.permissions.prompt import PermissionRequest
from agentcli.permissions.render import PermissionQuestion, diff_text
from agentcli.permissions.suggest import Suggestion

DIFF = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+gamma\n"


def render(request: PermissionRequest, styles: bool = False) -> str:
    console = Console(record=True, width=200, force_terminal=True, color_system="standard")
    console.print(PermissionQuestion(request))
    return console.export_text(styles=styles)


def test_bash_question_shows_the_command_and_the_options() -> None:
    request = PermissionRequest(
        "Bash", {}, "bash", "Bash command", "git diff HEAD", "No rule allows it yet.",
        Suggestion(("Bash(git diff:*)",), "local"), note="Show the changes",
    )  # fmt: skip
    shown = render(request)
    assert "Bash command" in shown and "git diff HEAD" in shown and "Show the changes" in shown
    assert "1. Yes" in shown
    assert "2. Yes, and don't ask again for Bash(git diff:*) in this project" in shown
    assert "3. No, and tell the model what to do differently" in shown


def test_edit_question_shows_the_path_and_a_coloured_diff() -> None:
    request = PermissionRequest(
        "Edit", {}, "edit", "Edit file", "a.txt", "No rule allows it yet.",
        Suggestion(("Edit(./**)",), "session"), diff=DIFF,
    )  # fmt: skip
    shown = render(request)
    assert "Edit file" in shown and "a.txt" in shown and "for the rest of this session" in shown
    assert "-beta" in shown and "+gamma" in shown
    coloured = render(request, styles=True)
    assert "\x1b[31m-beta" in coloured  # red
    assert "\x1b[32m+gamma" in coloured  # green


def test_diff_styles_by_line() -> None:
    text = diff_text(DIFF)
    styles = {text.plain[s.start : s.end].rstrip("\n"): s.style for s in text.spans}
    assert styles["-beta"] == "red" and styles["+gamma"] == "green" and styles["@@ -1,2 +1,2 @@"] == "cyan"


def test_terminal_controls_in_the_question_are_shown_escaped_not_sent() -> None:
    command = "echo safe\x1b[2J\x1b]0;title\x07; rm -rf ~ #\u202eexcept this\x9b2J\rls"
    request = PermissionRequest(
        "Bash", {}, "bash", "Bash command", command, "No rule allows it yet.",
        Suggestion(("Bash(echo safe\x1b[2J:*)",), "local"), note="desc\x1b[8m hidden",
        diff="--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\x1b[2K\u202e\n",
    )  # fmt: skip

    raw = render(request, styles=True)

    for control in ("\x1b[2J", "\x1b]0", "\x07", "\u202e", "\x9b", "\r", "\x1b[8m", "\x1b[2K"):
        assert control not in raw, repr(control)
    shown = render(request)
    assert "echo safe\\x1b[2J\\x1b]0;title\\x07; rm -rf ~ #\\u202eexcept this\\x9b2J\\x0dls" in shown
    assert "desc\\x1b[8m hidden" in shown and "+new\\x1b[2K\\u202e" in shown
    assert "don't ask again for Bash(echo safe\\x1b[2J:*)" in shown
