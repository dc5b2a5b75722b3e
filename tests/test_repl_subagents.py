"""A Task call in the REPL, as a person sees it in a real pseudo-terminal: one live line per
sub-agent with its counts and latest action, one summary line when it is done, its own
conversation only on `/agents last`; and `/agents`, the types there are.

The REPL runs with `tests.subagent_double.FakeTask` as its Task tool (it emits what the
sub-agent runner emits) against the fake Anthropic server."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import StartRepl, cli_env
from tests.fake_anthropic import FakeAnthropic, ToolUseBlock, reply, text, tool_use
from tests.subagent_double import Step, script
from tests.terminal import Terminal

ROOT = Path(__file__).resolve().parent.parent
StartWithTask = Callable[[], Terminal]

LOOKING: tuple[Step, ...] = (
    {"call": "Grep", "input": {"pattern": "load_config"}, "summary": "Found 2 files", "output": "config.py\napp.py"},
    {"call": "Read", "input": {"file_path": "config.py"}, "summary": "Read 40 lines"},
    {"wait": "release"},
    {"say": "SUB-ANSWER: load_config is defined in config.py:12."},
)


@pytest.fixture
def start_with_task(fake_api: FakeAnthropic, home: Path, project: Path) -> Iterator[StartWithTask]:
    """`start_repl`, with the stand-in Task tool."""
    started: list[Terminal] = []

    def start() -> Terminal:
        env = cli_env(home, fake_api.url)
        env.pop("NO_COLOR")
        env.update(TERM="xterm-256color", PYTHONPATH=str(ROOT))
        terminal = Terminal([sys.executable, "-m", "tests.subagent_double"], env=env, cwd=project, cols=160)
        started.append(terminal)
        terminal.wait_for("(shift-tab)")
        return terminal

    yield start
    for terminal in started:
        terminal.close()


def task(description: str, *steps: Step, kind: str = "Explore", call_id: str = "toolu_task1") -> ToolUseBlock:
    return tool_use("Task", {"description": description, "prompt": script(*steps), "subagent_type": kind}, id=call_id)


def rows(screen: str) -> list[str]:
    return [line.rstrip() for line in screen.splitlines()]


def test_a_task_call_is_one_live_line_then_one_summary_and_its_conversation_stays_out(
    start_with_task: StartWithTask, fake_api: FakeAnthropic, project: Path
) -> None:
    fake_api.script(reply(task("find the config loader", *LOOKING)), reply(text("MAIN: it is in config.py.")))
    repl = start_with_task()

    repl.submit("where is the config loaded?")

    live = repl.wait_for("● Explore(find the config loader) · 2 tool calls · 10k tokens · Read(config.py)")
    assert "Running…" in live
    (project / "release").touch()
    screen = repl.wait_for_prompt("MAIN: it is in config.py.")
    shown = rows(screen)
    line = shown.index("● Explore(find the config loader)")
    assert shown[line + 1] == "  ⎿ Done · 3 turns · 2 tool calls · 15k tokens"
    assert "SUB-ANSWER" not in screen  # the sub-agent's text went to the main agent, not the screen
    assert "● Grep(" not in screen and "● Read(" not in screen and "Found 2 files" not in screen
    assert "tool calls · 10k tokens" not in screen  # the live line is gone, not left in the scrollback

    repl.submit("/agents last")

    screen = repl.wait_for_count("⎿ Done · 3 turns · 2 tool calls · 15k tokens", 2)  # the summary ends it
    after = screen[screen.rindex("/agents last") :]
    assert "Explore(find the config loader) · its conversation" in after
    assert "● Grep(load_config)" in after and "Found 2 files" in after and "app.py" in after
    assert "● Read(config.py)" in after and "Read 40 lines" in after
    assert "SUB-ANSWER: load_config is defined in config.py:12." in after


def test_concurrent_sub_agents_each_have_their_own_line(
    start_with_task: StartWithTask, fake_api: FakeAnthropic, project: Path
) -> None:
    first = task("find the loader", LOOKING[0], {"wait": "release"}, {"say": "one"})
    second = task(
        "list the tests",
        {"call": "Glob", "input": {"pattern": "tests/**"}},
        {"wait": "release"},
        {"say": "two"},
        kind="general-purpose",
        call_id="toolu_task2",
    )
    fake_api.script(reply(first, second), reply(text("MAIN: both done.")))
    repl = start_with_task()

    repl.submit("look around")

    repl.wait_for("● Explore(find the loader) · 1 tool call · 5.1k tokens · Grep(load_config)")
    screen = repl.wait_for("● general-purpose(list the tests) · 1 tool call · 5.1k tokens · Glob(tests/**)")
    assert "● Explore(find the loader) · 1 tool call" in screen  # both live at once
    (project / "release").touch()
    shown = rows(repl.wait_for_prompt("MAIN: both done."))
    assert shown[shown.index("● Explore(find the loader)") + 1] == "  ⎿ Done · 2 turns · 1 tool call · 10k tokens"
    assert (
        shown[shown.index("● general-purpose(list the tests)") + 1] == "  ⎿ Done · 2 turns · 1 tool call · 10k tokens"
    )


def test_a_failed_sub_agent_says_what_stopped_it(start_with_task: StartWithTask, fake_api: FakeAnthropic) -> None:
    fake_api.script(
        reply(task("find the loader", LOOKING[0], {"fail": "it reached its turn limit (50)"})),
        reply(text("MAIN: it failed.")),
    )
    repl = start_with_task()

    repl.submit("look around")

    shown = rows(repl.wait_for_prompt("MAIN: it failed."))
    line = shown.index("● Explore(find the loader)")
    assert shown[line + 1] == "  ⎿ it reached its turn limit (50) · 1 turn · 1 tool call · 5.1k tokens"


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
