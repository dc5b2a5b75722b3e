"""`agentcli run`: one prompt, one agent loop, one report; returns the exit code."""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agentcli.context.session import PreparedMessage
from agentcli.contracts import JSON, Model, Tool, Usage
from agentcli.errors import AgentcliError, Halt, OutputClosed, StopRun, UsageError
from agentcli.events import Event
from agentcli.loop import LoopConfig
from agentcli.output.reporters import JsonReporter, Outcome, StreamJsonReporter, TextReporter
from agentcli.output.streams import write_err
from agentcli.permissions.prompt_tool import PromptToolAsker
from agentcli.session import Session, SessionOptions
from agentcli.skills.catalog import UnknownCommand

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


@dataclass
class RunOptions(SessionOptions):
    prompt: str = ""
    output_format: str = "text"
    verbose: bool = False
    permission_prompt_tool: str | None = None
    """`--permission-prompt-tool`: the MCP tool that answers what the run would ask (`prompt_tool`)."""


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
    reporter = _reporter(options.output_format, cwd, options.verbose)
    session: Session | None = None
    try:
        prompter = prompt_tool_asker(options.permission_prompt_tool, lambda: session)
        session = Session(
            options, cwd, reporter, model=model, prompter=prompter, ask_user=prompter, retry_base_delay=retry_base_delay
        )
        prepared = _prepare(session, options.prompt)  # a /command is expanded (or refused) before anything is sent
        session.tools_ready()  # the MCP servers' tools, for the init report too
        reporter.start(
            {
                "session_id": session.id,
                "cwd": str(cwd),
                "model": prepared.model or session.agent.config.model,
                "tools": session.agent.tool_names(),
            }
        )
        result = session.run(prepared)
        outcome = outcome_of(session, "success", result.text, False, started, result.num_turns)
        code = EXIT_OK
    except KeyboardInterrupt as stop:  # Ctrl-C, or a Halt: SIGTERM, SIGHUP, stdout gone
        if session is not None:
            session.record_interrupt()
        if isinstance(stop, OutputClosed):
            return _output_lost(stop, session)
        outcome = outcome_of(session, "error_during_execution", _stopped(stop, session), True, started)
        code = stop.exit_code if isinstance(stop, Halt) else EXIT_INTERRUPTED
    except AgentcliError as error:
        if options.verbose:
            traceback.print_exc()
        subtype = error.subtype if isinstance(error, StopRun) else "error_during_execution"
        outcome = outcome_of(session, subtype, str(error), True, started)
        code = error.exit_code
    except Exception as error:  # a bug of ours: say so plainly, traceback only with --verbose
        if options.verbose:
            traceback.print_exc()
        message = f"Internal error: {type(error).__name__}: {error} (re-run with --verbose for the traceback)"
        outcome = outcome_of(session, "error_during_execution", message, True, started)
        code = EXIT_FAILURE
    try:
        reporter.finish(outcome)
    except OutputClosed as lost:
        return _output_lost(lost, session)
    finally:
        if session is not None:
            session.close()
    return code


def _prepare(session: Session, prompt: str) -> PreparedMessage:
    """The prompt ready to send; a command of the interactive REPL (`/cost`) is refused saying so."""
    try:
        return session.prepare(prompt)
    except UnknownCommand as error:
        from agentcli.repl.builtins import BUILTINS  # only on this path: a run has no built-in commands

        if error.name not in BUILTINS:
            raise
        raise UsageError(
            f"/{error.name} is a command of the interactive REPL only: start `agentcli` and type /{error.name} "
            "there. `agentcli run` takes a prompt or a skill."
        ) from None


def _stopped(stop: KeyboardInterrupt, session: Session | None) -> str:
    """Why the run stopped early, and where its work is."""
    message = str(stop) if isinstance(stop, Halt) else "Interrupted by the user."
    if session is not None and session.transcript.kept:
        message += " The session is saved: agentcli run -c continues it."
    return message


def _output_lost(lost: OutputClosed, session: Session | None) -> int:
    """Stdout cannot be written: no report, one line on stderr (none when the reader went away)."""
    if not lost.quiet:
        write_err(sys.stderr, f"Error: {_stopped(lost, session)}")
    return lost.exit_code


def _reporter(output_format: str, cwd: Path, verbose: bool) -> Reporter:
    if output_format == "json":
        return JsonReporter(cwd=cwd)
    if output_format == "stream-json":
        return StreamJsonReporter()
    return TextReporter(cwd=cwd, verbose=verbose)


def prompt_tool_asker(name: str | None, session: Callable[[], Session | None]) -> PromptToolAsker | None:
    """The `--permission-prompt-tool` asker for the session `session()` gives (once it exists)."""
    if name is None:
        return None

    def find(tool: str) -> Tool | None:
        current = session()
        return current.agent.executor.registry.get(tool) if current is not None else None

    return PromptToolAsker(name, find)


def outcome_of(
    session: Session | None, subtype: str, text: str, is_error: bool, started: float, turns: int | None = None
) -> Outcome:
    """How a run (or one turn of a stream-json session) ended, for its `result` report."""
    duration_ms = int((time.monotonic() - started) * 1000)
    if session is None:
        return Outcome(subtype, text, is_error, "", 0, duration_ms, {}, 0.0)
    agent = session.agent
    usage = _spent_by_this_run(session)
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
        usage=usage.as_dict(),
        total_cost_usd=round(session.cost_usd(usage), 6),
    )


def _spent_by_this_run(session: Session) -> Usage:
    """The session's usage (its sub-agents' included) less what a resumed conversation had
    spent before this run."""
    return session.usage.less(session.resumed.usage) if session.resumed is not None else session.usage
