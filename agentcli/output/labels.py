"""Short human labels for tool calls, shared by every front end."""

from __future__ import annotations

from agentcli.contracts import JSON

PRIMARY_FIELD = {
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "Bash": "command",
    "Grep": "pattern",
    "Glob": "pattern",
}


def call_label(name: str, tool_input: JSON, width: int = 80) -> str:
    """`Read(src/app.py)`: the tool and its most telling argument, on one line."""
    todos = tool_input.get("todos") if name == "TodoWrite" else None
    if isinstance(todos, list):
        return f"{name}({len(todos)} task{'' if len(todos) == 1 else 's'})"
    field = PRIMARY_FIELD.get(name)
    value = tool_input.get(field) if field else None
    if value is None:
        value = next((v for v in tool_input.values() if isinstance(v, str)), "")
    text = " ".join(str(value).split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return f"{name}({text})"
