"""A Task call in the REPL, as a person sees it in a real pseudo-terminal: one live line per
sub-agent with its counts and latest action, one summary line when it is done, its own
conversation only on `/agents last`; a sub-agent's permission question naming it; and `/agents`,
the types there are.

The installed `agentcli` runs the real Task tool against the fake Anthropic server, which plays
both the main agent and its sub-agents (told apart by the tools they are offered and the prompt
they start with) and holds a sub-agent's last request until the test has seen its live line."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from tests.conftest import StartRepl
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, ToolUseBlock, reply, text, tool_use

CEILING = 30.0
QUESTION = "Do you want to proceed?"
Serve = Callable[[RecordedRequest], Reply]


def rows(screen: str) -> list[str]:
    return [line.rstrip() for line in screen.splitlines()]


def task(description: str, prompt: str, kind: str = "Explore", call_id: str = "toolu_task1") -> ToolUseBlock:
    return tool_use("Task", {"description": description, "prompt": prompt, "subagent_type": kind}, id=call_id)


def is_main(request: RecordedRequest) -> bool:
    return any(tool["name"] == "Task" for tool in request.body.get("tools", []))


def prompt_of(request: RecordedRequest) -> str:
    return str(request.body["messages"][0]["content"][0]["text"])


def serving(fake_api: FakeAnthropic, serve: Serve, count: int) -> None:
    """Every one of the next `count` requests answered by `serve`, in whatever order they come."""
    fake_api.script(*[serve] * count)


def test_a_task_call_is_one_live_line_then_one_summary_and_its_conversation_stays_out(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "config.py").write_text("def load_config():\n    pass\n")
    (project / "app.py").write_text("load_config()\n")
    release = threading.Event()

    def serve(request: RecordedRequest) -> Reply:
        turns = len(request.body["messages"])
        if is_main(request):
            return (
                reply(task("find the config loader", "Where is load_config?"))
                if turns == 1
                else reply(text("MAIN: it is in config.py."))
            )
        if turns == 1:
            return reply(tool_use("Grep", {"pattern": "load_config"}))
        release.wait(CEILING)  # the sub-agent's answer waits until the live line was seen
        return reply(text("SUB-ANSWER: load_config is defined in config.py:1."))

    serving(fake_api, serve, 4)
    repl = start_repl()

    repl.submit("where is the config loaded?")

    live = repl.wait_for("● Explore(find the config loader) · 1 tool call · ")
    [line] = [row for row in rows(live) if row.startswith("● Explore(find the config loader) · ")]
    assert line.endswith(" tokens · Grep(load_config)")
    release.set()
    screen = repl.wait_for_prompt("MAIN: it is in config.py.")
    shown = rows(screen)
    summary = shown[shown.index("● Explore(find the config loader)") + 1]
    assert summary.startswith("  ⎿ Done · 2 turns · 1 tool call · ") and summary.endswith(" tokens")
    assert "SUB-ANSWER" not in screen  # the sub-agent's text went to the main agent, not the screen
    assert "● Grep(" not in screen and "Found 2 files" not in screen
    assert line not in shown  # the live line is gone, not left in the scrollback
    # The main agent was sent only the sub-agent's final text.
    [result] = fake_api.requests[-1].body["messages"][-1]["content"]
    assert result["content"].startswith("SUB-ANSWER: load_config is defined in config.py:1.\n\n[Explore sub-agent:")

    repl.submit("/agents last")

    screen = repl.wait_for_count(summary.strip(), 2)  # the summary ends it
    after = screen[screen.rindex("/agents last") :]
    assert "Explore(find the config loader) · its conversation" in after
    assert "● Grep(load_config)" in after and "Found 2 files" in after
    assert "SUB-ANSWER: load_config is defined in config.py:1." in after


def test_concurrent_sub_agents_each_have_their_own_line(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "tests").mkdir()
    (project / "tests" / "test_a.py").write_text("")
    release = threading.Event()

    def serve(request: RecordedRequest) -> Reply:
        turns = len(request.body["messages"])
        if is_main(request):
            if turns == 1:
                return reply(
                    task("find the loader", "A"),
                    task("list the tests", "B", kind="general-purpose", call_id="toolu_task2"),
                )
            return reply(text("MAIN: both done."))
        if turns == 1:
            pattern = "load_config" if prompt_of(request) == "A" else "tests/**"
            return reply(tool_use("Grep" if prompt_of(request) == "A" else "Glob", {"pattern": pattern}))
        release.wait(CEILING)
        return reply(text(f"answer {prompt_of(request)}"))

    serving(fake_api, serve, 6)
    repl = start_repl()

    repl.submit("look around")

    repl.wait_for("● Explore(find the loader) · 1 tool call · ")
    screen = repl.wait_for("● general-purpose(list the tests) · 1 tool call · ")
    assert "Grep(load_config)" in screen and "Glob(tests/**)" in screen
    assert "● Explore(find the loader) · 1 tool call" in screen  # both live at once
    release.set()
    shown = rows(repl.wait_for_prompt("MAIN: both done."))
    for title in ("● Explore(find the loader)", "● general-purpose(list the tests)"):
        assert shown[shown.index(title) + 1].startswith("  ⎿ Done · 2 turns · 1 tool call · ")


def test_a_sub_agent_stopped_by_its_turn_limit_says_so(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    agents = project / ".agentcli" / "agents"
    agents.mkdir(parents=True)
    (agents / "finder.md").write_text("---\nname: finder\ndescription: Finds.\nmaxTurns: 1\n---\nFind it.\n")
    fake_api.script(
        reply(task("find the loader", "Where?", kind="finder")),
        reply(tool_use("Grep", {"pattern": "load_config"})),
        reply(text("MAIN: it failed.")),
    )
    repl = start_repl()

    repl.submit("look around")

    shown = rows(repl.wait_for_prompt("MAIN: it failed."))
    summary = shown[shown.index("● finder(find the loader)") + 1]
    assert summary.startswith(
        "  ⎿ it reached its turn limit (1 turns; `maxTurns` in an agent definition) · 1 turn · 0 tool calls · "
    )


def test_a_sub_agents_permission_question_names_it_and_no_leaves_the_file_alone(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "app.py").write_text("x = 1\n")
    fake_api.script(
        reply(task("set x to 2", "Set x to 2 in app.py.", kind="general-purpose")),
        reply(tool_use("Bash", {"command": "sed -i s/1/2/ app.py"}, id="toolu_sed")),
        reply(text("SUB: the change was denied.")),
        reply(text("MAIN: it was not allowed.")),
    )
    repl = start_repl()

    repl.submit("set x to 2")

    screen = repl.wait_for(QUESTION)
    assert "general-purpose · Bash command" in screen  # the question names the sub-agent
    assert "sed -i s/1/2/ app.py" in screen
    repl.press("3")  # No
    repl.wait_for("what to do differently (Enter to skip)")
    repl.press("enter")

    screen = repl.wait_for_prompt("MAIN: it was not allowed.")
    assert "✗ Denied general-purpose · Bash(sed -i s/1/2/ app.py)" in screen
    assert (project / "app.py").read_text() == "x = 1\n"
    sub_agent_after = fake_api.requests[2].body
    [denied] = sub_agent_after["messages"][-1]["content"]
    assert denied["tool_use_id"] == "toolu_sed" and denied["is_error"] is True
    assert not is_main(fake_api.requests[2])  # the sub-agent's request, not the main agent's


def test_agents_lists_the_types_and_where_they_come_from(start_repl: StartRepl) -> None:
    repl = start_repl()

    repl.submit("/agents")

    screen = repl.wait_for("Custom types:")
    shown = [" ".join(row.split()) for row in rows(screen)]
    assert any(row.startswith("general-purpose all but Task inherit built-in") for row in shown)
    assert any(row.startswith("Explore Read, Grep, Glob inherit built-in") for row in shown)


def test_agents_last_before_any_sub_agent_says_there_is_none(start_repl: StartRepl) -> None:
    repl = start_repl()

    repl.submit("/agents last")

    repl.wait_for("No sub-agent has finished in this session yet")
