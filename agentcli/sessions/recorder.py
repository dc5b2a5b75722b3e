"""Recording a conversation in its transcript, as a subscriber to its agent's events.

Each `MessageAdded` becomes a `message` line (format: `sessions.transcript`) carrying what goes
with that message: the prompt's reminders and user turn number, the tokens spent since the last
line that said (`usage`), an answer's `context_tokens`, and a tool-results message's `todos` and `read_files`
when that turn changed them, and its `subagents` (Task call id → the sub-agent's transcript, from
`SubagentFinished`). The first prompt goes before it as the `title`, and a plan the user
approved in that turn (ExitPlanMode) as a `plan` record. An answer makes the transcript worth
keeping (`TranscriptWriter.keep`).

For `agentcli stats` it also writes what the events say about how the work went: each model
request's timing (`ModelResponded`) as `requests` on the next record, each tool call's duration
and failure kind (`ToolCallFinished`) as `calls` on its results message, and, when the session
says a run ended (`record_run`), a `run` record with why it stopped and how many turns it took.

The session tells the recorder what only it knows (the title, the reminders sent with a prompt)
and has it write a compaction's boundary, whose `usage` is the summary request's.
"""

from __future__ import annotations

from dataclasses import asdict

from agentcli.contracts import JSON, FileRecords
from agentcli.errors import BudgetExceeded, MaxTurnsReached, ModelAPIError, ModelStopped, NoProgress, StoppedByHook
from agentcli.events import Event, MessageAdded, ModelResponded, SubagentFinished, ToolCallFinished
from agentcli.loop import Agent
from agentcli.sessions.compact import Compacted
from agentcli.sessions.transcript import TITLE_CHARS, TranscriptWriter, now
from agentcli.tools.exit_plan import ApprovedPlans
from agentcli.tools.todo import TodoList


class TranscriptRecorder:
    """Writes `agent`'s conversation to `transcript` as it grows; subscribe it to the agent."""

    def __init__(
        self,
        transcript: TranscriptWriter,
        agent: Agent,
        todos: TodoList,
        read_files: FileRecords,
        *,
        titled: bool,
        plans: ApprovedPlans | None = None,
    ) -> None:
        """`todos` is the conversation's task list and `plans` its approved plans, as recorded so
        far; `read_files`, its tools' records of the files they saw; `titled`: the transcript has
        its title already (a resumed one)."""
        self.transcript = transcript
        self.agent = agent
        self.todos = todos
        self.read_files = read_files
        self._todos_recorded = todos.version
        """The task list version last written to the transcript."""
        self.plans = plans
        self._plans_recorded = plans.version if plans is not None else 0
        self._usage_recorded = agent.usage.as_dict()
        """The agent's usage (`Usage.as_dict()`) as of the last record that carries `usage`."""
        self._title_due = not titled
        self._title: str | None = None
        """The first prompt, written with the next message."""
        self._prompt_reminders: dict[str, str] | None = None
        """Reminder state after the prompt being sent, recorded with it."""
        self._prompt_turn = 0
        """The number of the user turn the prompt being sent starts, recorded with it."""
        self._subagents: dict[str, str] = {}
        """Task call id → its sub-agent's transcript, recorded with the next tool results."""
        self._requests: list[JSON] = []
        """The model requests answered since the last record that listed them."""
        self._calls: dict[str, JSON] = {}
        """Tool call id → its duration and failure kind, recorded with the next tool results."""
        self._turns = 0
        """Model requests answered since the last `run` record."""

    def __call__(self, event: Event) -> None:
        if isinstance(event, MessageAdded):
            self.record(event.message)
        elif isinstance(event, ModelResponded):
            self._turns += 1
            self._requests.append(
                {
                    "model": event.model,
                    "stop_reason": event.stop_reason,
                    "first_token_ms": None if event.first_token is None else _ms(event.first_token),
                    "duration_ms": _ms(event.duration),
                    "retries": event.retries,
                }
            )
        elif isinstance(event, ToolCallFinished):
            call: JSON = {} if event.duration is None else {"ms": _ms(event.duration)}
            if event.result.failure is not None:
                call["failure"] = event.result.failure
            self._calls[event.id] = call
        elif isinstance(event, SubagentFinished) and event.transcript is not None:
            self._subagents[event.parent_tool_use_id] = event.transcript

    def offer_title(self, prompt: str) -> None:
        """`prompt` is about to be sent: the transcript's title, unless it has one already."""
        if self._title_due:
            self._title = prompt.strip()

    def prompt_reminders(self, snapshot: dict[str, str], turn: int) -> None:
        """The reminder state (`ReminderTracker.snapshot`) and the user turn's number
        (`ToolContext.user_turn`) to record with the next user message, the prompt."""
        self._prompt_reminders = snapshot
        self._prompt_turn = turn

    def record(self, message: JSON) -> None:
        """The transcript line for a message that just joined the conversation."""
        if self._title is not None:
            self.transcript.write({"type": "title", "time": now(), "title": self._title[:TITLE_CHARS]})
            self._title = None
            self._title_due = False
        self._record_plan()
        record: JSON = {"type": "message", "time": now(), "message": message, **self._unrecorded_timing()}
        answered = message["role"] == "assistant"
        if answered:
            record["context_tokens"] = self.agent.context_tokens
        else:
            if self._prompt_reminders is not None:
                record["reminders"] = self._prompt_reminders
                record["turn"] = self._prompt_turn
                self._prompt_reminders = None
            if self.todos.version != self._todos_recorded:  # TodoWrite ran in the turn these results answer
                self._todos_recorded = self.todos.version
                record["todos"] = [t.as_json() for t in self.todos.items]
            if reads := self.read_files.take_changes():  # files read or written in that turn
                record["read_files"] = {str(path): asdict(seen) for path, seen in reads.items()}
            if self._subagents:
                record["subagents"], self._subagents = self._subagents, {}
            if self._calls:
                record["calls"], self._calls = self._calls, {}
        self.transcript.write(record)
        if answered:
            self.transcript.keep()

    def _record_plan(self) -> None:
        """A `plan` record for the plan approved since the last one (before the results that say so)."""
        if self.plans is None or self.plans.version == self._plans_recorded:
            return
        self._plans_recorded = self.plans.version
        if (plan := self.plans.latest) is not None:
            self.transcript.write({"type": "plan", "time": now(), "plan": plan.text, "mode": plan.mode})

    def record_compaction(self, result: Compacted, *, auto: bool, reminders: dict[str, str]) -> None:
        """The `compact` boundary, then the new conversation (the agent has adopted it already)."""
        self.transcript.write(
            {
                "type": "compact",
                "time": now(),
                "trigger": "auto" if auto else "manual",
                "cleared": result.cleared,
                "summarised": result.summarised,
                "tokens_before": result.tokens_before,
                "tokens_after": result.tokens_after,
                "context_tokens": self.agent.context_tokens,
                "reminders": reminders,
                **self._unrecorded_timing(),  # the summary's usage
            }
        )
        for message in result.messages:
            self.transcript.write({"type": "message", "time": now(), "message": message})
        self.transcript.sync()

    def record_run(self, stopped: BaseException | None) -> None:
        """A run (one prompt through the loop) ended: done when `stopped` is None, else by it."""
        record: JSON = {"type": "run", "time": now(), "stop": stop_reason(stopped), "turns": self._turns}
        self._turns = 0
        self.transcript.write({**record, **self._unrecorded_timing()})

    def _unrecorded_timing(self) -> JSON:
        """The usage and the model requests not yet recorded, as a record's `usage` and `requests`."""
        fields = self._unrecorded_usage()
        if self._requests:
            fields["requests"], self._requests = self._requests, []
        return fields

    def _unrecorded_usage(self) -> JSON:
        """`{"usage": …}`, the tokens used since the last record that said: nothing when none were."""
        spent, recorded = self.agent.usage.as_dict(), self._usage_recorded
        if spent == recorded:
            return {}
        self._usage_recorded = spent
        return {"usage": {key: spent[key] - recorded.get(key, 0) for key in spent}}


STOPS: tuple[tuple[type[BaseException], str], ...] = (
    (MaxTurnsReached, "max_turns"),
    (BudgetExceeded, "budget"),
    (NoProgress, "no_progress"),
    (ModelStopped, "model_stopped"),
    (StoppedByHook, "hook"),
    (ModelAPIError, "api_error"),
    (KeyboardInterrupt, "interrupted"),  # Ctrl-C, Esc, a signal (`errors.Halt`), a parent's interrupt
)


def stop_reason(stopped: BaseException | None) -> str:
    """How a run ended, in the word its `run` record holds: `done` when nothing stopped it, and
    `error` for anything not in `STOPS` (a bug, a failed write)."""
    if stopped is None:
        return "done"
    return next((name for kind, name in STOPS if isinstance(stopped, kind)), "error")


def _ms(seconds: float) -> int:
    return round(seconds * 1000)
