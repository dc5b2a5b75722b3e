"""Capping text before it enters the conversation, always saying what was cut."""

from __future__ import annotations

TOOL_OUTPUT_LIMIT = 30_000


def cap_middle(text: str, limit: int = TOOL_OUTPUT_LIMIT) -> str:
    """Keep the head and the tail of `text` within about `limit` characters, noting the cut."""
    if len(text) <= limit:
        return text
    head = text[: limit // 2]
    tail = text[len(text) - limit // 2 :]
    cut = len(text) - len(head) - len(tail)
    cut_lines = text.count("\n", len(head), len(text) - len(tail))
    note = f"\n\n[... output truncated: {cut:,} characters ({cut_lines:,} lines) cut from the middle ...]\n\n"
    return head + note + tail
