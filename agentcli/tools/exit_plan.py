"""ExitPlanMode(plan): plan mode's hand-over. The model, having looked around in plan mode, presents
its plan; the user approves it and the work starts in the same turn, or sends it back.

The front end's `asking.AsksTheUser` shows the plan and answers with a `PlanVerdict`:

- approved, edits accepted: the session's mode becomes acceptEdits;
- approved, keep asking: it becomes default;
- keep planning (with what to change): the mode stays plan, and the model is told what to change
  in an error result.

On approval the result tells the model it may proceed, so it carries the plan out in the same
turn; the approved plan is kept in the conversation's `ApprovedPlans`: the transcript records it
as a `plan` record (a resume restores it), the first request after a compaction reminds the
model of it (`render_for_model`), `Session.approved_plan` exposes it.

With no front end to ask (`agentcli run`), the plan is the run's answer: the call's result ends
the turn (`ToolResult.final_answer`), so the run prints the plan and exits 0 with nothing changed.
Outside plan mode the call is an error result: there is nothing to hand over.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from agentcli.access import NOTHING, Access
from agentcli.asking import AsksTheUser, PlanReview, WorkMode
from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.tools.base import BuiltinTool, ToolError, prose

NAME = "ExitPlanMode"
RUN_ENDS = (
    "The plan was shown to the user and this non-interactive run (agentcli run) ended with it, in plan mode: "
    "nothing was changed. The user decides whether to carry it out; if they continue this session, do what "
    "they say."
)
MODE_WORDS: dict[WorkMode, str] = {
    "acceptEdits": "acceptEdits: your file edits are accepted without asking; commands are still asked about",
    "default": "default: the user is asked before each edit and command",
}
SUMMARIES: dict[WorkMode, str] = {
    "acceptEdits": "Plan approved · edits accepted from now on",
    "default": "Plan approved · asking before each edit",
}


class ModeSwitch(Protocol):
    """The session's permission mode, which an approved plan changes (`permissions.gate.Gate`)."""

    @property
    def mode(self) -> str: ...

    @mode.setter
    def mode(self, value: str) -> None: ...


@dataclass(frozen=True)
class ApprovedPlan:
    text: str
    """The plan as the model wrote it (Markdown)."""
    mode: WorkMode
    """The mode it was approved to be carried out in."""


class ApprovedPlans:
    """The latest plan the user approved in one conversation. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: ApprovedPlan | None = None
        self.version = 0
        """Goes up with each approval, so the transcript can tell what it has not recorded yet."""

    @property
    def latest(self) -> ApprovedPlan | None:
        with self._lock:
            return self._latest

    def approve(self, plan: ApprovedPlan) -> None:
        with self._lock:
            self._latest = plan
            self.version += 1

    def restore(self, plan: ApprovedPlan | None) -> None:
        """A resumed conversation's plan (its transcript has it already: not an approval)."""
        with self._lock:
            self._latest = plan


def render_for_model(plan: ApprovedPlan | None) -> str:
    """The approved plan as the model is reminded of it (after a compaction dropped the call that
    handed it over); "" when none was approved."""
    if plan is None:
        return ""
    return (
        "The plan the user approved in this conversation (you handed it over with ExitPlanMode; work on it "
        f"goes on in {plan.mode} mode unless the user said otherwise since):\n\n{plan.text}"
    )


def approved(mode: WorkMode) -> str:
    """What the model reads when the user approved its plan (which it has just written: not repeated)."""
    return (
        f"The user approved your plan. Plan mode is over: the session is now in {MODE_WORDS[mode]}. Start the "
        "work now, in this turn: update your task list (TodoWrite) first if it helps, then carry the plan out."
    )


def keep_planning(feedback: str) -> str:
    """What the model reads when the user sent its plan back."""
    if feedback:
        return (
            f"The user did not approve the plan and wants you to keep planning. What to change: {feedback}\n"
            "You are still in plan mode: revise the plan (look further where needed), then call ExitPlanMode "
            "again with the whole revised plan."
        )
    return (
        "The user did not approve the plan. You are still in plan mode: make no changes. Stop here and wait for "
        "the user to tell you what to change."
    )


class ExitPlanModeTool(BuiltinTool):
    name = NAME
    concurrency = "exclusive"  # a mode switch must come between the calls before it and after it
    description = prose(
        """\
In plan mode, once you have finished planning a task that needs code changes, present the whole plan
  (`plan`, Markdown) for the user's approval. If they approve, the mode changes and you carry the plan
  out at once; otherwise they say what to change and you keep planning. Not for research tasks
  (reading, searching or explaining code). Settle open questions with AskUserQuestion first; never ask
  "Is this plan okay?" or "Should I proceed?" any other way: calling this tool is how you ask."""
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "plan": {"type": "string", "description": "Concise: what you will change and where, how you will check it"}
        },
        "required": ["plan"],
    }

    def __init__(
        self,
        modes: ModeSwitch,
        reviewer: AsksTheUser | None,
        plans: ApprovedPlans,
        on_approved: Callable[[], None] | None = None,
    ) -> None:
        """`reviewer`: the front end's (None: nobody can approve, see the module docstring);
        `on_approved` runs after the mode changed (the session notes the model knows it)."""
        self.modes = modes
        self.reviewer = reviewer
        self.plans = plans
        self.on_approved = on_approved

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        """It changes no files and runs nothing (the user's answer switches the mode): allowed in plan mode."""
        return NOTHING

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        plan = str(tool_input.get("plan") or "").strip()
        if not plan:
            raise ToolError(f"{NAME} needs the plan itself in `plan` (Markdown); call it again with the whole plan.")
        if self.modes.mode != "plan":
            raise ToolError(
                f"Not in plan mode (the session is in {self.modes.mode} mode), so there is nothing to exit and no "
                "approval to ask for. If your plan was approved, carry it out; otherwise go on with the task."
            )
        if self.reviewer is None:
            return ToolResult(RUN_ENDS, summary="Plan presented; the run ends here", final_answer=plan)
        verdict = self.reviewer.review_plan(PlanReview(plan, cancel=ctx.cancel))
        if verdict.mode is None:
            summary = f"Keep planning · {verdict.feedback}" if verdict.feedback else "Keep planning"
            return ToolResult(keep_planning(verdict.feedback), is_error=True, summary=summary)
        self.modes.mode = verdict.mode
        self.plans.approve(ApprovedPlan(plan, verdict.mode))
        if self.on_approved is not None:
            self.on_approved()
        return ToolResult(approved(verdict.mode), summary=SUMMARIES[verdict.mode])
