"""A skill's `allowed-tools` rules, in force for the duration of that skill's turn.

The gate owns rule matching (deny still wins); this module only asks it to hold extra
allow rules for a while, through the one method a gate needs for that: `temporary_allow`.
A gate without it simply decides by the session's own rules.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Protocol, runtime_checkable

from agentcli.contracts import PermissionGate
from agentcli.skills.catalog import Skill

_GLOB_SPECIAL = re.compile(r"([*?\[\]\\])")


@runtime_checkable
class AcceptsTemporaryRules(Protocol):
    def temporary_allow(self, rules: Sequence[str], /, label: str = ...) -> AbstractContextManager[None]:
        """Treat `rules` (e.g. `Bash(git diff:*)`) as allow rules until the context exits.

        `label` says where they come from (e.g. "/commit"), for the gate's notices.
        """
        ...


def can_add_rules(gate: PermissionGate) -> bool:
    return isinstance(gate, AcceptsTemporaryRules)


@contextmanager
def allowed_for(gate: PermissionGate, rules: Sequence[str], label: str = "a skill") -> Iterator[None]:
    """Within the block, `gate` also allows `rules` (if it supports extra rules)."""
    if rules and isinstance(gate, AcceptsTemporaryRules):
        with gate.temporary_allow(list(rules), label=label):
            yield
    else:
        yield


class TurnRules:
    """Skill rules added during a user turn (by /skill or the Skill tool), dropped when it ends."""

    def __init__(self, gate: PermissionGate) -> None:
        self.gate = gate
        self._stack = ExitStack()
        self._lock = threading.Lock()

    def add(self, rules: Sequence[str], label: str = "a skill") -> None:
        if rules:
            with self._lock:
                self._stack.enter_context(allowed_for(self.gate, rules, label))

    def end(self) -> None:
        with self._lock:
            stack, self._stack = self._stack, ExitStack()
        stack.close()


def folder_read_rule(skill: Skill) -> list[str]:
    """`Read(//<folder>/**)` for a skill folder (its real path: a link out of it is not covered)."""
    if skill.folder is None:
        return []
    folder = _GLOB_SPECIAL.sub(r"\\\1", os.path.realpath(skill.folder))
    return [f"Read(/{folder}/**)"]
