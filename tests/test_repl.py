"""The interactive REPL driven in a real pseudo-terminal against the fake Anthropic server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import AGENTCLI, StartRepl, cli_env
from tests.fake_anthropic import FakeAnthropic, http_error, reply, text, tool_use
from tests.terminal import Terminal


def sent_text(api: FakeAnthropic, request: int) -> str:
    return json.dumps(api.requests[request].body["messages"])


def test_a_prompt_streams_the_answer_as_markdown(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("# Plan\n\nFirst **read** the code.\n\n- step one\n- step two\n"), delay=0.005))
    repl = start_repl()

    repl.submit("make a plan")

    screen = repl.wait_for("step two")
    assert "Plan" in screen and "# Plan" not in screen  # rendered, not raw Markdown
    assert "First read the code." in screen
    assert "• step one" in screen
    assert "make a plan" in sent_text(fake_api, 0)


def test_approving_an_edit_with_1_shows_the_diff_and_changes_the_file(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "app.py").write_text("print('hi')\n")
    fake_api.script(
        reply(tool_use("Read", {"file_path": "app.py"})),
        reply(tool_use("Edit", {"file_path": "app.py", "old_string": "'hi'", "new_string": "'hello'"})),
        reply(text("Changed the greeting.")),
    )
    repl = start_repl()

    repl.submit("say hello")
    repl.wait_for("Do you want to proceed?")
    assert (project / "app.py").read_text() == "print('hi')\n"
    repl.press("1")

    screen = repl.wait_for("Changed the greeting.")
    assert "Updated app.py: 1 addition, 1 removal" in screen
    assert "- print('hi')" in screen and "+ print('hello')" in screen
    assert (project / "app.py").read_text() == "print('hello')\n"


def test_denying_a_bash_with_3_and_a_reason_tells_the_model(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    fake_api.script(reply(tool_use("Bash", {"command": "touch wiped"})), reply(text("Understood.")))
    repl = start_repl()

    repl.submit("clean up")
    repl.wait_for("Do you want to proceed?")
    repl.press("3")
    repl.wait_for("what to do differently (Enter to skip)")
    repl.submit("use make clean instead")

    repl.wait_for("Understood.")
    assert not (project / "wiped").exists()
    [result] = fake_api.requests[1].body["messages"][-1]["content"]
    assert result["is_error"] is True
    assert "use make clean instead" in result["content"]


def test_approve_always_saves_the_rule_and_does_not_ask_again(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    fake_api.script(
        reply(tool_use("Bash", {"command": "git status --short"})),
        reply(tool_use("Bash", {"command": "git status --short"})),
        reply(text("Clean tree.")),
    )
    repl = start_repl()

    repl.submit("status?")
    repl.wait_for("Do you want to proceed?")
    repl.press("2")

    screen = repl.wait_for("Clean tree.")
    assert screen.count("✓ Allowed Bash(git status --short)") == 1  # asked once: the second call just ran
    assert screen.count("● Bash(git status --short)") == 2 and "Do you want to proceed?" not in screen
    saved = json.loads((project / ".agentcli" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == ["Bash(git status:*)"]


def test_ctrl_c_mid_stream_then_the_conversation_goes_on(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("word " * 400), delay=0.1, chunk=5), reply(text("Second answer.")))  # 40 s long
    repl = start_repl()

    repl.submit("talk for a long time")
    repl.wait_for("word word")
    repl.press("ctrl-c")
    repl.wait_for("Interrupted")
    repl.submit("shorter please")

    repl.wait_for("Second answer.")
    messages = fake_api.requests[1].body["messages"]
    assert "[Request interrupted by user]" in json.dumps(messages)
    assert "shorter please" in json.dumps(messages[-1])
    assert fake_api.requests[1].status == 200  # the fake accepted the conversation as valid


def test_esc_interrupts_a_running_tool(start_repl: StartRepl, fake_api: FakeAnthropic, project: Path) -> None:
    fake_api.script(
        reply(tool_use("Bash", {"command": "sleep 30"})),
        reply(tool_use("Bash", {"command": "echo second-run-ok"})),
        reply(text("Stopped waiting.")),
    )
    repl = start_repl("--allowed-tools", "Bash(sleep:*),Bash(echo:*)")

    repl.submit("wait")
    assert "● Bash(sleep 30)" in repl.wait_for("Running…")
    repl.press("esc")
    repl.wait_for("Interrupted")
    repl.submit("never mind")

    repl.wait_for("Stopped waiting.")
    first_results = fake_api.requests[1].body["messages"][2]["content"]
    assert first_results[0]["type"] == "tool_result" and first_results[0]["is_error"] is True
    [later] = fake_api.requests[2].body["messages"][-1]["content"]
    assert "second-run-ok" in later["content"] and "is_error" not in later  # the interrupt is over


def test_help_lists_builtins_and_skills(start_repl: StartRepl, project: Path) -> None:
    commands = project / ".commands"
    commands.mkdir()
    (commands / "deploy.md").write_text(
        "---\ndescription: Ship it [fast] to staging\nargument-hint: [env]\n---\nDeploy $ARGUMENTS"
    )
    (commands / "clear.md").write_text("Clear the caches.")
    repl = start_repl()

    repl.submit("/help")

    screen = repl.wait_for("Ship it [fast] to staging")
    assert "/deploy [env]" in screen and "(project)" in screen
    assert "/clear" in screen and "/permissions" in screen and "/model [name]" in screen
    assert "Clear the caches." in screen and "hidden by the built-in" in screen


def test_a_skill_runs_from_the_prompt(start_repl: StartRepl, fake_api: FakeAnthropic, project: Path) -> None:
    commands = project / ".commands"
    commands.mkdir()
    (commands / "greet.md").write_text("Say hello to $ARGUMENTS in one line.")
    fake_api.script(reply(text("Hello, Ada!")))
    repl = start_repl()

    repl.submit("/greet Ada")

    repl.wait_for("Hello, Ada!")
    assert "Say hello to Ada in one line." in sent_text(fake_api, 0)


def test_unknown_command_is_reported_and_nothing_is_sent(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    repl = start_repl()

    repl.submit("/hlep")

    repl.wait_for("Unknown command")
    assert fake_api.requests == []


def test_history_survives_a_restart(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("Answer-A")))
    first = start_repl()
    first.submit("remember this line")
    first.wait_for_prompt("Answer-A")
    first.press("ctrl-d")
    assert first.wait_exit() == 0

    second = start_repl()
    second.press("up")

    second.wait_for("> remember this line")


def test_shift_tab_cycles_the_permission_mode(start_repl: StartRepl) -> None:
    repl = start_repl()
    repl.wait_for("default (shift-tab)")

    repl.press("shift-tab")
    repl.wait_for("acceptEdits (shift-tab)")
    repl.press("shift-tab")

    repl.wait_for("plan (shift-tab)")


def test_multiline_input_is_one_message(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("Answer-A")))
    repl = start_repl()

    repl.type("first line\\")
    repl.press("enter")
    repl.type("second line")
    repl.type("\x1b\r")  # Esc then Enter in one write: a slow machine must not see a lone Esc
    repl.type("third line")
    repl.press("enter")

    repl.wait_for_prompt("Answer-A")
    content = fake_api.requests[0].body["messages"][0]["content"]
    assert content[-1]["text"] == "first line\nsecond line\nthird line"


def test_ctrl_c_twice_at_an_empty_prompt_exits(start_repl: StartRepl) -> None:
    repl = start_repl()
    repl.type("half a thought")
    repl.wait_for("> half a thought")
    repl.press("ctrl-c")  # clears the line only
    repl.wait_for_absence("half a thought")
    assert "Press Ctrl-C again" not in repl.text()

    repl.press("ctrl-c")
    repl.wait_for("Press Ctrl-C again")
    repl.press("ctrl-c")

    assert repl.wait_exit() == 0


def test_api_error_is_one_readable_line(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    bad = {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}
    fake_api.script(http_error(400, bad), reply(text("recovered")))
    repl = start_repl()

    repl.submit("hello")
    screen = repl.wait_for("API error 400: prompt is too long")
    assert "Traceback" not in screen
    repl.submit("again")

    repl.wait_for("recovered")


def test_no_color_terminal_still_shows_the_answer_without_escape_codes(
    fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(reply(text("Plain **answer** here.\n\n- item\n")))
    env = cli_env(home, fake_api.url)  # NO_COLOR=1
    env["TERM"] = "xterm-256color"
    repl = Terminal([AGENTCLI], env=env, cwd=project)
    try:
        repl.wait_for("(shift-tab)")
        repl.submit("hi")
        repl.wait_for("• item")
        answer = repl.output[repl.output.index("Plain") :]
        assert "\x1b[1m" not in answer  # no bold: NO_COLOR output carries no styles
    finally:
        repl.close()


def test_clear_starts_a_new_conversation(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("Answer-A")), reply(text("Answer-B")))
    repl = start_repl()

    repl.submit("one")
    repl.wait_for_prompt("Answer-A")
    repl.submit("/clear")
    repl.wait_for("new conversation")
    repl.submit("two")
    repl.wait_for_prompt("Answer-B")

    messages = fake_api.requests[1].body["messages"]
    assert len(messages) == 1 and "two" in json.dumps(messages)


def test_cost_and_model_commands(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("Answer-A")), reply(text("Answer-B")))
    repl = start_repl()

    repl.submit("hi")
    repl.wait_for_prompt("Answer-A")
    repl.submit("/cost")
    screen = repl.wait_for("Cost: $")
    assert "cache reads" in screen
    repl.submit("/model claude-haiku-4-5")
    repl.wait_for("Model set to claude-haiku-4-5")
    repl.submit("again")
    repl.wait_for_prompt("Answer-B")

    assert fake_api.requests[1].body["model"] == "claude-haiku-4-5"


def test_permissions_command_lists_adds_and_removes_rules(start_repl: StartRepl, project: Path) -> None:
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_text('{"permissions": {"deny": ["Read(./.env)"]}}')
    repl = start_repl()

    repl.submit("/permissions")
    repl.wait_for("Read(./.env)")
    repl.submit("/permissions allow Bash(npm test:*)")
    repl.wait_for("Added allow rule Bash(npm test:*)")
    local = project / ".agentcli" / "settings.local.json"
    assert json.loads(local.read_text())["permissions"]["allow"] == ["Bash(npm test:*)"]
    repl.submit("/permissions remove Bash(npm test:*)")
    repl.wait_for("Removed Bash(npm test:*)")

    assert json.loads(local.read_text())["permissions"]["allow"] == []


def test_init_asks_the_model_to_write_claude_md(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("I surveyed it.")))
    repl = start_repl()

    repl.submit("/init")

    repl.wait_for("I surveyed it.")
    assert "write a CLAUDE.md" in sent_text(fake_api, 0)


def test_memory_opens_claude_md_in_the_editor(
    fake_api: FakeAnthropic, home: Path, project: Path, tmp_path: Path
) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\necho "Always run make lint." >> "$1"\n')
    editor.chmod(0o755)
    fake_api.script(reply(text("Answer-A")))
    env = cli_env(home, fake_api.url)
    env.update(TERM="xterm-256color", EDITOR=str(editor))
    repl = Terminal([AGENTCLI], env=env, cwd=project, cols=250)  # the long temp path stays on one line
    try:
        repl.wait_for("(shift-tab)")
        repl.submit("/memory")
        repl.wait_for("Open which one in your editor?")
        repl.submit("1")
        repl.wait_for("will be sent with your next message")
        assert (project / "CLAUDE.md").read_text() == "Always run make lint.\n"
        repl.submit("hello")
        repl.wait_for_prompt("Answer-A")
        assert "Always run make lint." in sent_text(fake_api, 0)
    finally:
        repl.close()


def test_keys_typed_during_a_turn_start_the_next_prompt(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("slow " * 60 + "END-OF-ANSWER"), delay=0.01, chunk=5), reply(text("Answer-B")))
    repl = start_repl()

    repl.submit("first")
    repl.wait_for("slow slow")
    repl.type("/cost")
    repl.wait_for("END-OF-ANSWER")

    repl.wait_for("> /cost")
    repl.press("enter")
    repl.wait_for("Cost: $")


def test_tab_completes_commands_skills_and_paths(start_repl: StartRepl, project: Path) -> None:
    (project / ".commands").mkdir()
    (project / ".commands" / "deploy.md").write_text("---\ndescription: Ship it to staging\n---\nDeploy")
    (project / "src").mkdir()
    (project / "src" / "server.py").write_text("")
    repl = start_repl()

    repl.type("/dep")
    repl.wait_for("Ship it to staging")  # the menu shows the skill's description
    repl.press("tab")
    repl.wait_for("> /deploy")
    repl.press("ctrl-c")
    repl.type("/pe")
    repl.wait_for("Show rules and where each comes from")
    repl.press("tab")
    repl.wait_for("> /permissions")
    repl.press("ctrl-c")
    repl.type("look at @src/ser")
    repl.wait_for("server.py")
    repl.press("tab")

    repl.wait_for("> look at @src/server.py")


def test_a_failing_command_reports_one_line_and_the_repl_goes_on(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    fake_api.script(reply(text("Answer-A")))
    repl = start_repl()
    (project / ".agentcli" / "settings.local.json").mkdir(parents=True)  # unreadable as a file

    repl.submit("/permissions allow Bash(npm test:*)")
    screen = repl.wait_for("Cannot read settings file")
    assert "Traceback" not in screen
    repl.submit("still here?")

    repl.wait_for_prompt("Answer-A")


def test_a_stream_that_breaks_is_retried_and_the_cut_answer_marked(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    fake_api.script(reply(text("Partial words that break"), error_after=3), reply(text("Whole answer.")))
    repl = start_repl()

    repl.submit("hi")

    screen = repl.wait_for_prompt("Whole answer.")
    assert "retrying in" in screen
    assert "the partial answer above was cut off" in screen


def test_text_before_a_long_tool_call_is_shown_whole_while_the_call_streams(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    big = {"file_path": "notes.md", "content": "x" * 4000}
    fake_api.script(
        reply(text("I will write the notes file now."), tool_use("Write", big), delay=0.1, chunk=8),
        reply(text("Answer-A")),
    )
    repl = start_repl()

    repl.submit("write notes")

    # The Write input takes a minute to stream; its preceding sentence must be on screen whole meanwhile.
    repl.wait_for("I will write the notes file now.")
    assert not fake_api.requests[0].answered and "Do you want to proceed?" not in repl.text()  # still streaming


def test_plan_mode_is_announced_to_the_model_when_it_starts_and_when_it_ends(
    start_repl: StartRepl, fake_api: FakeAnthropic
) -> None:
    fake_api.script(reply(text("Answer-1")), reply(text("Answer-2")), reply(text("Answer-3")))
    repl = start_repl()
    repl.press("shift-tab", "shift-tab")
    repl.wait_for("plan (shift-tab)")

    repl.submit("how would you add caching?")
    repl.wait_for_prompt("Answer-1")
    repl.submit("and the tests?")
    repl.wait_for_prompt("Answer-2")
    repl.press("shift-tab")
    repl.wait_for("default (shift-tab)")
    repl.submit("go ahead")
    repl.wait_for_prompt("Answer-3")

    def new_message(request: int) -> str:
        return json.dumps(fake_api.requests[request].body["messages"][-1])

    assert "Plan mode is on" in new_message(0)
    assert "Plan mode is" not in new_message(1)  # said once, not on every message
    assert "Plan mode is off" in new_message(2)


def test_escape_sequences_in_a_proposed_command_are_shown_not_obeyed(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    command = "echo hi\x1b[2J; echo \u202eevil"
    fake_api.script(
        reply(text("Let me run something."), tool_use("Bash", {"command": command})),
        reply(text("Not run.")),
    )
    repl = start_repl()
    written_before = len(repl.output)

    repl.submit("go")

    screen = repl.wait_for("Do you want to proceed?")
    assert "agentcli 0.1.0" in screen and "Let me run something." in screen  # the screen was not cleared
    assert "echo hi\\x1b[2J; echo \\u202eevil" in screen  # shown escaped, in the question
    written = repl.output[written_before:]
    assert "\x1b[2J" not in written and "\u202e" not in written
    repl.press("3")
    repl.press("enter")
    repl.wait_for("Not run.")


def test_help_says_how_to_enable_web_search_when_nothing_can_search(start_repl: StartRepl, project: Path) -> None:
    (project / ".agentcli").mkdir(exist_ok=True)
    (project / ".agentcli" / "settings.json").write_text('{"webSearchBackend": "brave"}')
    repl = start_repl()

    repl.submit("/help")

    screen = repl.wait_for("To enable it")
    assert "WebSearch is not available" in screen and "searxngUrl" in screen and "BRAVE_API_KEY" in screen
