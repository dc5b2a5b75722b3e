"""What is said once per session about the skill files, however often they are read again.

- A frontmatter that was not strict YAML and was read line by line (the warning names the file
  and the line).
- A skill that hides a command of the same name (a skill beats a command, as in Claude Code).

One per session (kept across /clear), so a file that is read before every message is not
reported before every message.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from agentcli.skills.catalog import SkillCatalog


class SkillNotices:
    def __init__(self, on_notice: Callable[[str], None]) -> None:
        self.on_notice = on_notice
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def report(self, catalog: SkillCatalog) -> None:
        for text in [*catalog.warnings(), *_skills_over_commands(catalog)]:
            with self._lock:
                if text in self._said:
                    continue
                self._said.add(text)
            self.on_notice(text)


def _skills_over_commands(catalog: SkillCatalog) -> list[str]:
    return [
        f"/{winner.name} is the skill {winner.path}; the command {hidden.path} of the same name is not used "
        "(a skill takes precedence over a command)."
        for hidden, winner in catalog.shadowed
        if winner.kind == "skill" and hidden.kind == "command"
    ]
