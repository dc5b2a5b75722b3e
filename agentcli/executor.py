"""Running one turn's tool calls: look up, validate, ask the gate, run, cap, answer in order.

Read-only calls that stand next to each other run concurrently (unless the tool changes the
session's own state, see `runs_concurrently`), and so do neighbouring calls of a tool that
declares them independent (Task: each call is a conversation of its own; see
`contracts.concurrency_group`); anything else runs alone, in the order the model gave. Results
always come back in call order, one per call, made safe for the conversation
(`safe_text.for_conversation`: valid Unicode, credentials redacted) and capped.

Events, per call: `ToolCallStarted` before the gate judges it, `ToolCallRunning` once it is
admitted and its tool starts, `ToolCallFinished` with its result. A batch of concurrent calls
reports every `ToolCallRunning` first and then every `ToolCallFinished` in call order (a
denied call's too), so a front end can print each call with its result and never interleave.
After an interrupt, `interrupted` reports every call that had not finished.

Each call runs with its own copy of the ToolContext carrying its id and the real paths the gate
judged (`Decision.checked_paths`), so the tool touches exactly what was checked; the copy shares
the session's state (read-file records, the cancel event) with every other call.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from types import MappingProxyType

from agentcli.contracts import JSON, CapsOwnOutput, PermissionGate, Tool, ToolContext, ToolResult, concurrency_group
from agentcli.events import EventSink, ToolCallFinished, ToolCallRunning, ToolCallStarted, ToolResultsMessage
from agentcli.safe_text import for_conversation
from agentcli.tools.registry import ToolRegistry
from agentcli.tools.schema import validation_error
from agentcli.truncate import TOOL_OUTPUT_LIMIT, cap_middle

MAX_PARALLEL = 8
NO_INVALID_INPUTS: Mapping[str, str] = MappingProxyType({})
_Admitted = tuple[Tool, ToolContext] | ToolResult
"""The tool and the context to run a call with, or the error result when it may not run."""
INTERRUPTED = ToolResult("Interrupted by the user before this call finished.", is_error=True, summary="Interrupted")


def tool_result(call_id: str, result: ToolResult) -> JSON:
    content: str | list[JSON] = result.content
    if result.images:
        content = [{"type": "text", "text": result.content}, *result.images]
    block: JSON = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    if result.is_error:
        block["is_error"] = True
    return block


def close_pending(assistant: JSON, why: str) -> list[JSON]:
    """Error results for every tool call in `assistant`, for calls that will never run."""
    return [
        tool_result(b["id"], ToolResult(why, is_error=True))
        for b in assistant["content"]
        if b.get("type") == "tool_use"
    ]


class ToolExecutor:
    """Owns the registry and the gate; the loop hands it each turn's tool_use blocks."""

    def __init__(self, registry: ToolRegistry, gate: PermissionGate) -> None:
        self.registry = registry
        self.gate = gate
        self._pool = ThreadPoolExecutor(MAX_PARALLEL, thread_name_prefix="tool")

    def close(self) -> None:
        """Stop the worker threads (calls still running finish first)."""
        self._pool.shutdown()

    def manifest(self) -> list[JSON]:
        return self.registry.manifest()

    def run_all(
        self,
        calls: list[JSON],
        ctx: ToolContext,
        emit: EventSink,
        done: dict[str, ToolResult],
        invalid_inputs: Mapping[str, str] = NO_INVALID_INPUTS,
    ) -> list[JSON]:
        """Run `calls`, filling `done` as each finishes (so an interrupt keeps finished work).
        `invalid_inputs` (id → why) are calls whose input the provider could not use."""
        for batch in _batches(calls, self.registry):
            admitted = [(call, self._admit(call, ctx, invalid_inputs.get(call["id"]), emit)) for call in batch]
            if sum(not isinstance(outcome, ToolResult) for _, outcome in admitted) > 1:
                self._run_concurrently(admitted, emit, done)
                continue
            for call, outcome in admitted:
                if not isinstance(outcome, ToolResult):
                    tool, call_ctx = outcome
                    emit(ToolCallRunning(call["id"], call["name"], _shown_input(call)))
                    outcome = _run_safely(tool, call, call_ctx)
                self._finish(call, outcome, emit, done, self._output_limit(call))
        return [tool_result(c["id"], done[c["id"]]) for c in calls]

    def _run_concurrently(
        self, admitted: list[tuple[JSON, _Admitted]], emit: EventSink, done: dict[str, ToolResult]
    ) -> None:
        """Start every admitted call at once, then report all results in call order."""
        futures: dict[str, Future[ToolResult]] = {}
        for call, outcome in admitted:
            if not isinstance(outcome, ToolResult):
                emit(ToolCallRunning(call["id"], call["name"], _shown_input(call), parallel=True))
                tool, call_ctx = outcome
                futures[call["id"]] = self._pool.submit(_run_safely, tool, call, call_ctx)
        for call, outcome in admitted:
            result = outcome if isinstance(outcome, ToolResult) else futures[call["id"]].result()
            self._finish(call, result, emit, done, self._output_limit(call))

    def interrupted(self, calls: list[JSON], done: dict[str, ToolResult], emit: EventSink) -> list[JSON]:
        """After the user interrupted `calls`: their results in call order, the finished ones as
        they were and every other one `INTERRUPTED`, each of those reported as finished too."""
        for call in calls:
            if call["id"] not in done:
                done[call["id"]] = INTERRUPTED
                emit(ToolCallFinished(call["id"], call["name"], _shown_input(call), INTERRUPTED, interrupted=True))
        return [tool_result(c["id"], done[c["id"]]) for c in calls]

    def _admit(self, call: JSON, ctx: ToolContext, input_problem: str | None, emit: EventSink) -> _Admitted:
        """The tool and the context to run it with, or the error result when it may not run."""
        emit(ToolCallStarted(call["id"], call["name"], _shown_input(call)))
        if ctx.cancel.is_set():  # a sub-agent's turn, interrupted from its parent's thread
            return INTERRUPTED
        tool = self.registry.get(call["name"])
        if tool is None:
            names = ", ".join(self.registry.names())
            return ToolResult(f"Unknown tool {call['name']!r}. Available tools: {names}.", is_error=True)
        tool_input = call.get("input")
        if not isinstance(tool_input, dict):  # from a Model that does not check its calls
            input_problem, tool_input = input_problem or "the input must be a JSON object", {}
        error = input_problem or validation_error(tool_input, tool.input_schema)
        if error:
            message = f"Invalid input for {tool.name}: {error}. Fix the input and call it again."
            return ToolResult(message, is_error=True, summary=f"Invalid input: {error}")
        decision = self.gate.check(tool, tool_input, ctx)
        if not decision.allowed:
            return ToolResult(decision.message, is_error=True, summary=decision.message)
        return tool, replace(ctx, checked_paths=decision.checked_paths, call_id=call["id"])

    def _output_limit(self, call: JSON) -> int:
        tool = self.registry.get(call["name"])
        return tool.output_limit if isinstance(tool, CapsOwnOutput) else TOOL_OUTPUT_LIMIT

    @staticmethod
    def _finish(call: JSON, result: ToolResult, emit: EventSink, done: dict[str, ToolResult], limit: int) -> None:
        result = replace(
            result,
            content=cap_middle(for_conversation(result.content), limit) or "(no output)",
            summary=None if result.summary is None else for_conversation(result.summary),
            diff=None if result.diff is None else for_conversation(result.diff),
            output=None if result.output is None else for_conversation(result.output),
        )
        done[call["id"]] = result
        emit(ToolCallFinished(call["id"], call["name"], _shown_input(call), result))

    @staticmethod
    def announce(message: JSON, emit: EventSink) -> None:
        emit(ToolResultsMessage(message))


def _shown_input(call: JSON) -> JSON:
    """The input for the front ends, which expect an object even when the model sent something else."""
    tool_input = call.get("input")
    return tool_input if isinstance(tool_input, dict) else {}


def _run_safely(tool: Tool, call: JSON, ctx: ToolContext) -> ToolResult:
    try:
        return tool.run(call["input"], ctx)
    except Exception as error:  # a tool bug must not end the turn or leak a traceback
        return ToolResult(f"{tool.name} failed: {type(error).__name__}: {error}", is_error=True)


def _batches(calls: list[JSON], registry: ToolRegistry) -> list[list[JSON]]:
    """Group neighbouring calls of the same concurrency group; every other call is a batch of its own."""
    batches: list[list[JSON]] = []
    last_group: str | None = None
    for call in calls:
        tool = registry.get(call["name"])
        group = None if tool is None else concurrency_group(tool)
        if group is not None and group == last_group:
            batches[-1].append(call)
        else:
            batches.append([call])
        last_group = group
    return batches
