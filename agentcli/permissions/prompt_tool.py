"""`--permission-prompt-tool mcp__server__tool`: a program's MCP tool answers what a run would ask.

Claude Code's contract: where a run would ask the user, the tool is called with
`{"tool_name": …, "input": {…}}` and answers with one text block holding JSON,
`{"behavior": "allow"}` (optionally with `updatedInput`) or `{"behavior": "deny", "message": "…"}`.

- A permission question: deny and ask rules are applied before it is asked, as for a person (it
  cannot allow what they deny). An `updatedInput` that changes the call is refused: agentcli
  runs only the call that was judged.
- AskUserQuestion: the tool gets the questions as the model wrote them and answers with
  `updatedInput.answers`, question text → answer (Claude Code's SDK hosts answer this way).
- ExitPlanMode: allow approves the plan (the work goes on in the default mode, each change
  asked of the tool again); deny keeps planning, with its message as the user's feedback.

Anything else fails closed (a No, or a declined question, that says why): the tool missing or
not an MCP tool, an error, an answer that is not that JSON.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

from agentcli.asking import Answers, PlanReview, PlanVerdict, QuestionsRequest
from agentcli.contracts import JSON, Tool
from agentcli.mcp.status import CallCancelled, CallTimedOut, ServerDown
from agentcli.mcp.tools import McpTool
from agentcli.permissions.prompt import Answer, PermissionRequest


class PromptToolAsker:
    """A `Prompter` and an `AsksTheUser`; `find` looks a tool up by name in the session's tools."""

    def __init__(self, name: str, find: Callable[[str], Tool | None]) -> None:
        self.name = name
        self.find = find

    def __call__(self, request: PermissionRequest) -> Answer:
        verdict = self._ask(request.tool, request.tool_input, request.cancel)
        if isinstance(verdict, str):
            return Answer.no(verdict)
        updated = verdict.get("updatedInput")
        if updated is not None and updated != request.tool_input:
            return Answer.no(f"{self.name} changed the call's input; agentcli runs only the call it judged.")
        return Answer.yes()

    def answer_questions(self, request: QuestionsRequest) -> Answers | None:
        questions = [
            {
                "question": question.question,
                "header": question.header,
                "options": [{"label": o.label, "description": o.description} for o in question.options],
                "multiSelect": question.multi_select,
            }
            for question in request.questions
        ]
        verdict = self._ask("AskUserQuestion", {"questions": questions}, request.cancel)
        updated = verdict.get("updatedInput") if isinstance(verdict, dict) else None
        answers = updated.get("answers") if isinstance(updated, dict) else None
        if not isinstance(answers, dict):
            return None
        wanted = [question.question for question in request.questions]
        if any(not isinstance(answers.get(text), str) for text in wanted):
            return None
        return {text: answers[text] for text in wanted}

    def review_plan(self, review: PlanReview) -> PlanVerdict:
        verdict = self._ask("ExitPlanMode", {"plan": review.plan}, review.cancel)
        if isinstance(verdict, str):
            return PlanVerdict(None, verdict)
        return PlanVerdict("default")

    def _ask(self, tool_name: str, tool_input: JSON, cancel: threading.Event | None) -> JSON | str:
        """The tool's allow verdict, or why the answer is No (a deny's message included)."""
        tool = self.find(self.name)
        if not isinstance(tool, McpTool):
            return f"--permission-prompt-tool {self.name} is not an MCP tool of this session."
        arguments = {"tool_name": tool_name, "input": tool_input}
        try:
            outcome = tool.manager.call_tool(
                tool.server, tool.info.name, arguments, cancel or threading.Event(), tool.call_timeout
            )
        except (ServerDown, CallCancelled, CallTimedOut) as error:
            return f"{self.name} did not answer: {error or type(error).__name__}"
        text = " ".join(outcome.texts)
        if outcome.is_error:
            return f"{self.name} answered with an error: {text[:500]}"
        try:
            verdict = json.loads(text)
        except ValueError:
            verdict = None
        behavior = verdict.get("behavior") if isinstance(verdict, dict) else None
        if behavior == "deny" and isinstance(verdict, dict):
            return str(verdict.get("message") or f"Denied by {self.name}.")
        if behavior != "allow" or not isinstance(verdict, dict):
            return f'{self.name} answered {text[:200]!r}, not {{"behavior": "allow" | "deny", …}}.'
        return verdict
