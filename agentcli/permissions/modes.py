"""Permission modes: how much the gate approves without asking."""

from __future__ import annotations

from typing import Literal

from agentcli.errors import UsageError

Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]

MODES: tuple[Mode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")

CYCLE: tuple[Mode, ...] = ("default", "acceptEdits", "plan")
"""The modes Shift-Tab walks through; bypassPermissions must be chosen explicitly."""


def check_mode(value: str, where: str = "--permission-mode") -> Mode:
    """`value` as a Mode, or a UsageError naming where it came from."""
    if value not in MODES:
        raise UsageError(f"Unknown permission mode {value!r} in {where}; choose one of {', '.join(MODES)}.")
    return value


def next_mode(mode: Mode) -> Mode:
    """The mode after `mode` in the Shift-Tab cycle (bypassPermissions goes back to default)."""
    if mode not in CYCLE:
        return "default"
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)]
