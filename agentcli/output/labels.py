"""Short human labels for tool calls, shared by every front end."""

from __future__ import annotations

from pathlib import Path

from agentcli.contracts import JSON, Usage

PRIMARY_FIELD = {
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "Bash": "command",
    "Grep": "pattern",
    "Glob": "pattern",
    "Task": "description",
    "AskUserQuestion": "questions",
    "ExitPlanMode": "plan",
}
PATH_FIELDS = ("file_path", "path", "notebook_path")


def display_path(path: str, cwd: Path | None) -> str:
    """`path` relative to the project directory when it lies inside it."""
    if cwd is None or not Path(path).is_absolute():
        return path
    try:
        return str(Path(path).relative_to(cwd)) or "."
    except ValueError:
        return path


def call_label(name: str, tool_input: JSON, width: int = 80, *, cwd: Path | None = None) -> str:
    """`Read(src/app.py)`: the tool and its most telling argument, on one line; a path inside
    `cwd` (the project) is shown relative to it."""
    todos = tool_input.get("todos") if name == "TodoWrite" else None
    if isinstance(todos, list):
        return f"{name}({len(todos)} task{'' if len(todos) == 1 else 's'})"
    field = PRIMARY_FIELD.get(name)
    value = tool_input.get(field) if field else None
    if name == "AskUserQuestion" and isinstance(value, list):  # the questions' headers
        value = ", ".join(str(q.get("header")) for q in value if isinstance(q, dict) and q.get("header"))
    elif name == "ExitPlanMode" and isinstance(value, str):  # the plan's first line, a heading's text
        value = next((line.strip().lstrip("#").strip() for line in value.splitlines() if line.strip()), "")
    if value is None:
        field, value = next(((k, v) for k, v in tool_input.items() if isinstance(v, str)), (None, ""))
    if field in PATH_FIELDS and isinstance(value, str):
        value = display_path(value, cwd)
    text = " ".join(str(value).split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return f"{name}({text})"


def format_tokens(count: int) -> str:
    """`950`, `1.2k`, `34k`, `1.5M`."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}".removesuffix(".0") + "k"
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}".removesuffix(".0") + "M"


def plural(count: int, word: str) -> str:
    """`1 tool call`, `6 tool calls`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def usage_tokens(usage: Usage) -> int:
    """Every token a conversation's requests sent and received (cache reads and writes included)."""
    return usage.total_input + usage.output_tokens


def subagent_counts(tool_calls: int, usage: Usage, turns: int | None = None) -> str:
    """`3 turns · 6 tool calls · 12.4k tokens` (without the turns while it runs)."""
    parts = [plural(turns, "turn")] if turns is not None else []
    return " · ".join([*parts, plural(tool_calls, "tool call"), f"{format_tokens(usage_tokens(usage))} tokens"])
