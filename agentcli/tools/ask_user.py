"""AskUserQuestion: the model asks the user one to four multiple-choice questions and waits.

Name, schema and answer format are Claude Code's, so models trained on it use it well: each
question has a `header`, the `question`, two to four `options` (`label`, `description`) and
`multiSelect`; the user may always pick "Other" and type their own answer. The result reads
`User has answered your questions: "Which library?"="httpx", "Which tests?"="Unit, Integration".
You can now continue with the user's answers in mind.`

The questions reach the user through the front end's `asking.AsksTheUser` (the REPL's pickers).
With none (`agentcli run`), or when the user declines (Esc), the call is an error result telling
the model to go on without the answers. A sub-agent has the tool only when its definition names
it (`agents.subagent`); its question says which agent asks.

Input the schema cannot check (how many questions and options, repeated texts) is an error
result naming the question and what to change; nothing is shown to the user then.
"""

from __future__ import annotations

from typing import Any

from agentcli.access import NOTHING, Access
from agentcli.asking import OTHER, Answers, AsksTheUser, Question, QuestionOption, QuestionsRequest
from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.tools.base import BuiltinTool, ToolError, prose

NAME = "AskUserQuestion"
MAX_QUESTIONS = 4
MIN_OPTIONS, MAX_OPTIONS = 2, 4
NOBODY_TO_ANSWER = (
    "No one can answer questions here: this is a non-interactive run (agentcli run), so the questions were not "
    "shown. Do not ask again. Make the choice yourself, the one the request and the code support best, say "
    "which you chose and why, and go on; or, if you cannot go on without the user, stop and say what you need."
)
DECLINED = (
    "The user declined to answer these questions. Do not ask them again: stop and wait for the user to tell "
    "you how to proceed."
)


def parse_questions(value: Any) -> tuple[Question, ...]:
    """The questions of an AskUserQuestion input; ToolError says what is wrong and what to change."""
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_QUESTIONS:
        count = len(value) if isinstance(value, list) else 0
        raise _invalid(
            f"ask between one and {MAX_QUESTIONS} questions in a call, not {count}; keep the ones whose answers "
            "change what you do next"
        )
    questions = tuple(_question(item, number) for number, item in enumerate(value, 1))
    seen: set[str] = set()
    for number, question in enumerate(questions, 1):
        if question.question in seen:
            raise _invalid(f"question {number} repeats an earlier question's text; each question must be distinct")
        seen.add(question.question)
    return questions


def _question(item: Any, number: int) -> Question:
    if not isinstance(item, dict):
        raise _invalid(f"question {number} must be an object with question, header, options and multiSelect")
    text = _text(item.get("question"), f"question {number} needs its `question` text")
    header = _text(item.get("header"), f'question {number} needs a short `header` (e.g. "Auth method")')
    options = item.get("options")
    if not isinstance(options, list) or len(options) < MIN_OPTIONS:
        count = len(options) if isinstance(options, list) else 0
        raise _invalid(
            f"question {number} has {count} option{'' if count == 1 else 's'}, so it was not shown: a question "
            "needs two to four genuinely distinct options. Do not add a filler option: take the path you would "
            "have offered, say so, and go on (ask the other questions again on their own if they still matter)"
        )
    if len(options) > MAX_OPTIONS:
        raise _invalid(
            f"question {number} has {len(options)} options; give two to four (the user can always type their "
            f'own answer through "{OTHER}", which is added for you)'
        )
    parsed = tuple(_option(option, number, index) for index, option in enumerate(options, 1))
    labels = [option.label for option in parsed]
    if len(set(labels)) < len(labels):
        raise _invalid(f"question {number} has two options with the same label; each label must be distinct")
    multi = item.get("multiSelect", False)
    if not isinstance(multi, bool):
        raise _invalid(f"question {number}: `multiSelect` must be true or false")
    return Question(text, header, parsed, multi)


def _option(item: Any, number: int, index: int) -> QuestionOption:
    if not isinstance(item, dict):
        raise _invalid(f"option {index} of question {number} must be an object with a label and a description")
    label = _text(item.get("label"), f"option {index} of question {number} needs a `label`")
    description = item.get("description", "")
    if not isinstance(description, str):
        raise _invalid(f"option {index} of question {number}: `description` must be a string")
    return QuestionOption(label, description.strip())


def _text(value: Any, problem: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _invalid(problem)
    return value.strip()


def _invalid(problem: str) -> ToolError:
    return ToolError(
        f"Invalid input for {NAME}: {problem}. Nothing was shown to the user; fix the input and call it again.",
        failure="invalid_input",
    )


def answered(questions: tuple[Question, ...], answers: Answers) -> str:
    """The result the model reads, as Claude Code words it."""
    pairs = ", ".join(f'"{q.question}"="{answers.get(q.question, "")}"' for q in questions)
    return f"User has answered your questions: {pairs}. You can now continue with the user's answers in mind."


class AskUserQuestionTool(BuiltinTool):
    name = NAME
    concurrency = "exclusive"  # one question on screen at a time, in the model's order
    description = prose(
        """\
Ask the user one to four multiple-choice questions and wait for the answers. Only for a decision that
  is genuinely the user's (an approach, an ambiguous requirement, a preference) and that the request,
  the code and sensible defaults do not settle; for a choice with a conventional default, or a fact you
  can check, pick the obvious option, say which, and go on.
- The user can always pick "Other" and type an answer: do not add an "Other" option.
- Put a recommended option first, with "(Recommended)" at the end of its label.
- In plan mode, settle requirements or the approach with it; never ask whether the plan is ready or
  may go ahead: that is ExitPlanMode's job (the user sees the plan only then).
- Where no one can answer (a non-interactive run) the call fails: choose yourself and say which."""
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "description": "1-4 questions",
                "minItems": 1,
                "maxItems": MAX_QUESTIONS,
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "description": "The complete question, ending with '?'"},
                        "header": {"type": "string", "description": "Short label, max 12 chars: 'Auth method'"},
                        "options": {
                            "type": "array",
                            "description": "2-4 distinct choices ('Other' is added for you)",
                            "minItems": MIN_OPTIONS,
                            "maxItems": MAX_OPTIONS,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "label": {"type": "string", "description": "1-5 words"},
                                    "description": {"type": "string", "description": "What it means; trade-offs"},
                                },
                                "required": ["label", "description"],
                            },
                        },
                        "multiSelect": {
                            "type": "boolean",
                            "default": False,
                            "description": "Let the user pick several options",
                        },
                    },
                    "required": ["question", "header", "options"],
                },
            }
        },
        "required": ["questions"],
    }

    def __init__(self, asker: AsksTheUser | None) -> None:
        """`asker`: the front end's, through which the user answers; None: nobody can."""
        self.asker = asker

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        """It changes nothing and runs nothing: no permission needed, allowed in plan mode."""
        return NOTHING

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        questions = parse_questions(tool_input.get("questions"))
        if self.asker is None:
            raise ToolError(NOBODY_TO_ANSWER)
        answers = self.asker.answer_questions(QuestionsRequest(questions, agent=ctx.agent_label, cancel=ctx.cancel))
        if answers is None:
            raise ToolError(DECLINED)
        summary = "\n".join(f"{q.header}: {answers.get(q.question, '')}" for q in questions)
        return ToolResult(answered(questions, answers), summary=summary)
