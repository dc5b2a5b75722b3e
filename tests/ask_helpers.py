"""Helpers for the tests of AskUserQuestion and ExitPlanMode in-process: an `AsksTheUser` that
answers the model's questions by pressing keys in the REPL's real picker state
(`ui.question_form.QuestionForm`), and answers plans from a script."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentcli.asking import Answers, PlanReview, PlanVerdict, QuestionsRequest
from agentcli.contracts import JSON, ModelRequest
from agentcli.permissions.prompt import Answer, PermissionRequest
from agentcli.ui.question_form import QuestionForm

UP, DOWN, ENTER, SPACE, ESC = "\x1b[A", "\x1b[B", "\r", " ", "\x1b"


@dataclass
class Typed:
    """A line typed where the picker asks for text (after Other)."""

    text: str


@dataclass
class ScriptedUser:
    """Presses `keys` (and types each `Typed`) into the picker, one call's worth after another;
    answers each plan with the next of `verdicts`; says yes to every permission question."""

    keys: list[str | Typed] = field(default_factory=list)
    verdicts: list[PlanVerdict] = field(default_factory=list)
    asked: list[QuestionsRequest] = field(default_factory=list)
    reviewed: list[PlanReview] = field(default_factory=list)
    permissions: list[PermissionRequest] = field(default_factory=list)

    def answer_questions(self, request: QuestionsRequest) -> Answers | None:
        self.asked.append(request)
        form = QuestionForm(request)
        step = form.step
        while step not in ("done", "declined"):
            action = self.keys.pop(0)
            if step == "needs_text":
                assert isinstance(action, Typed), f"the picker asks for text, not {action!r}"
                step = form.give_text(action.text)
            else:
                assert isinstance(action, str), f"the picker waits for a key, not {action!r}"
                step = form.press(action)
        return dict(form.answers) if step == "done" else None

    def review_plan(self, review: PlanReview) -> PlanVerdict:
        self.reviewed.append(review)
        return self.verdicts.pop(0)

    def __call__(self, request: PermissionRequest) -> Answer:
        self.permissions.append(request)
        return Answer.yes()


def question(text: str, header: str, *labels: str, multi: bool = False) -> JSON:
    return {
        "question": text,
        "header": header,
        "options": [{"label": label, "description": f"About {label}."} for label in labels],
        "multiSelect": multi,
    }


def results(request: ModelRequest) -> dict[str, JSON]:
    """The tool results of the request's last message, by call id."""
    return {b["tool_use_id"]: b for b in request.messages[-1]["content"] if b.get("type") == "tool_result"}


def sent(request: ModelRequest) -> str:
    return json.dumps(request.messages[-1])


def names(tools: Sequence[Any]) -> list[str]:
    return [tool["name"] for tool in tools]
