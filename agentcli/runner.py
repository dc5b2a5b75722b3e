"""`agentcli run`: one prompt, one agent loop, one report; returns the exit code."""

from __future__ import annotations

import os
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentcli.catalog import DEFAULT_MODEL, model_info
from agentcli.context.session import SessionContext
from agentcli.contracts import JSON, Model, ToolContext
from agentcli.errors import AgentcliError, StopRun
from agentcli.events import Event, Notice
from agentcli.executor import ToolExecutor
from agentcli.loop import Agent, LoopConfig, RunResult
from agentcli.output.reporters import JsonReporter, Outcome, StreamJsonReporter, TextReporter
from agentcli.permissions.gate import build_gate
from agentcli.settings import Settings, load_settings

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


@dataclass
class RunOptions:
    prompt: str
    model: str | None = None
    max_turns: int | None = None
    output_format: str = "text"
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    append_system_prompt: str | None = None
    max_budget_tokens: int | None = None
    verbose: bool = False


class Reporter(Protocol):
    def start(self, init: JSON) -> None: ...
    def __call__(self, event: Event) -> None: ...
    def finish(self, outcome: Outcome) -> None: ...


def split_rules(values: list[str]) -> list[str]:
    """`--allowed-tools "Read,Bash(git status:*)" Edit` → ["Read", "Bash(git status:*)", "Edit"].

    Commas and spaces separate rules, except inside parentheses.
    """
    rules: list[str] = []
    for value in values:
        depth, current = 0, ""
        for char in value:
            depth += char == "("
            depth -= char == ")"
            if char in ", " and depth == 0:
                if current:
                    rules.append(current)
                current = ""
            else:
                current += char
        if current:
            rules.append(current)
    return rules


def resolve_model(options: RunOptions, settings: Settings) -> str:
    return options.model or os.environ.get("AGENTCLI_MODEL") or settings.get("model") or DEFAULT_MODEL


def run_once(options: RunOptions, model: Model | None = None, cwd: Path | None = None) -> int:
    """Run one prompt to completion, print per the output format, and return the exit code."""
    started = time.monotonic()
    session_id = str(uuid.uuid4())
    cwd = cwd or Path.cwd()
    reporter = _reporter(options.output_format, session_id)
    agent: Agent | None = None
    model_name = options.model or DEFAULT_MODEL
    try:
        settings = load_settings(cwd)
        model_name = resolve_model(options, settings)
        context = SessionContext(cwd, model_name, options.append_system_prompt)
        agent = build_agent(options, settings, model_name, cwd, reporter, model, context)
        prepared = context.prepare(options.prompt, agent.ctx)  # a /command is expanded (or refused) here
        if prepared.model:
            agent.config.model = prepared.model
        reporter.start(
            {
                "session_id": session_id,
                "cwd": str(cwd),
                "model": agent.config.model,
                "tools": agent.executor.registry.names(),
            }
        )
        with context.turn(prepared):
            result = agent.run(prepared.content)
        outcome = _outcome("success", result.text, False, result, agent, session_id, started, settings)
        code = EXIT_OK
    except KeyboardInterrupt:
        if agent is not None:
            agent.record_interrupt()
        outcome = _failure("error_during_execution", "Interrupted by the user.", agent, session_id, started)
        code = EXIT_INTERRUPTED
    except AgentcliError as error:
        if options.verbose:
            traceback.print_exc()
        subtype = error.subtype if isinstance(error, StopRun) else "error_during_execution"
        outcome = _failure(subtype, str(error), agent, session_id, started)
        code = error.exit_code
    except Exception as error:  # a bug of ours: say so plainly, traceback only with --verbose
        if options.verbose:
            traceback.print_exc()
        message = f"Internal error: {type(error).__name__}: {error} (re-run with --verbose for the traceback)"
        outcome = _failure("error_during_execution", message, agent, session_id, started)
        code = EXIT_FAILURE
    reporter.finish(outcome)
    return code


def build_agent(
    options: RunOptions,
    settings: Settings,
    model_name: str,
    cwd: Path,
    on_event: Reporter,
    model: Model | None = None,
    context: SessionContext | None = None,
) -> Agent:
    from agentcli.tools import builtin_tools

    allowed, disallowed = split_rules(options.allowed_tools), split_rules(options.disallowed_tools)
    gate = build_gate(
        settings, cwd, options.permission_mode, allowed, disallowed, on_notice=lambda text: on_event(Notice(text))
    )
    if model is None:
        from agentcli.providers.anthropic import AnthropicModel

        model = AnthropicModel()
    info = model_info(model_name, settings.get("models"))
    config = LoopConfig(
        model=model_name,
        max_output_tokens=min(32_000, info.max_output_tokens),
        model_max_output_tokens=info.max_output_tokens,
        max_turns=options.max_turns,
        token_budget=options.max_budget_tokens or settings.get("tokenBudget") or LoopConfig.token_budget,
        retry_base_delay=float(os.environ.get("AGENTCLI_RETRY_BASE_DELAY") or LoopConfig.retry_base_delay),
    )
    registry = builtin_tools()
    context = context or SessionContext(cwd, model_name, options.append_system_prompt)
    context.attach(registry, gate)
    return Agent(
        model=model,
        executor=ToolExecutor(registry, gate),
        config=config,
        system=context.system,
        on_event=on_event,
        ctx=ToolContext(cwd=cwd),
    )


def _reporter(output_format: str, session_id: str) -> Reporter:
    if output_format == "json":
        return JsonReporter()
    if output_format == "stream-json":
        return StreamJsonReporter(session_id=session_id)
    return TextReporter()


def _outcome(
    subtype: str,
    text: str,
    is_error: bool,
    result: RunResult,
    agent: Agent,
    session_id: str,
    started: float,
    settings: Settings | None = None,
) -> Outcome:
    info = model_info(agent.config.model, settings.get("models") if settings else None)
    return Outcome(
        subtype=subtype,
        result=text,
        is_error=is_error,
        session_id=session_id,
        num_turns=result.num_turns,
        duration_ms=int((time.monotonic() - started) * 1000),
        usage=agent.usage.as_dict(),
        total_cost_usd=round(info.cost_usd(agent.usage), 6),
    )


def _failure(subtype: str, message: str, agent: Agent | None, session_id: str, started: float) -> Outcome:
    if agent is None:
        return Outcome(subtype, message, True, session_id, 0, int((time.monotonic() - started) * 1000), {}, 0.0)
    turns = sum(1 for m in agent.messages if m["role"] == "assistant")
    return _outcome(subtype, message, True, RunResult(message, turns), agent, session_id, started)
