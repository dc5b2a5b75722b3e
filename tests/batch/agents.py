"""A scripted agent for batch tests: any task's requests, in any order, answered by the fake server.

A task's prompt says what to do with words the answer reads: `WRITE:NAME` has the agent write
the file NAME (its content: NAME) and then say it is done; `STALL` gets an answer that starts
and never ends; anything else, it answers at once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, reply, text, tool_use

ENOUGH = 400
"""Scripted answers: more than any test's tasks ask for."""


def prompt_of(request: RecordedRequest) -> str:
    first = request.body["messages"][0]["content"]
    if isinstance(first, str):
        return first
    return " ".join(block.get("text", "") for block in first if block.get("type") == "text")


def answer(request: RecordedRequest) -> Reply:
    prompt = prompt_of(request)
    if "STALL" in prompt:  # the answer starts, then never ends
        return reply(text("thinking about it for ever"), stall_after=1)
    if len(request.body["messages"]) == 1 and "WRITE:" in prompt:
        name = prompt.split("WRITE:", 1)[1].split()[0]
        return reply(tool_use("Write", {"file_path": name, "content": name + "\n"}))
    return reply(text("done"))


def serve_tasks(api: FakeAnthropic, count: int = ENOUGH) -> None:
    api.script(*[answer] * count)


def task_prompts(api: FakeAnthropic) -> list[str]:
    """The prompt of each request the server answered, in order."""
    return [prompt_of(request) for request in api.requests if request.path == "/v1/messages"]


def write_tasks(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return path


def results(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def writing_task(task_id: str, **fields: Any) -> dict[str, Any]:
    """A task whose agent writes `<id>.txt` in a copy of `src`, checked by its check."""
    return {
        "id": task_id,
        "prompt": f"please WRITE:{task_id}.txt now",
        "workdir": "src",
        "check": f"test -f {task_id}.txt",
        "allowed_tools": ["Write"],
        **fields,
    }
