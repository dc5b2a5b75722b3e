"""The REPL's view of a sub-agent's events, in-process: they never reach the main transcript,
and after a question (the region taken down) a sub-agent's next call brings the region back,
but not while a call is still being judged (a question may be on screen)."""

from __future__ import annotations

from pathlib import Path

from agentcli.contracts import ToolResult
from agentcli.events import SubagentStarted, TextDelta, ToolCallFinished, ToolCallRunning, ToolCallStarted
from agentcli.repl.view import TurnView
from tests.ui.helpers import make_console, output

SUB = "sub-1"


def test_after_a_pause_a_sub_agents_call_brings_the_region_back_once_nothing_is_being_judged(tmp_path: Path) -> None:
    console = make_console(terminal=True, width=120)
    view = TurnView(console, tmp_path)
    task = {"description": "find the loader", "prompt": "look", "subagent_type": "Explore"}
    view.begin()
    view(ToolCallStarted("toolu_task", "Task", task))
    view(ToolCallRunning("toolu_task", "Task", task))
    view(SubagentStarted(SUB, "toolu_task", "Explore", "find the loader"))
    view(TextDelta("SUB-TEXT", agent_id=SUB))
    view.pause()  # a question about one of the sub-agent's calls is on screen
    asked = len(output(console))
    view(ToolCallStarted("c1", "Bash", {"command": "ls"}, agent_id=SUB))
    view(ToolCallStarted("c2", "Grep", {"pattern": "load_config"}, agent_id=SUB))
    view(ToolCallRunning("c2", "Grep", {"pattern": "load_config"}, agent_id=SUB))
    assert output(console)[asked:] == ""  # c1 is still being judged: nothing drawn over the question

    view(ToolCallRunning("c1", "Bash", {"command": "ls"}, agent_id=SUB))  # answered: it runs
    view.end()  # draws the region a last time before taking it down
    drawn = output(console)[asked:]

    assert "● Explore(find the loader) · 2 tool calls · 0 tokens · Grep(load_config)" in drawn
    assert "Running…" in drawn
    assert "● Grep(" not in drawn and "● Bash(" not in drawn
    assert "SUB-TEXT" not in output(console)


def test_while_a_question_is_on_screen_no_event_brings_the_region_back(tmp_path: Path) -> None:
    console = make_console(terminal=True, width=120)
    view = TurnView(console, tmp_path)
    task = {"description": "review", "prompt": "look", "subagent_type": "reviewer"}
    view.begin()
    view(ToolCallRunning("toolu_task", "Task", task))
    view(SubagentStarted(SUB, "toolu_task", "reviewer", "review"))
    with view.asking():  # the sub-agent's AskUserQuestion picker is up; a call of its own runs meanwhile
        asked = len(output(console))
        view(ToolCallRunning("c1", "Grep", {"pattern": "load_config"}, agent_id=SUB))
        view(ToolCallFinished("c1", "Grep", {"pattern": "load_config"}, ToolResult("3 matches"), agent_id=SUB))
        assert output(console)[asked:] == ""  # nothing drawn over the question

    view(ToolCallRunning("c2", "Read", {"file_path": "a.py"}, agent_id=SUB))  # answered: the region is back
    view.end()
    assert "Running…" in output(console)[asked:]
