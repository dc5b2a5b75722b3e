"""`agentcli run --input-format stream-json`: a program drives one session, a message per line.

Each line on stdin is a user message in Claude Code's format:

    {"type": "user", "message": {"role": "user", "content": "Fix the failing test"}}
    {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "…"}]}}

and is one turn of the same session, reported on stdout as `--output-format stream-json`
reports a run (`system` init once, then each message, then a `result` for the turn). A line
that is not such a message gets a `{"type": "system", "subtype": "input_error", …}` line naming
its line number and what is wrong, and the session goes on with the next. The session ends when
stdin closes; the exit code is 0 when every turn succeeded, else the first failed turn's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from agentcli.errors import AgentcliError, Halt, OutputClosed, StopRun
from agentcli.output.reporters import StreamJsonReporter

if TYPE_CHECKING:
    from agentcli.contracts import Model
    from agentcli.session import SessionOptions

MAX_LINE = 16 * 1024 * 1024
"""Characters of one input line: a message with pasted files, not a runaway producer."""


class InputError(ValueError):
    """A line that is not a user message; the message says what a line must be."""


def user_text(line: str) -> str:
    """The text of the user message on `line` (InputError when it is not one)."""
    if len(line) > MAX_LINE:
        raise InputError(f"The line is over {MAX_LINE:,} characters.")
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        raise InputError("The line is not JSON.") from None
    message = value.get("message") if isinstance(value, dict) and value.get("type") == "user" else None
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        raise InputError('Each line must be {"type": "user", "message": {"role": "user", "content": …}}.')
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        if any(not isinstance(block, dict) or block.get("type") != "text" for block in content):
            raise InputError("Only text content blocks are taken ({'type': 'text', 'text': …}).")
        text = "\n\n".join(str(block.get("text", "")) for block in content)
    else:
        raise InputError("message.content must be a string or a list of text blocks.")
    if not text.strip():
        raise InputError("The message is empty.")
    return text


def run_stream(
    options: SessionOptions,
    lines: Iterable[str],
    out: TextIO,
    *,
    cwd: Path,
    model: Model | None = None,
    prompt_tool: str | None = None,
    retry_base_delay: float | None = None,
) -> int:
    """Run every message of `lines` in one session, reporting on `out`; the exit code.
    `prompt_tool`: `--permission-prompt-tool` (see `permissions.prompt_tool`)."""
    from agentcli.loop import LoopConfig
    from agentcli.runner import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, outcome_of, prompt_tool_asker
    from agentcli.session import Session

    reporter = StreamJsonReporter(out)
    delay = LoopConfig.retry_base_delay if retry_base_delay is None else retry_base_delay
    code = EXIT_OK
    opened: list[Session] = []
    prompter = prompt_tool_asker(prompt_tool, lambda: opened[0] if opened else None)
    with Session(
        options, cwd, reporter, model=model, prompter=prompter, ask_user=prompter, retry_base_delay=delay
    ) as session:
        opened.append(session)
        session.tools_ready()
        agent = session.agent
        reporter.start(
            {"session_id": session.id, "cwd": str(cwd), "model": agent.config.model, "tools": agent.tool_names()}
        )
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                text = user_text(line)
            except InputError as error:
                reporter.system("input_error", line=number, error=str(error))
                continue
            started = time.monotonic()
            try:
                result = session.run(session.prepare(text))
                outcome = outcome_of(session, "success", result.text, False, started, result.num_turns)
            except OutputClosed:
                raise
            except KeyboardInterrupt as stop:
                session.record_interrupt()
                outcome = outcome_of(session, "error_during_execution", "Interrupted.", True, started)
                reporter.finish(outcome)
                return stop.exit_code if isinstance(stop, Halt) else EXIT_INTERRUPTED
            except AgentcliError as error:
                subtype = error.subtype if isinstance(error, StopRun) else "error_during_execution"
                outcome = outcome_of(session, subtype, str(error), True, started)
                code = code or error.exit_code or EXIT_FAILURE
            reporter.finish(outcome)
    return code
