"""The interactive question, UI-agnostic: what a front end is asked, and what it answers.

The REPL supplies a `Prompter`; the gate calls it once per call that needs the user,
in call order, and turns the `Answer` into a decision.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from agentcli.contracts import JSON
from agentcli.permissions.suggest import Suggestion

Choice = Literal["yes", "always", "no"]
MAX_LABEL = 100
"""Characters of a command or path in `PermissionRequest.label`."""


@dataclass(frozen=True)
class Answer:
    """The user's answer: yes; yes and don't ask again for `rules`; or no, with an optional reason."""

    choice: Choice
    rules: tuple[str, ...] = ()
    reason: str = ""

    @classmethod
    def yes(cls) -> Answer:
        return cls("yes")

    @classmethod
    def always(cls, rules: Sequence[str]) -> Answer:
        return cls("always", tuple(rules))

    @classmethod
    def no(cls, reason: str = "") -> Answer:
        return cls("no", reason=reason)


@dataclass(frozen=True)
class Option:
    key: str
    choice: Choice
    label: str


@dataclass(frozen=True)
class PermissionRequest:
    """Everything a front end needs to ask about one call."""

    tool: str
    tool_input: JSON
    kind: str
    """What the call mainly does (`evaluate.CallKind`): "bash", "edit", "read", "mcp", "none" or "other"."""
    title: str
    """e.g. "Bash command", "Edit file"."""
    subject: str
    """The command for Bash; the path(s) for file tools; the tool name otherwise."""
    reason: str
    """Why the user is asked (no rule yet, outside the project, an ask rule)."""
    suggestion: Suggestion | None
    """What "don't ask again" would allow; None when that option is not offered."""
    diff: str | None = None
    """For Edit/Write: a unified diff of the proposed change."""
    outside: bool = False
    """The call touches paths outside the project."""
    note: str = ""
    """The call's own description (Bash `description`), or a problem with the preview."""
    agent: str = ""
    """The sub-agent whose call it is (its type, `Explore`); empty for the session's own agent."""
    cancel: threading.Event | None = field(default=None, compare=False, repr=False)
    """Set when the user interrupts the turn: a front end still asking stops and answers No."""

    @property
    def heading(self) -> str:
        """The question's title, naming the sub-agent that asks: `Explore · Bash command`."""
        return f"{self.agent} · {self.title}" if self.agent else self.title

    @property
    def asked_label(self) -> str:
        """`label`, naming the sub-agent that asks: `Explore · Bash(ls -R)`."""
        return f"{self.agent} · {self.label}" if self.agent else self.label

    @property
    def label(self) -> str:
        """The call on one line, for the answer's echo: `Bash(git status)`, `Edit(src/a.py)`, `mcp__db__query`."""
        if self.kind in ("mcp", "none", "other"):
            return self.tool
        subject = " ".join(self.subject.split())
        if len(subject) > MAX_LABEL:
            subject = subject[: MAX_LABEL - 1] + "…"
        return f"{self.tool}({subject})"

    def options(self) -> list[Option]:
        """1 Yes; 2 Yes, and don't ask again (when a rule can be offered); then No."""
        options = [Option("1", "yes", "Yes")]
        if self.suggestion is not None:
            where = (
                "in this project (saved to .agentcli/settings.local.json)"
                if self.suggestion.scope == "local"
                else "for the rest of this session"
            )
            options.append(Option("2", "always", f"Yes, and don't ask again for {self.suggestion.label} {where}"))
        options.append(Option(str(len(options) + 1), "no", "No, and tell the model what to do differently"))
        return options

    def choice_for(self, key: str) -> Choice | None:
        """The choice a key press or typed word means: a number, y/yes, n/no, Esc (None if unknown)."""
        text = key.strip().lower()
        if text in ("y", "yes"):
            return "yes"
        if text in ("n", "no", "\x1b", "\x03"):
            return "no"
        return next((o.choice for o in self.options() if o.key == text), None)

    def answer(self, choice: Choice, reason: str = "") -> Answer:
        """The Answer for a choice (the suggested rules go with "always")."""
        if choice == "always" and self.suggestion is not None:
            return Answer.always(self.suggestion.rules)
        if choice == "no":
            return Answer.no(reason)
        return Answer.yes()


class Prompter(Protocol):
    """Asks the user about one call and waits for the answer (Esc or Ctrl-C mean No)."""

    def __call__(self, request: PermissionRequest) -> Answer: ...
