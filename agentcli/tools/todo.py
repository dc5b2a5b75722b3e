"""TodoWrite: the model's task list for multi-step work, shown to the user as it changes.

Each call replaces the whole list. The list lives in a `TodoList` owned by the session:
the REPL draws it after each call (and on /todos), the spinner shows the task in
progress, the transcript records it so a resumed session has it back, and after a
compaction it is carried into the new conversation as a reminder.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from agentcli.access import NOTHING, Access
from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.tools.base import BuiltinTool, ToolError, prose

Status = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[Status, ...] = ("pending", "in_progress", "completed")


@dataclass(frozen=True)
class Todo:
    content: str
    """The task as an instruction: "Run the tests"."""
    status: Status
    active_form: str
    """The task as it is being done: "Running the tests" (shown while in progress)."""

    def as_json(self) -> JSON:
        return {"content": self.content, "status": self.status, "activeForm": self.active_form}


def parse_todos(value: Any) -> tuple[Todo, ...]:
    """Todos from TodoWrite input or a transcript record; ValueError says what is wrong."""
    if not isinstance(value, list):
        raise ValueError("todos must be a list")
    todos: list[Todo] = []
    for number, item in enumerate(value, 1):
        if not isinstance(item, dict):
            raise ValueError(f"task {number} must be an object")
        content = str(item.get("content") or "").strip()
        active_form = str(item.get("activeForm") or "").strip()
        status = item.get("status")
        if not content or not active_form:
            raise ValueError(f"task {number} needs a non-empty content and activeForm")
        if status not in STATUSES:
            raise ValueError(f"task {number} has status {status!r}; use one of {', '.join(STATUSES)}")
        todos.append(Todo(content, cast(Status, status), active_form))
    working = [t.content for t in todos if t.status == "in_progress"]
    if len(working) > 1:
        raise ValueError(f"only one task may be in_progress at a time, not {len(working)} ({'; '.join(working)})")
    return tuple(todos)


class TodoList:
    """The session's current tasks. Thread-safe: tool calls may run on worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: tuple[Todo, ...] = ()
        self.version = 0
        """Goes up with every change, so observers can tell whether they have seen the latest list."""

    @property
    def items(self) -> tuple[Todo, ...]:
        with self._lock:
            return self._items

    def replace(self, items: Sequence[Todo]) -> None:
        with self._lock:
            self._items = tuple(items)
            self.version += 1

    def current(self) -> Todo | None:
        """The task in progress, if there is one."""
        return in_progress(self.items)


def in_progress(items: Sequence[Todo]) -> Todo | None:
    return next((t for t in items if t.status == "in_progress"), None)


def progress_line(items: Sequence[Todo]) -> str:
    """`2 of 5 done · now: Running the tests`, or `no tasks`."""
    if not items:
        return "no tasks"
    done = sum(t.status == "completed" for t in items)
    if done == len(items):
        return f"all {len(items)} done" if len(items) > 1 else "done"
    current = in_progress(items)
    return f"{done} of {len(items)} done" + (f" · now: {current.active_form}" if current else "")


def render_for_model(items: Sequence[Todo]) -> str:
    """The list as the model is reminded of it (after a compaction dropped its TodoWrite calls)."""
    if not items:
        return ""
    lines = [f"{n}. [{t.status}] {t.content}" for n, t in enumerate(items, 1)]
    return "Your task list (kept with TodoWrite) as it stands; carry on from it and keep it current:\n" + "\n".join(
        lines
    )


class TodoWriteTool(BuiltinTool):
    name = "TodoWrite"
    concurrency = "exclusive"  # two calls in one turn must replace the list in the model's order
    description = prose(
        """\
Keep a task list for the work in hand. The user sees it in their terminal as it changes, so it shows
  them your plan and your progress. Each call replaces the whole list: always send every task with
  its current status.

When to use it:
- The task needs three or more distinct steps, or changes several files or places (a feature across
  modules, a rename through the code base, a batch of failing tests or type errors).
- The user gives several things to do at once (a numbered or comma-separated list).
- The user asks for a plan or a checklist, or asks you to track progress.
- New work turns up on the way (a failing test to fix, a follow-up the user adds): add it as a task
  rather than keeping it in your head.

When not to use it:
- One simple change (fix a typo, rename a local variable, add an import), a question about the code,
  or anything done in one or two tool calls. A list there is noise: just do the work.

How to keep it:
- Statuses: pending (not started), in_progress (being worked on now), completed (finished and
  checked).
- Exactly one task is in_progress while you work. Set a task in_progress before you start on it, and
  completed as soon as it is done; do not save up several completions for one call.
- completed means done: the change is made and the relevant tests or checks pass. If tests fail, an
  error is unresolved or the work is partial, keep the task in_progress and add a task for what
  blocks it.
- Remove tasks that turn out to be unnecessary; split one that turns out to be large.
- content says the task as an instruction ("Run the tests"); activeForm says it as it is being done
  ("Running the tests") and is shown while it is in progress.
- Make tasks concrete and checkable ("Add a --json flag to the export command in cli.py"), not vague
  ("Improve the CLI").

Examples:
- "Add a dark-mode toggle to the settings page and make sure the tests and the build pass": use a
  list. Tasks: add the theme setting to the settings store; add the toggle to the settings page;
  style both themes; run the tests and the build and fix what fails.
- "Rename getUser to fetchUser everywhere": search first. If it is used in 14 places across 6 files,
  make a task per file so that none is missed; if it is used in one file, just edit it.
- "What does git rebase --onto do?" or "Add a docstring to parse_args": no list; answer, or make the
  one edit.

Returns a short confirmation. It changes no files and needs no permission."""
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The whole task list, in order",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1, "description": 'e.g. "Run the tests"'},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "activeForm": {"type": "string", "minLength": 1, "description": 'e.g. "Running the tests"'},
                    },
                    "required": ["content", "status", "activeForm"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["todos"],
        "additionalProperties": False,
    }

    def __init__(self, todos: TodoList, on_change: Callable[[], None] | None = None) -> None:
        self.todos = todos
        self.on_change = on_change

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        """It changes no files and runs nothing: no permission needed, allowed in plan mode."""
        return NOTHING

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        try:
            items = parse_todos(tool_input.get("todos"))
        except ValueError as error:
            raise ToolError(f"The task list was not changed: {error}.") from None
        self.todos.replace(items)
        if self.on_change is not None:
            self.on_change()
        line = progress_line(items)
        if not items:
            return ToolResult("The task list is now empty.", summary=line)
        if all(t.status == "completed" for t in items):
            message = f"Task list updated: {line}. Report the outcome to the user."
        else:
            message = (
                f"Task list updated: {line}. Keep it current as you work: mark each task completed as soon as it "
                "is done, and set the next one in_progress."
            )
        return ToolResult(message, summary=line)
