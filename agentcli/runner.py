"""`agentcli run`: one prompt, one agent loop, one report; returns the exit code."""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agentcli.contracts import JSON, Model
from agentcli.errors import AgentcliError, StopRun
from agentcli.events import Event
from agentcli.loop import LoopConfig
from agentcli.output.reporters import JsonReporter, Outcome, StreamJsonReporter, TextReporter
from agentcli.session import Session, SessionOptions

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


@dataclass
class RunOptions(SessionOptions):
    prompt: str = ""
    output_format: str = "text"
    verbose: bool = False


class Reporter(Protocol):
    def start(self, init: JSON) -> None: ...
    def __call__(self, event: Event) -> None: ...
    def finish(self, outcome: Outcome) -> None: ...


def run_once(
    options: RunOptions,
    model: Model | None = None,
    cwd: Path | None = None,
    *,
    retry_base_delay: float = LoopConfig.retry_base_delay,
) -> int:
    """Run one prompt to completion, print per the output format, and return the exit code.

    `model` and `retry_base_delay` are for running in-process (tests: a scripted model, short retries)."""
    started = time.monotonic()
    cwd = cwd or Path.cwd()
    reporter = _reporter(options.output_format)
    session: Session | None = None
    try:
        session = Session(options, cwd, reporter, model=model, retry_base_delay=retry_base_delay)
        prepared = session.prepare(options.prompt)  # a /command is expanded (or refused) before anything is sent
        reporter.start(
            {
                "session_id": session.id,
                "cwd": str(cwd),
                "model": prepared.model or session.agent.config.model,
                "tools": session.registry.names(),
            }
        )
        result = session.run(prepared)
        outcome = _outcome(session, "success", result.text, False, started, result.num_turns)
        code = EXIT_OK
    except KeyboardInterrupt:
        if session is not None:
            session.agent.record_interrupt()
        outcome = _outcome(session, "error_during_execution", "Interrupted by the user.", True, started)
        code = EXIT_INTERRUPTED
    except AgentcliError as error:
        if options.verbose:
            traceback.print_exc()
        subtype = error.subtype if isinstance(error, StopRun) else "error_during_execution"
        outcome = _outcome(session, subtype, str(error), True, started)
        code = error.exit_code
    except Exception as error:  # a bug of ours: say so plainly, traceback only with --verbose
        if options.verbose:
            traceback.print_exc()
        message = f"Internal error: {type(error).__name__}: {error} (re-run with --verbose for the traceback)"
        outcome = _outcome(session, "error_during_execution", message, True, started)
        code = EXIT_FAILURE
    reporter.finish(outcome)
    if session is not None:
        session.close()
    return code


def _reporter(output_format: str) -> Reporter:
    if output_format == "json":
        return JsonReporter()
    if output_format == "stream-json":
        return StreamJsonReporter()
    return TextReporter()


def _outcome(
    session: Session | None, subtype: str, text: str, is_error: bool, started: float, turns: int | None = None
) -> Outcome:
    duration_ms = int((time.monotonic() - started) * 1000)
    if session is None:
        return Outcome(subtype, text, is_error, "", 0, duration_ms, {}, 0.0)
    agent = session.agent
    if turns is None:
        earlier = len(session.resumed.messages) if session.resumed else 0  # turns of this run only
        turns = sum(1 for message in agent.messages[earlier:] if message["role"] == "assistant")
    return Outcome(
        subtype=subtype,
        result=text,
        is_error=is_error,
        session_id=session.id,
        num_turns=turns,
        duration_ms=duration_ms,
        usage=agent.usage.as_dict(),
        total_cost_usd=round(session.model_info.cost_usd(agent.usage), 6),
    )
