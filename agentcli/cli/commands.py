"""What `agentcli` and `agentcli run` do with their parsed options; each returns the exit code.

Both parsers (typer and the light one) call these with the same values (keyed by the option
table's names). Nothing here imports typer: a usage error found after parsing (a value that
is not one of its choices, `--continue` with `--resume`, no prompt) is raised as
`CliUsageError`, which typer reports as it reports its own (see `agentcli.cli.main`).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.cli.options import INPUT_FORMATS, OUTPUT_FORMATS, PERMISSION_MODES

if TYPE_CHECKING:
    from agentcli.session import SessionOptions

Values = Mapping[str, Any]


class CliUsageError(Exception):
    """A bad command line that parsing alone could not tell: exit 2 with typer's usage message."""

    def __init__(self, message: str, param_hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.param_hint = param_hint


def echo(text: str) -> int:
    """Print a line to stdout; 0, or the exit code when stdout cannot take it (see output.streams)."""
    from agentcli.errors import OutputClosed
    from agentcli.output.streams import write_err, write_out

    try:
        write_out(sys.stdout, text + "\n")
    except OutputClosed as lost:
        if not lost.quiet:
            write_err(sys.stderr, f"Error: {lost}")
        return lost.exit_code
    return 0


def main_command(values: Values) -> int:
    """`agentcli`: the REPL; with `-p` or piped input, one prompt (`echo question | agentcli`)."""
    print_prompt: str | None = values["print_prompt"]
    once = print_prompt is not None or not sys.stdin.isatty()
    if once and not _has_credential(values):
        return 1
    options = _session_options(values)
    if once:
        return _run_once(options, print_prompt, values)
    from agentcli.repl.app import run_repl

    return run_repl(options, verbose=values["verbose"])


def run_command(values: Values) -> int:
    """`agentcli run PROMPT`: run one prompt to completion and print the answer."""
    if not _has_credential(values):
        return 1
    return _run_once(_session_options(values), values["prompt"], values)


def acp_command(values: Values) -> int:
    """`agentcli acp`: serve the Agent Client Protocol on stdin/stdout until stdin closes."""
    values = {**values, "continue_session": False, "resume": None}
    if not _has_credential(values):
        return 1
    _check_session_values(values)  # a usage error is reported at once, not at the first session
    from agentcli.acp import serve_stdio

    return serve_stdio(lambda: _session_options(values))


def stats_command(values: Values) -> int:
    """`agentcli stats`: figures from this project's (or every project's) transcripts."""
    import os
    import shutil
    from pathlib import Path

    from agentcli.errors import UsageError
    from agentcli.output.streams import write_err
    from agentcli.stats.command import stats_text

    width = shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else 100
    try:
        text = stats_text(
            Path(os.getcwd()),
            all_projects=values["all_projects"],
            since=values["since"],
            as_json=values["json"],
            width=width,
            batch=None if values["folder"] is None else Path(values["folder"]),
        )
    except UsageError as error:
        write_err(sys.stderr, f"Error: {error}")
        return error.exit_code
    return echo(text)


def batch_command(values: Values) -> int:
    """`agentcli batch TASKS --out DIR`: run many tasks (`agentcli.batch`)."""
    if values["tasks"] is None:
        raise CliUsageError("give the tasks: a JSONL file, or a folder of Harbor tasks.", "TASKS")
    if values["out"] is None:
        raise CliUsageError("give the batch's folder: --out DIR (made if needed; run again to resume).", "--out")
    session_values = {**values, "continue_session": False, "resume": None, "max_budget_usd": None}
    if not _has_credential(session_values):
        return 1
    options = _session_options(session_values)
    from agentcli.batch.command import BatchRequest, run_batch_command

    request = BatchRequest(
        tasks=Path(values["tasks"]),
        out=Path(values["out"]),
        session=options,
        workers=values["workers"],
        ray=values["ray"],
        budget_usd=values["max_budget_usd"],
        task_budget_usd=values["task_budget_usd"],
        retries=values["retries"],
    )
    return run_batch_command(request)


def _run_once(base: SessionOptions, prompt: str | None, values: Values) -> int:
    _check_choice("--output-format", values["output_format"], OUTPUT_FORMATS)
    _check_choice("--input-format", values["input_format"], INPUT_FORMATS)
    if values["input_format"] == "stream-json":
        return _run_stream(base, prompt, values)
    text = _read_prompt(prompt)
    from dataclasses import asdict

    from agentcli.runner import RunOptions, run_once

    options = RunOptions(
        **asdict(base),
        prompt=text,
        output_format=values["output_format"],
        verbose=values["verbose"],
        permission_prompt_tool=values["permission_prompt_tool"],
    )
    return run_once(options)


def _run_stream(base: SessionOptions, prompt: str | None, values: Values) -> int:
    """`--input-format stream-json`: the messages come from stdin, the answers go out as stream-json."""
    if prompt is not None:
        raise CliUsageError("with --input-format stream-json the messages come from stdin, not PROMPT.", "PROMPT")
    if values["output_format"] != "stream-json":
        raise CliUsageError("--input-format stream-json needs --output-format stream-json.", "--output-format")
    from agentcli.stream_input import run_stream

    return run_stream(base, sys.stdin, sys.stdout, cwd=Path.cwd(), prompt_tool=values["permission_prompt_tool"])


def _session_options(values: Values) -> SessionOptions:
    """The options `run` and the REPL share, checked."""
    _check_session_values(values)
    from agentcli.session import SessionOptions

    return SessionOptions(
        model=values["model"],
        provider=values["provider"],
        permission_mode=values["permission_mode"],
        allowed_tools=values["allowed_tools"] or [],
        disallowed_tools=values["disallowed_tools"] or [],
        append_system_prompt=values["append_system_prompt"],
        max_turns=values["max_turns"],
        max_budget_tokens=values["max_budget_tokens"],
        max_budget_usd=values["max_budget_usd"],
        tool_protocol=values["tool_protocol"],
        continue_session=values["continue_session"],
        resume=values["resume"],
        mcp_config=values["mcp_config"] or [],
        strict_mcp_config=values["strict_mcp_config"],
        plugin_dirs=[str(Path(folder).absolute()) for folder in values["plugin_dirs"] or []],
        sandbox=True if values["sandbox"] else False if values["no_sandbox"] else None,
        trust_project_hooks=values["trust_project_hooks"],
    )


def _check_session_values(values: Values) -> None:
    """The usage errors in the options `run`, the REPL and `acp` share (CliUsageError)."""
    if values["permission_mode"] is not None:
        _check_choice("--permission-mode", values["permission_mode"], PERMISSION_MODES)
    if values["tool_protocol"] is not None:
        from agentcli.providers.text_tools import TOOL_PROTOCOLS

        _check_choice("--tool-protocol", values["tool_protocol"], TOOL_PROTOCOLS)
    if values["continue_session"] and values["resume"] is not None:
        raise CliUsageError("give --continue or --resume ID, not both.", "--continue")
    if values["sandbox"] and values["no_sandbox"]:
        raise CliUsageError("give --sandbox or --no-sandbox, not both.", "--sandbox")


def _has_credential(values: Values) -> bool:
    """A one-shot run without its provider's API key fails at once (exit 1), before anything else
    is loaded. When the provider may come from elsewhere (a resumed transcript, the settings), or
    cannot be told (a usage error the session reports), the provider reports a missing key itself.
    An `apiKeyHelper` in the settings counts as the Anthropic key (it runs at the first request)."""
    from agentcli.errors import UsageError
    from agentcli.providers import (
        KEY_HELPER_SETTING,
        MODEL_SETTING,
        PROVIDER_SETTING,
        choose,
        credential_problem,
        holds_a_credential,
    )

    try:
        problem = credential_problem(choose(values["model"], values["provider"]).provider)
    except UsageError:
        return True
    if problem is None:
        return True
    resumed = values["continue_session"] or values["resume"] is not None
    if resumed and values["provider"] is None and values["model"] is None and holds_a_credential():
        return True  # the transcript names its provider, which may be the one with the key
    from agentcli.settings import load_settings  # only now: a missing key is the rare case

    try:  # the settings may choose another provider
        settings = load_settings(Path.cwd())
        chosen = choose(
            values["model"],
            values["provider"],
            setting=settings.get(PROVIDER_SETTING),
            model_setting=settings.get(MODEL_SETTING),
        )
        problem = credential_problem(chosen.provider, key_helper=settings.get(KEY_HELPER_SETTING))
    except UsageError:  # unreadable settings: the missing key is still the first thing to fix
        pass
    if problem is None:
        return True
    from agentcli.output.streams import write_err

    write_err(sys.stderr, f"Error: {problem}")
    return False


def _check_choice(flag: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise CliUsageError(f"{value!r} is not one of {', '.join(choices)}.", flag)


def _read_prompt(prompt: str | None) -> str:
    """The prompt argument; `-` or no argument reads stdin. With both an argument and piped
    input (`git diff | agentcli run "review this"`), the input follows the prompt."""
    if prompt == "-" or (prompt is None and not sys.stdin.isatty()):
        prompt = _stdin()
    elif prompt is not None and not sys.stdin.isatty() and _stdin_is_data():
        piped = _stdin()
        if piped.strip():
            prompt = f"{prompt}\n\n{piped}"
    if not prompt or not prompt.strip():
        raise CliUsageError("give a prompt, `-` to read it from stdin, or pipe it in.", "PROMPT")
    return prompt


@functools.cache
def _stdin() -> str:
    """Standard input, read once: when typer reports a usage error found after it was read, the
    command runs again up to that error (see `agentcli.cli.main`) and must see the same input."""
    return sys.stdin.read()


def _stdin_is_data() -> bool:
    """True when stdin is a pipe or a file (not a terminal, nor closed or /dev/null)."""
    import os
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)
