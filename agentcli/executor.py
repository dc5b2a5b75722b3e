"""Running one turn's tool calls: look up, validate, ask the gate, announce, run, cap, answer in order.

Neighbouring calls of tools that declare `shared` concurrency (the ones that only read) run
concurrently, and so do neighbouring calls of a tool that declares them `independent` (Task:
each call is a conversation of its own; see `contracts.concurrency_group`); anything else runs
alone, in the order the model gave. Results always come back in call order, one per call, made
safe for the conversation (`safe_text.for_conversation`: valid Unicode, credentials redacted)
and capped.

Events, per call: `ToolCallStarted` before the gate judges it, `ToolCallRunning` once it is
admitted and its tool starts, `ToolCallFinished` with its result (and how long the tool ran).
A batch of concurrent calls reports every `ToolCallRunning` first and then every
`ToolCallFinished` in call order (a denied call's too), so a front end can print each call with
its result and never interleave.
After an interrupt, `interrupted` reports every call that had not finished.

A stand-in tool (`contracts.Dispatches`: `McpCall` for a deferred MCP tool) names the tool a
call means; from there on the call is that tool's: validated against its schema, hooked, gated
and run as it.

Hooks (`agentcli.hooks`): PreToolUse hooks run after a call's input is validated and before the
gate judges it (a block or `deny` is the call's error result; `updatedInput` is validated again
and is what runs; `allow`/`ask` go to the gate on the call's context); PostToolUse (or
PostToolUseFailure, for an error result) hooks run after the tool, and what they say is added
to its result. A hook's `continue: false` is kept for the loop (`take_stop`).

`close` waits for every call still running on the executor's threads, by its own count: the
pool's record of its threads misses one whose start a Ctrl-C interrupted (KeyboardInterrupt can
land in the main thread inside `submit`, after the thread has started and before the pool notes
it), and that call may be a sub-agent that has yet to report its end. A call that had not
started by then never runs: it was answered as interrupted already.

Each call runs with its own copy of the ToolContext carrying its id and the real paths the gate
judged (`Decision.checked_paths`), so the tool touches exactly what was checked; the copy shares
the session's state (read-file records, the cancel event, the workspace) with every other call.
Before a call the gate allowed runs, and before any call of its batch runs, the workspace is
told when it may change something (`contracts.before_running`, `Workspace.before_change`): a
checkpoint, say, is taken then; a workspace that refuses makes that call's error result.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from types import MappingProxyType

from agentcli.access import Access
from agentcli.context.reminders import system_reminder
from agentcli.contracts import (
    JSON,
    CapsOwnOutput,
    Dispatches,
    FromMcpServer,
    HookPermission,
    PermissionGate,
    ReportsInterruption,
    Tool,
    ToolCall,
    ToolContext,
    ToolResult,
    before_running,
    concurrency_group,
)
from agentcli.conversation import text_block, tool_calls, tool_result_block, with_result_content
from agentcli.events import EventSink, ToolCallFinished, ToolCallRunning, ToolCallStarted, ToolResultsMessage
from agentcli.hooks import NO_HOOKS, HookOutcome, Hooks
from agentcli.mcp.names import claude_code_name
from agentcli.permissions.evaluate import rule_names_call
from agentcli.permissions.rules import Rule
from agentcli.safe_text import for_conversation
from agentcli.tools.registry import ToolRegistry
from agentcli.tools.schema import validation_error, with_whole_numbers
from agentcli.truncate import TOOL_OUTPUT_LIMIT, cap_middle
from agentcli.workspace.contract import WorkspaceError

MAX_PARALLEL = 8
WAKE_EVERY_S = 0.1
"""While the main thread waits for concurrent calls it wakes this often, so a Ctrl-C is handled
within it: one that arrives just as the thread goes to sleep on a lock is otherwise held until
the lock is released (a CPython race), here until the call ends."""
NO_INVALID_INPUTS: Mapping[str, str] = MappingProxyType({})
_Admitted = tuple[Tool, JSON, ToolContext, Access | None] | ToolResult
"""The tool, input, context and judged access to run a call with, or the error result when it may not run."""
INTERRUPTED = ToolResult(
    "Interrupted by the user before this call finished.", is_error=True, summary="Interrupted", failure="interrupted"
)


def tool_result(call_id: str, result: ToolResult) -> JSON:
    """The conversation's block answering the call `call_id` with `result` (its images after its text)."""
    block = tool_result_block(call_id, result.content, is_error=result.is_error)
    if result.images:
        block = with_result_content(block, [text_block(result.content), *result.images])
    return block


def close_pending(assistant: JSON, why: str) -> list[JSON]:
    """Error results for every tool call in `assistant`, for calls that will never run."""
    return [tool_result(call.id, ToolResult(why, is_error=True)) for call in tool_calls(assistant["content"])]


class ToolExecutor:
    """Owns the registry and the gate; the loop hands it each turn's tool calls."""

    def __init__(self, registry: ToolRegistry, gate: PermissionGate, hooks: Hooks = NO_HOOKS) -> None:
        self.registry = registry
        self.gate = gate
        self.hooks = hooks
        self._stop: str | None = None
        self._pool = ThreadPoolExecutor(MAX_PARALLEL, thread_name_prefix="tool")
        self._on_threads = threading.Condition()
        """Guards the count of calls running on the pool's threads, and `_closed`."""
        self._running_on_threads = 0
        self._closed = False

    def close(self) -> None:
        """Stop the worker threads once the calls still running on them have finished."""
        with self._on_threads:
            self._closed = True
            self._on_threads.wait_for(lambda: self._running_on_threads == 0)
        self._pool.shutdown()

    def take_stop(self) -> str | None:
        """Why a hook said the agent should stop (`continue: false`) during the last calls, once."""
        why, self._stop = self._stop, None
        return why

    def manifest(self) -> list[JSON]:
        return self.registry.manifest()

    def run_all(
        self,
        calls: Sequence[ToolCall],
        ctx: ToolContext,
        emit: EventSink,
        done: dict[str, ToolResult],
        invalid_inputs: Mapping[str, str] = NO_INVALID_INPUTS,
    ) -> list[JSON]:
        """Run `calls`, filling `done` as each finishes (so an interrupt keeps finished work).
        `invalid_inputs` (id → why) are calls whose input the provider could not use."""
        for batch in _batches(calls, self.registry):
            admitted = [(call, self._admit(call, ctx, invalid_inputs.get(call.id), emit)) for call in batch]
            if sum(not isinstance(outcome, ToolResult) for _, outcome in admitted) > 1:
                self._run_concurrently(admitted, emit, done)
                continue
            for call, outcome in admitted:
                if not isinstance(outcome, ToolResult):
                    tool, tool_input, call_ctx, access = outcome
                    emit(ToolCallRunning(call.id, call.name, tool_input, access=access))
                    self._finish(call, *self._run(tool, tool_input, call_ctx), emit, done, self._output_limit(call))
                else:
                    self._finish(call, outcome, None, emit, done, self._output_limit(call))
        blocks = [tool_result(c.id, done[c.id]) for c in calls]
        blocks.extend(system_reminder(for_conversation(said)) for said in self.hooks.take_background())
        return blocks

    def _run_concurrently(
        self, admitted: list[tuple[ToolCall, _Admitted]], emit: EventSink, done: dict[str, ToolResult]
    ) -> None:
        """Start every admitted call at once, then report all results in call order."""
        futures: dict[str, Future[tuple[ToolResult, float]]] = {}
        for call, outcome in admitted:
            if not isinstance(outcome, ToolResult):
                tool, tool_input, call_ctx, access = outcome
                emit(ToolCallRunning(call.id, call.name, tool_input, parallel=True, access=access))
                futures[call.id] = self._pool.submit(self._run_on_a_thread, tool, tool_input, call_ctx)
        for call, outcome in admitted:
            if isinstance(outcome, ToolResult):
                self._finish(call, outcome, None, emit, done, self._output_limit(call))
            else:
                self._finish(call, *_result(futures[call.id]), emit, done, self._output_limit(call))

    def interrupted(self, calls: Sequence[ToolCall], done: dict[str, ToolResult], emit: EventSink) -> list[JSON]:
        """After the user interrupted `calls`: their results in call order, the finished ones as
        they were and every other one `INTERRUPTED` (or what its tool says it had done by then,
        `ReportsInterruption`), each of those reported as finished too."""
        for call in calls:
            if call.id not in done:
                tool = self.registry.get(call.name)
                said = tool.interrupted_result(call.id) if isinstance(tool, ReportsInterruption) else None
                result = INTERRUPTED if said is None else _safe(said)
                done[call.id] = result
                emit(ToolCallFinished(call.id, call.name, _shown_input(call), result, interrupted=True))
        return [tool_result(c.id, done[c.id]) for c in calls]

    def _admit(self, call: ToolCall, ctx: ToolContext, input_problem: str | None, emit: EventSink) -> _Admitted:
        """The tool and the context to run it with, or the error result when it may not run."""
        emit(ToolCallStarted(call.id, call.name, _shown_input(call)))
        if ctx.cancel.is_set():  # a sub-agent's turn, interrupted from its parent's thread
            return INTERRUPTED
        tool = self.registry.get(call.name)
        if tool is None:
            if input_problem:  # a call the provider could not read (a malformed text-protocol tag)
                return ToolResult(f"Invalid tool call: {input_problem}", is_error=True, summary="Invalid tool call")
            names = ", ".join(self.registry.names())
            return ToolResult(
                f"Unknown tool {call.name!r}. Available tools: {names}.", is_error=True, failure="unknown_tool"
            )
        tool_input = call.input
        if not isinstance(tool_input, dict):  # from a Model that does not check its calls
            input_problem, tool_input = input_problem or "the input must be a JSON object", {}
        error = input_problem or validation_error(tool_input, tool.input_schema)
        if not error and isinstance(tool, Dispatches):  # a stand-in: judge and run the tool it means
            routed = tool.dispatch(tool_input)
            if isinstance(routed, ToolResult):
                return routed
            tool, tool_input = routed
            error = validation_error(tool_input, tool.input_schema)
        if error:
            message = f"Invalid input for {tool.name}: {error}. Fix the input and call it again."
            return ToolResult(message, is_error=True, summary=f"Invalid input: {error}", failure="invalid_input")
        tool_input = with_whole_numbers(tool_input, tool.input_schema)
        hooked = self._pre_tool_use(tool, tool_input, call.id, ctx)
        if isinstance(hooked, ToolResult):
            return hooked
        tool_input, permission = hooked
        decision = self.gate.check(tool, tool_input, replace(ctx, hook_permission=permission))
        if not decision.allowed:
            return ToolResult(decision.message, is_error=True, summary=decision.message, failure="denied")
        call_ctx = replace(
            ctx,
            checked_paths=decision.checked_paths,
            access=decision.access,
            call_id=call.id,
            hosts_named=decision.hosts_named,
        )
        try:
            before_running(tool, decision, call_ctx)
        except WorkspaceError as refused:
            return ToolResult(str(refused), is_error=True, summary=str(refused).split("\n")[0], failure="refused")
        return tool, tool_input, call_ctx, decision.access

    def _pre_tool_use(
        self, tool: Tool, tool_input: JSON, call_id: str, ctx: ToolContext
    ) -> tuple[JSON, HookPermission] | ToolResult:
        """The input to judge and run, and the hooks' word for the gate; or the result of a blocked call."""
        said = self.hooks.run(
            "PreToolUse",
            _tool_fields(tool, tool_input, call_id),
            tool.name,
            names_call=_names(tool, tool_input, ctx),
            also=_other_names(tool),
        )
        self._stop = said.stop or self._stop
        if said.stop or said.blocked or said.permission == "deny":
            why = said.reason or said.permission_reason or said.stop or "no reason given"
            message = f"Blocked by a PreToolUse hook: {why}"
            return ToolResult(message, is_error=True, summary=message, failure="blocked")
        changed = said.updated_input is not None and said.updated_input != tool_input
        if said.updated_input is not None:
            if error := validation_error(said.updated_input, tool.input_schema):
                message = (
                    f"Not run: a PreToolUse hook changed this {tool.name} call's input to one that is not valid "
                    f"({error}). Tell the user; the hook's configuration needs fixing."
                )
                return ToolResult(
                    message, is_error=True, summary=f"Invalid input from a hook: {error}", failure="blocked"
                )
            tool_input = with_whole_numbers(said.updated_input, tool.input_schema)
        decision = said.permission if said.permission in ("allow", "ask") else None
        return tool_input, HookPermission(decision, said.permission_reason, changed)

    def _run(self, tool: Tool, tool_input: JSON, ctx: ToolContext) -> tuple[ToolResult, float]:
        """Run the call, then its PostToolUse (or PostToolUseFailure) hooks, whose say joins the
        result; and the seconds the tool itself took."""
        started = time.monotonic()
        result = _run_safely(tool, tool_input, ctx)
        duration = time.monotonic() - started
        if ctx.cancel.is_set():
            return result, duration
        fields = _tool_fields(tool, tool_input, ctx.call_id)
        event = "PostToolUseFailure" if result.is_error else "PostToolUse"
        fields.update({"error": result.content} if result.is_error else {"tool_response": result.content})
        said = self.hooks.run(
            event, fields, tool.name, names_call=_names(tool, tool_input, ctx), also=_other_names(tool)
        )
        self._stop = said.stop or self._stop
        return _with_feedback(result, event, said), duration

    def _run_on_a_thread(self, tool: Tool, tool_input: JSON, ctx: ToolContext) -> tuple[ToolResult, float]:
        """`_run` on one of the pool's threads, counted for `close`; not run once closed."""
        with self._on_threads:
            if self._closed:
                return INTERRUPTED, 0.0
            self._running_on_threads += 1
        try:
            return self._run(tool, tool_input, ctx)
        finally:
            with self._on_threads:
                self._running_on_threads -= 1
                self._on_threads.notify_all()

    def _output_limit(self, call: ToolCall) -> int:
        tool = self.registry.get(call.name)
        return tool.output_limit if isinstance(tool, CapsOwnOutput) else TOOL_OUTPUT_LIMIT

    @staticmethod
    def _finish(
        call: ToolCall,
        result: ToolResult,
        duration: float | None,
        emit: EventSink,
        done: dict[str, ToolResult],
        limit: int,
    ) -> None:
        result = _safe(result, limit)
        done[call.id] = result
        emit(ToolCallFinished(call.id, call.name, _shown_input(call), result, duration=duration))

    @staticmethod
    def announce(message: JSON, emit: EventSink) -> None:
        emit(ToolResultsMessage(message))


def _result(future: Future[tuple[ToolResult, float]]) -> tuple[ToolResult, float]:
    """The call's outcome, waited for in slices of `WAKE_EVERY_S`."""
    while True:
        try:
            return future.result(WAKE_EVERY_S)
        except TimeoutError:
            continue


def _safe(result: ToolResult, limit: int = TOOL_OUTPUT_LIMIT) -> ToolResult:
    """`result` made safe for the conversation and the terminal, its content capped at `limit` characters."""
    return replace(
        result,
        content=cap_middle(for_conversation(result.content), limit) or "(no output)",
        summary=None if result.summary is None else for_conversation(result.summary),
        diff=None if result.diff is None else for_conversation(result.diff),
        output=None if result.output is None else for_conversation(result.output),
    )


def _shown_input(call: ToolCall) -> JSON:
    """The input for the front ends, which expect an object even when the model sent something else."""
    return call.input if isinstance(call.input, dict) else {}


def _tool_fields(tool: Tool, tool_input: JSON, call_id: str) -> JSON:
    return {"tool_name": tool.name, "tool_input": tool_input, "tool_use_id": call_id}


def _names(tool: Tool, tool_input: JSON, ctx: ToolContext) -> Callable[[Rule], bool]:
    """Whether a hook's `if` names this call."""
    return lambda rule: rule_names_call(rule, tool, tool_input, ctx)


def _other_names(tool: Tool) -> tuple[str, ...]:
    """The name Claude Code gives an MCP tool offered under a shortened one: hook matchers written
    for it (`mcp__plugin_NAME_SERVER__.*`) match it too."""
    if not isinstance(tool, FromMcpServer):
        return ()
    full = claude_code_name(tool.origin.server, tool.origin.tool)
    return (full,) if full != tool.name else ()


def _with_feedback(result: ToolResult, event: str, said: HookOutcome) -> ToolResult:
    """`result` with what the hooks told the model after it (a block's reason, their context)."""
    feedback = [*([said.reason] if said.blocked else []), *said.context]
    if not feedback:
        return result
    told = "\n\n".join(f"{event} hook feedback:\n{text}" for text in feedback)
    return replace(result, content=f"{result.content}\n\n{told}")


def _run_safely(tool: Tool, tool_input: JSON, ctx: ToolContext) -> ToolResult:
    try:
        return tool.run(tool_input, ctx)
    except Exception as error:  # a tool bug must not end the turn or leak a traceback
        return ToolResult(f"{tool.name} failed: {type(error).__name__}: {error}", is_error=True)


def _batches(calls: Sequence[ToolCall], registry: ToolRegistry) -> list[list[ToolCall]]:
    """Group neighbouring calls of the same concurrency group; every other call is a batch of its own."""
    batches: list[list[ToolCall]] = []
    last_group: str | None = None
    for call in calls:
        tool = registry.get(call.name)
        group = None if tool is None else concurrency_group(tool)
        if group is not None and group == last_group:
            batches[-1].append(call)
        else:
            batches.append([call])
        last_group = group
    return batches
