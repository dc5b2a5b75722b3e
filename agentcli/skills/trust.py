"""Which skill files may grant their `allowed-tools` when the model runs them.

A skill's `allowed-tools` hold for its `!` commands and the rest of the user turn. When the
user types /name, they always do. When the model runs a skill through the Skill tool,
they do only if the file is byte for byte what it was when the session began, or what the
user last ran by hand. Otherwise a model could write `.commands/x.md` with `allowed-tools:
Bash` and run it, granting itself every later command without a question. Such a skill
still runs, but its commands need permission like any Bash call until the user runs it once.

The digest is of the very bytes the skill was parsed from (`Skill.digest`), so what is
checked is what gets expanded. The baseline is taken when the session's first conversation
is set up (`SessionContext` construction), before the model has done anything.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from agentcli.skills.catalog import Skill, SkillCatalog


class SkillTrust:
    """One per process, across /clear and /resume: a new conversation does not launder a skill."""

    def __init__(self) -> None:
        self._trusted: dict[Path, str] | None = None
        self._lock = threading.Lock()

    def begin(self, load: Callable[[], SkillCatalog]) -> None:
        """Take the skill files as they are now as the session's baseline (the first call only)."""
        with self._lock:
            if self._trusted is not None:
                return
        catalog = load()
        baseline = {skill.path: skill.digest for skill in catalog.skills.values()}
        baseline.update((hidden.path, hidden.digest) for hidden, _ in catalog.shadowed)
        with self._lock:
            if self._trusted is None:
                self._trusted = baseline

    def trust(self, skill: Skill) -> None:
        """The user ran `skill` by hand: this content is theirs for the rest of the session."""
        with self._lock:
            if self._trusted is None:
                self._trusted = {}
            self._trusted[skill.path] = skill.digest

    def grants(self, skill: Skill) -> bool:
        """May `skill`, run by the model, put its allowed-tools in force?"""
        with self._lock:
            return self._trusted is not None and self._trusted.get(skill.path) == skill.digest

    @staticmethod
    def not_in_force(skill: Skill, cwd: Path) -> str:
        """What the model and the user are told when a skill's allowed-tools are withheld."""
        try:
            shown = str(skill.path.relative_to(cwd))
        except ValueError:
            shown = str(skill.path)
        return (
            f"/{skill.name}'s allowed-tools are not in force: {shown} was created or changed during this "
            f"session; run /{skill.name} yourself once to trust it. Until then its commands, and the tool "
            "calls after it, need permission as usual."
        )
