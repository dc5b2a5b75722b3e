"""TodoWrite: the model's task list, replaced whole by each call, validated before it changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.contracts import JSON, ToolContext
from agentcli.tools.todo import TodoList, TodoWriteTool, parse_todos, progress_line, render_for_model
from agentcli.workspace.local import LocalWorkspace
from tests.tools.helpers import call


def task(content: str, status: str, active: str | None = None) -> JSON:
    return {"content": content, "status": status, "activeForm": active or f"Doing: {content}"}


PLAN = [
    task("Find the bug", "completed"),
    task("Run the tests", "in_progress", "Running the tests"),
    task("Update the README", "pending"),
]


@pytest.fixture
def todos() -> TodoList:
    return TodoList()


def test_each_call_replaces_the_whole_list_and_reports_progress(todos: TodoList, tmp_path: Path) -> None:
    changes: list[int] = []
    tool = TodoWriteTool(todos, on_change=lambda: changes.append(todos.version))

    first = call(tool, ToolContext(LocalWorkspace(tmp_path)), {"todos": PLAN})
    assert not first.is_error
    assert first.summary == "1 of 3 done · now: Running the tests"
    assert "1 of 3 done" in first.content and "mark each task completed as soon as it is done" in first.content
    assert [t.content for t in todos.items] == ["Find the bug", "Run the tests", "Update the README"]
    assert (current := todos.current()) is not None and current.active_form == "Running the tests"

    second = call(tool, ToolContext(LocalWorkspace(tmp_path)), {"todos": [task("Find the bug", "completed")]})
    assert [t.content for t in todos.items] == ["Find the bug"]
    assert second.summary == "done" and "Report the outcome" in second.content
    assert todos.current() is None
    assert changes == [1, 2]

    emptied = call(tool, ToolContext(LocalWorkspace(tmp_path)), {"todos": []})
    assert todos.items == () and emptied.content == "The task list is now empty."


@pytest.mark.parametrize(
    ("todos_input", "message"),
    [
        (
            [task("a", "in_progress"), task("b", "in_progress")],
            "only one task may be in_progress at a time, not 2 (a; b)",
        ),
        ([task("a", "started")], "task 1 has status 'started'; use one of pending, in_progress, completed"),
        ([task("a", "pending"), task("  ", "pending")], "task 2 needs a non-empty content and activeForm"),
        ([{"content": "a", "status": "pending", "activeForm": ""}], "task 1 needs a non-empty content and activeForm"),
    ],
)
def test_an_invalid_list_is_refused_and_the_old_one_kept(
    todos: TodoList, tmp_path: Path, todos_input: list[JSON], message: str
) -> None:
    tool = TodoWriteTool(todos)
    call(tool, ToolContext(LocalWorkspace(tmp_path)), {"todos": PLAN})

    result = tool.run({"todos": todos_input}, ToolContext(LocalWorkspace(tmp_path)))

    assert result.is_error
    assert result.content == f"The task list was not changed: {message}."
    assert len(todos.items) == 3 and todos.version == 1


def test_progress_line_and_the_reminder_text() -> None:
    items = parse_todos(PLAN)
    assert progress_line(()) == "no tasks"
    assert progress_line(items[:1]) == "done"
    assert progress_line(parse_todos([task("a", "completed"), task("b", "completed")])) == "all 2 done"
    assert progress_line(parse_todos([task("a", "pending")])) == "0 of 1 done"
    assert render_for_model(()) == ""
    assert render_for_model(items).splitlines()[1:] == [
        "1. [completed] Find the bug",
        "2. [in_progress] Run the tests",
        "3. [pending] Update the README",
    ]


def test_the_description_tells_when_to_use_it_and_when_not() -> None:
    description = TodoWriteTool.description
    assert "When to use it:" in description and "When not to use it:" in description
    assert "Exactly one task is in_progress" in description
    assert "\n  " not in description  # wrapped source lines are joined into one line each
