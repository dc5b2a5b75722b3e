"""Permission modes: how much the gate approves without asking.

- `default`: reads in the project run; anything else is asked about.
- `acceptEdits`: edits in the project run too.
- `plan`: read-only; anything that changes files or runs commands is refused.
- `dontAsk`: as default, but what would be asked about is denied instead (only what rules
  allow runs), as in a run that cannot ask.
- `bypassPermissions`: everything runs but deny rules and protected paths.

Claude Code's `manual` is its name for `default`; its `auto` (a classifier approves) has no
counterpart here (`CLAUDE_CODE_ONLY`).
"""

from __future__ import annotations

from typing import Literal

from agentcli.errors import UsageError

Mode = Literal["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]

MODES: tuple[Mode, ...] = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")

CYCLE: tuple[Mode, ...] = ("default", "acceptEdits", "plan")
"""The modes Shift-Tab walks through; dontAsk and bypassPermissions must be chosen explicitly."""

ALIASES: dict[str, Mode] = {"manual": "default"}
"""Claude Code's other names for modes."""
CLAUDE_CODE_ONLY = frozenset({"auto"})
"""Claude Code's modes agentcli does not have: a settings file naming one is ignored with a notice."""


def check_mode(value: str, where: str = "--permission-mode") -> Mode:
    """`value` as a Mode (`manual` as default), or a UsageError naming where it came from."""
    value = ALIASES.get(value, value)
    for mode in MODES:
        if value == mode:
            return mode
    raise UsageError(f"Unknown permission mode {value!r} in {where}; choose one of {', '.join(MODES)}.")


def next_mode(mode: Mode) -> Mode:
    """The mode after `mode` in the Shift-Tab cycle (dontAsk and bypassPermissions go back to default)."""
    if mode not in CYCLE:
        return "default"
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)]
