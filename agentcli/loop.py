"""The agent loop: stream a turn, run the tools it asked for, send every result back, repeat.

UI-agnostic: it reports through events (`agentcli.events`) and never prints. Control leaves
through the typed exceptions in `agentcli.errors`. An `Agent` is a plain value, so a sub-agent
is just a second instance; build one with `agentcli.agents.build_agent`, and `close` it when
done (its tool threads).

Whatever keeps track of the conversation subscribes to its events (`subscribe`) instead of
being called back through attributes: the transcript records each `MessageAdded`, and
auto-compaction may replace the conversation (`replace_conversation`) on `TurnStarting`,
before the request is built. What its owner changes from outside goes through its methods
(`configure`, `add_tools`, `add_usage`, `replace_conversation`); its state is read, never assigned.

When the model answers without tools, the Stop hooks (SubagentStop for a sub-agent) run: a
block, or their `additionalContext`, is sent back as a user message and the loop goes on, at
most `MAX_STOP_HOOK_CONTINUATIONS` times in a row (`stop_hook_active` is true on each repeat),
as in Claude Code. A hook's `continue: false` ends the turn with `StoppedByHook`. A tool result
with a `final_answer` ends the turn too, with that answer, once its calls are answered (the model
is not asked again).

Every request is drawn from the run's `Budget` (`agentcli.budget`), shared with the sub-agents:
none is sent once the budget is passed, and a turn that passed it does not run its tools.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from agentcli.budget import Budget, Prices
from agentcli.contracts import (
    JSON,
    Cancellation,
    Model,
    ModelRequest,
    ModelResponse,
    Tool,
    ToolCall,
    ToolContext,
    ToolResult,
    Usage,
)
from agentcli.conversation import (
    assistant_message,
    blocks_of,
    is_text,
    is_tool_use,
    response_calls,
    text_block,
    text_of,
    tool_calls,
    user_message,
)
from agentcli.errors import (
    BudgetExceeded,
    Cancelled,
    CostBudgetExceeded,
    MaxTurnsReached,
    ModelAPIError,
    ModelStopped,
    NoProgress,
    StoppedByHook,
    TransientModelError,
)
from agentcli.events import (
    MAIN_AGENT,
    AssistantMessage,
    Event,
    EventSink,
    MessageAdded,
    ModelResponded,
    Notice,
    ReasoningDelta,
    Retrying,
    TextDelta,
    ToolCallStreaming,
    TurnStarting,
)
from agentcli.executor import ToolExecutor, close_pending
from agentcli.progress import ProgressWatch
from agentcli.providers.retry import RetryPolicy
from agentcli.safe_text import for_conversation

INTERRUPTED_MARKER = "[Request interrupted by user]"
MAX_STOP_HOOK_CONTINUATIONS = 8
"""How many times in a row a Stop hook may keep the model going for one user message."""


@dataclass
class LoopConfig:
    model: str
    max_output_tokens: int = 32_000
    """max_tokens for an ordinary turn."""
    model_max_output_tokens: int = 64_000
    """The model's ceiling: a turn cut off inside a tool call is retried once with this."""
    max_turns: int | None = None
    max_retries: int = 3
    """How often a failed request (overloaded, rate limited, a broken stream…) is tried again."""
    retry_base_delay: float = 1.0
    """The first backoff wait, doubled for each retry (see `agentcli.providers.retry`)."""
    pause_turn_limit: int = 5
    prices: Prices | None = None
    """What this agent's requests cost, as the budget counts them (None: nothing in dollars)."""


@dataclass
class RunResult:
    text: str
    num_turns: int
    usage: Usage = field(default_factory=Usage)


class Agent:
    """One conversation's loop: its messages, tools, gate and model."""

    def __init__(
        self,
        *,
        model: Model,
        executor: ToolExecutor,
        config: LoopConfig,
        system: list[JSON],
        on_event: EventSink,
        ctx: ToolContext,
        agent_id: str = MAIN_AGENT,
        budget: Budget | None = None,
    ) -> None:
        """`on_event` is the front end's sink; `agent_id` goes on every event this agent emits.
        `budget` is the run's, shared with the agents it runs beside (None: one of its own, with
        the default limits); every request this agent makes is drawn from it."""
        self._model = model
        self.executor = executor
        self._config = config
        self.system = system
        self.ctx = ctx
        self.agent_id = agent_id
        self._messages: list[JSON] = []
        self.budget = budget or Budget()
        self.usage = Usage()
        """Tokens this agent spent (its sub-agents' and a compaction's summary included, `add_usage`)."""
        self._context_tokens = 0
        self._turn_model: str | None = None
        """The model of the current run, when it is not the configured one (`run(model=...)`)."""
        self._subscribers: list[EventSink] = []
        self._front_end = on_event

    @property
    def messages(self) -> Sequence[JSON]:
        """The conversation so far (changed only by this agent, or as a whole by `replace_conversation`)."""
        return self._messages

    @property
    def context_tokens(self) -> int:
        """Tokens the conversation occupies in the context window, as of the latest turn."""
        return self._context_tokens

    @property
    def config(self) -> LoopConfig:
        return self._config

    @property
    def model_name(self) -> str:
        """The model requests go to now: the current run's (`run(model=...)`), else the configured one."""
        return self._turn_model or self._config.model

    def configure(self, config: LoopConfig) -> None:
        """Use `config` from the next request on (`/model`: another model and its limits)."""
        self._config = config

    def add_tools(self, tools: Iterable[Tool]) -> None:
        """Offer `tools` too from the next request on (the MCP servers' tools, fixed at the first)."""
        for tool in tools:
            self.executor.registry.register(tool)

    def add_usage(self, usage: Usage) -> None:
        """Count `usage`, spent for this conversation outside its loop (a sub-agent, a compaction's summary)."""
        self.usage.add(usage)

    def replace_conversation(self, messages: list[JSON], context_tokens: int) -> None:
        """Go on from `messages` (a resumed transcript's, a compacted conversation), which occupy
        `context_tokens` of the context window (0: not measured yet). The list is taken as it is;
        the one it replaces is left unchanged (its messages were sent as they were)."""
        self._messages = messages
        self._context_tokens = context_tokens

    def tool_definitions(self) -> list[JSON]:
        """The tools' definitions as every request carries them."""
        return self.executor.manifest()

    def subscribe(self, sink: EventSink) -> None:
        """Hand every event to `sink` too, synchronously, before the front end sees it (so what
        is on screen is already recorded). Subscribers are called in the order they subscribed."""
        self._subscribers.append(sink)

    def emit(self, event: Event) -> None:
        """Report `event`, stamped with this agent's id, to the subscribers and then the front end."""
        if event.agent_id != self.agent_id:
            event = replace(event, agent_id=self.agent_id)
        for sink in self._subscribers:
            sink(event)
        self._front_end(event)

    def tool_names(self) -> list[str]:
        """The tools the model is offered, in manifest order."""
        return self.executor.registry.names()

    def close(self) -> None:
        """Release what this agent holds (its tool threads); the model is its owner's to close."""
        self.executor.close()

    def run(self, user_content: list[JSON], *, model: str | None = None) -> RunResult:
        """Send one user message and loop until the model answers without tools; `model`: the
        model for this run only (a skill's), else the configured one."""
        self._turn_model = model
        try:
            return self._run(user_content)
        finally:
            self._turn_model = None

    def _run(self, user_content: list[JSON]) -> RunResult:
        self.ctx.cancel.clear()  # an interrupt of the previous turn must not cancel this one
        self.add_message(user_message([_safe_block(block) for block in user_content]))
        turns = 0
        pauses = 0
        watch = ProgressWatch()
        boost = False
        continued = 0
        """Times a Stop hook sent the model back to work for this message."""
        while True:
            self._stop_if_cancelled()
            self.emit(TurnStarting())
            response = self._complete_turn(self.config.model_max_output_tokens if boost else None)
            turns += 1
            boosted, boost = boost, False
            stop = response.stop_reason
            if stop == "pause_turn":
                self._append_assistant(response)
                pauses += 1
                if pauses > self.config.pause_turn_limit:
                    raise ModelStopped(f"The model paused {pauses} times in a row; stopping.")
                continue
            pauses = 0
            if stop == "max_tokens":
                cut = self._cut_off(response, boosted)
                if cut is None:
                    boost = response.incomplete_block is not None and not boosted
                    continue
                response = cut
            elif stop == "model_context_window_exceeded":
                self._finish_without_tools(response, "the context window is full")
                raise ModelStopped(
                    "The conversation no longer fits the model's context window. "
                    "Start a new conversation (or compact this one)."
                )
            elif stop == "refusal":
                self._finish_without_tools(response, "the model declined")
                raise ModelStopped("The model declined to continue with this request (refusal).")
            self._append_assistant(response)
            calls = response_calls(response)
            if not calls:
                if self._stop_hook_continues(response, continued):
                    continued += 1
                    continue
                return RunResult(text_of(response.content), turns, self.usage)
            self._check_limits(turns)
            results, final_answer = self._run_tools(calls, response.invalid_inputs)
            if why := self.executor.take_stop():
                raise StoppedByHook(f"A hook stopped the turn: {why}")
            if final_answer is not None:
                return RunResult(final_answer, turns, self.usage)
            if reason := watch.observe(calls, results, malformed=bool(response.invalid_inputs)):
                raise NoProgress(reason)

    def _stop_hook_continues(self, response: ModelResponse, continued: int) -> bool:
        """Run the Stop (or SubagentStop) hooks; True when they sent the model back to work
        (`continued` times already for this message)."""
        event = "Stop" if self.agent_id == MAIN_AGENT else "SubagentStop"
        fields = {"stop_hook_active": continued > 0, "last_assistant_message": text_of(response.content)}
        said = self.executor.hooks.run(event, fields, self.executor.hooks.agent_type)
        feedback = [*([said.reason] if said.blocked else []), *said.context]
        if said.stop or not feedback:
            return False
        if continued >= MAX_STOP_HOOK_CONTINUATIONS:
            self.emit(
                Notice(
                    f"A {event} hook kept the model going {continued} times in a row, the most it may; "
                    f"stopping anyway. It said: {feedback[0]}"
                )
            )
            return False
        self.add_message(user_message([text_block(f"{event} hook feedback:\n{text}") for text in feedback]))
        return True

    def add_message(self, message: JSON) -> None:
        """Append `message` to the conversation; subscribers see it as `MessageAdded`."""
        self._messages.append(message)
        self.emit(MessageAdded(message))

    # ------------------------------------------------------------------ one turn

    def _complete_turn(self, max_tokens: int | None = None) -> ModelResponse:
        """Stream one assistant turn, retrying transient faults; each wait is a `Retrying` event."""
        request = ModelRequest(
            model=self.model_name,
            system=self.system,
            tools=self.executor.manifest(),
            messages=self._messages,
            max_tokens=max_tokens or self.config.max_output_tokens,
        )
        reservation = self.budget.reserve(self.config.prices)  # nothing is sent once the run's budget is passed
        policy = RetryPolicy(self.config.max_retries, self.config.retry_base_delay)
        attempt = 0
        while True:
            listener = _StreamEvents(self.emit, self.ctx.cancel)
            try:
                response = self._model.stream(request, listener)
                break
            except TransientModelError as error:
                self._stop_if_cancelled()  # the stream broke off because the user interrupted: no retry
                attempt += 1
                if attempt > policy.max_retries:
                    raise ModelAPIError(
                        f"{_capitalised(str(error))} (still failing after "
                        f"{_plural(policy.max_retries, 'retry', 'retries')})",
                        status=error.status,
                        hint=error.hint or "Try again in a moment.",
                        request_id=error.request_id,
                    ) from error
                delay = policy.delay(attempt, error.retry_after)
                self.emit(Retrying(attempt, delay, str(error), error.fault, policy.max_retries))
                self.ctx.cancel.wait(delay)  # a sub-agent's wait ends when the user interrupts
                self._stop_if_cancelled()
        self.usage.add(response.usage)
        reservation.charge(response.usage)
        self._context_tokens = response.usage.total_input + response.usage.output_tokens
        self.emit(listener.responded(request.model, response.stop_reason, attempt))
        return response

    def _cut_off(self, response: ModelResponse, boosted: bool) -> ModelResponse | None:
        """Handle stop_reason max_tokens; a tool call that was cut off is never run.

        First the turn is retried with the model's full output limit (the partial message
        is discarded); if that is cut off too, complete calls before the cut are kept and the
        model is told to go on in smaller steps. Returns the response to go on with, or None
        when the loop should ask again.
        """
        if response.incomplete_block is None:
            self.emit(Notice("The answer was cut off at the output token limit."))
            return response
        if not boosted and self.config.max_output_tokens < self.config.model_max_output_tokens:
            self.emit(Notice("A tool call was cut off at the output limit; retrying with a larger limit."))
            return None
        self.emit(Notice("A tool call was cut off at the output limit and was not run."))
        kept = response.content[: response.incomplete_block]
        if any(is_tool_use(block) for block in kept):
            return ModelResponse(kept, "tool_use", response.usage, invalid_inputs=response.invalid_inputs)
        if kept:
            self._append_assistant(ModelResponse(kept, "max_tokens", response.usage))
        note = (
            "Your previous response was cut off at the output token limit while writing a tool "
            "call, so that call was not run. Continue, splitting large content into smaller steps."
        )
        self.add_message(user_message([text_block(note)]))
        return None

    def _append_assistant(self, response: ModelResponse) -> None:
        message = assistant_message(response.content)
        if response.content:
            self.add_message(message)
        self.emit(AssistantMessage(message, response.stop_reason, response.usage))

    def _finish_without_tools(self, response: ModelResponse, why: str) -> None:
        """Keep what the model said, answering any complete tool call with a not-run result."""
        end = response.incomplete_block if response.incomplete_block is not None else len(response.content)
        response = ModelResponse(response.content[:end], response.stop_reason, response.usage)
        self._append_assistant(response)
        if response.content:
            self._close_pending(f"Not run: {why}.")

    # ----------------------------------------------------------------- tools

    def _check_limits(self, turns: int) -> None:
        limit = self.config.max_turns
        if limit is not None and turns >= limit:
            self._close_pending(f"Not run: the turn limit ({limit}) was reached.")
            raise MaxTurnsReached(f"Reached the turn limit (--max-turns {limit}) before the task was done.")
        try:
            self.budget.check()
        except BudgetExceeded as passed:
            which = "cost" if isinstance(passed, CostBudgetExceeded) else "token"
            self._close_pending(f"Not run: the {which} budget was used up.")
            raise

    def _run_tools(self, calls: list[ToolCall], invalid_inputs: dict[str, str]) -> tuple[list[JSON], str | None]:
        """Every call's result block, in call order, and the first call's `final_answer` (None: the turn goes on)."""
        done: dict[str, ToolResult] = {}
        if self.ctx.cancel.is_set():  # interrupted while the turn streamed in: none of its calls runs
            self._add_interrupted(calls, done)
            raise Cancelled("Interrupted by the user.")
        try:
            results = self.executor.run_all(calls, self.ctx, self.emit, done, invalid_inputs)
        except KeyboardInterrupt:
            # Answered before the cancel stops the calls still running: a sub-agent's Task call
            # reports what it had done, which it can only while it runs.
            try:
                self._add_interrupted(calls, done)
            finally:
                self.ctx.cancel.set()
            raise
        self.add_message(user_message(results))
        self.executor.announce(self._messages[-1], self.emit)
        self._stop_if_cancelled()
        final = (done[call.id].final_answer for call in calls if call.id in done)
        return results, next((answer for answer in final if answer is not None), None)

    def _stop_if_cancelled(self) -> None:
        """A sub-agent runs outside the main thread, where Ctrl-C raises nothing: its cancel event
        (linked to its parent's) says the user interrupted, and it stops here, between steps."""
        if self.ctx.cancel.is_set():
            raise Cancelled("Interrupted by the user.")

    def _close_pending(self, why: str) -> None:
        last = self._messages[-1] if self._messages else None
        if last and last["role"] == "assistant" and (results := close_pending(last, why)):
            self.add_message(user_message(results))
            self.executor.announce(self._messages[-1], self.emit)

    def record_interrupt(self) -> None:
        """After Ctrl-C outside tool execution: keep the conversation valid for the next message."""
        last = self._messages[-1] if self._messages else None
        if last and last["role"] == "user" and text_of(blocks_of(last)[-1:]) == INTERRUPTED_MARKER:
            return
        unanswered = last["content"] if last and last["role"] == "assistant" else []
        self._add_interrupted(tool_calls(unanswered), {})

    def _add_interrupted(self, calls: list[ToolCall], done: dict[str, ToolResult]) -> None:
        """The user message after an interrupt: a result for each of `calls`, then the marker."""
        results = self.executor.interrupted(calls, done, self.emit)
        self.add_message(user_message([*results, text_block(INTERRUPTED_MARKER)]))


class _StreamEvents:
    """The `StreamListener` the loop hands the model for one attempt: what it reports becomes
    events, and it times the attempt (`responded`)."""

    def __init__(self, emit: EventSink, cancel: Cancellation) -> None:
        self.emit = emit
        self.cancel = cancel
        self._sent = time.monotonic()
        self._first: float | None = None

    def text(self, delta: str) -> None:
        if delta and self._first is None:
            self._first = time.monotonic()
        self.emit(TextDelta(delta))

    def tool_call_started(self, name: str) -> None:
        if self._first is None:
            self._first = time.monotonic()
        self.emit(ToolCallStreaming(name))

    def reasoning(self, delta: str) -> None:
        if self._first is None:
            self._first = time.monotonic()
        self.emit(ReasoningDelta(delta))

    def responded(self, model: str, stop_reason: str, retries: int) -> ModelResponded:
        """The attempt's timing, now that its whole response is in."""
        first = None if self._first is None else self._first - self._sent
        return ModelResponded(model, stop_reason, first, time.monotonic() - self._sent, retries)


def _safe_block(block: JSON) -> JSON:
    """A user text block made safe for the conversation (typed text, a skill's expansion, reminders)."""
    if not is_text(block):
        return block
    text = str(block.get("text", ""))
    safe = for_conversation(text)
    return block if safe == text else {**block, "text": safe}


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]
