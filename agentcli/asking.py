"""The model asking the user, UI-agnostic: multiple-choice questions (AskUserQuestion) and a plan
to approve (ExitPlanMode); what a front end is handed, and what it answers.

A front end that has someone to answer supplies an `AsksTheUser` to the session, as it supplies
a permission prompter (`permissions.prompt.Prompter`): the REPL answers with pickers on the
terminal; a later stream-json input will answer from its input stream. Without one (`agentcli
run`), nobody can answer: a question is an error result, and a plan ends the run.

Both are called from the thread of the tool call that asks (a sub-agent's own thread too), one
at a time per front end; `cancel` is set when the user interrupts the turn meanwhile, and a front
end still asking then stops and answers as declined.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal, Protocol

OTHER = "Other"
"""The choice every question has besides the model's options: the user types their own answer."""


@dataclass(frozen=True)
class QuestionOption:
    label: str
    """What the user picks, and what the answer says: `JWT tokens`."""
    description: str
    """What choosing it means: `Stateless; suits the mobile client.`"""


@dataclass(frozen=True)
class Question:
    question: str
    """The whole question: `Which auth method should the API use?` (answers are keyed by it)."""
    header: str
    """A short label for it: `Auth method`."""
    options: tuple[QuestionOption, ...]
    """Two to four; `OTHER` comes after them."""
    multi_select: bool = False
    """The user may pick several options (and Other) instead of one."""


@dataclass(frozen=True)
class QuestionsRequest:
    """One AskUserQuestion call: its questions, in order, and who asks them."""

    questions: tuple[Question, ...]
    agent: str = ""
    """The sub-agent that asks (its type, `reviewer`); empty for the session's own agent."""
    cancel: threading.Event | None = field(default=None, compare=False, repr=False)


Answers = dict[str, str]
"""Question text → the user's answer: the label picked, the labels picked joined with ", " (multi-select),
and what the user typed in place of `OTHER`."""


@dataclass(frozen=True)
class PlanReview:
    """One ExitPlanMode call: the plan the model asks the user to approve (Markdown)."""

    plan: str
    cancel: threading.Event | None = field(default=None, compare=False, repr=False)


WorkMode = Literal["acceptEdits", "default"]
"""The permission mode an approved plan is carried out in: edits accepted, or each one asked about."""


@dataclass(frozen=True)
class PlanVerdict:
    mode: WorkMode | None
    """Approved: the mode the work goes on in. None: keep planning."""
    feedback: str = ""
    """With keep planning: what the user wants changed ("" when they said nothing)."""


class AsksTheUser(Protocol):
    """A front end through which the model's questions reach the user."""

    def answer_questions(self, request: QuestionsRequest) -> Answers | None:
        """The user's answer to every question of `request`, or None when they declined to answer
        (Esc, an interrupt)."""
        ...

    def review_plan(self, review: PlanReview) -> PlanVerdict:
        """Show the plan and ask whether to carry it out (Esc, an interrupt: keep planning)."""
        ...
