"""The change an Edit or Write would make, as a unified diff, for the permission prompt."""

from __future__ import annotations

import difflib
from pathlib import Path

from agentcli.contracts import JSON

MAX_PREVIEW_BYTES = 2 * 1024 * 1024
MAX_DIFF_LINES = 400


def proposed_diff(tool: str, tool_input: JSON, path: Path, shown: str) -> tuple[str | None, str]:
    """(diff, note): the diff of the proposed change, or None with a note saying why there is none."""
    try:
        old = path.read_text(encoding="utf-8") if path.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return None, f"{shown} cannot be read as text, so no preview is shown."
    if len(old) > MAX_PREVIEW_BYTES:
        return None, f"{shown} is too large to preview."
    if tool == "Write":
        new = tool_input.get("content")
    elif tool == "Edit":
        new = _edited(old, tool_input)
        if new is None:
            return None, "old_string does not occur in the file; the edit will fail."
    else:
        return None, ""
    if not isinstance(new, str):
        return None, ""
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"a/{shown}" if old or path.exists() else "/dev/null",
            f"b/{shown}",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES} more diff lines\n"]
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return (text or None), ("" if text else "The file would not change.")


def _edited(old: str, tool_input: JSON) -> str | None:
    find, replacement = tool_input.get("old_string"), tool_input.get("new_string")
    if not isinstance(find, str) or not isinstance(replacement, str):
        return None
    if not find:  # an empty old_string creates a new file
        return replacement if not old else None
    if find not in old:
        return None
    return old.replace(find, replacement) if tool_input.get("replace_all") else old.replace(find, replacement, 1)
