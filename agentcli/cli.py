"""Command line: `agentcli` (REPL), `agentcli run PROMPT`, `agentcli -p PROMPT`.

Only typer is imported here; the SDK and the harness load when a command actually runs.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from agentcli import __version__

if TYPE_CHECKING:
    from agentcli.session import SessionOptions

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="agentcli: a coding assistant in your terminal.",
)

OUTPUT_FORMATS = ("text", "json", "stream-json")
PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model", metavar="NAME", help="Model name (default: $AGENTCLI_MODEL, settings, or claude-sonnet-5-5)."
    ),
]
ModeOpt = Annotated[
    str | None,
    typer.Option(
        "--permission-mode", metavar="MODE", help=f"One of: {', '.join(PERMISSION_MODES)}.", show_default=False
    ),
]
AllowedOpt = Annotated[
    list[str] | None,
    typer.Option("--allowed-tools", metavar="RULES", help='Rules to allow, e.g. "Read,Bash(git status:*)".'),
]
DisallowedOpt = Annotated[list[str] | None, typer.Option("--disallowed-tools", metavar="RULES", help="Rules to deny.")]
AppendOpt = Annotated[
    str | None,
    typer.Option("--append-system-prompt", metavar="TEXT", help="Text added at the end of the system prompt."),
]
MaxTurnsOpt = Annotated[
    int | None, typer.Option("--max-turns", min=1, metavar="N", help="Stop (exit 1) after this many model turns.")
]
FormatOpt = Annotated[str, typer.Option("--output-format", metavar="FORMAT", help="text, json or stream-json.")]
BudgetOpt = Annotated[
    int | None,
    typer.Option("--max-budget-tokens", min=1, metavar="N", help="Stop after this many tokens (default 10M)."),
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", help="Show details, including tracebacks.")]
ContinueOpt = Annotated[
    bool, typer.Option("--continue", "-c", help="Continue the most recent conversation in this directory.")
]
ResumeOpt = Annotated[
    str | None, typer.Option("--resume", "-r", metavar="ID", help="Resume the conversation with this session id.")
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentcli {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def main_command(
    ctx: typer.Context,
    print_prompt: Annotated[
        str | None,
        typer.Option("-p", "--print", metavar="PROMPT", help="Run PROMPT once and print the answer (like `run`)."),
    ] = None,
    model: ModelOpt = None,
    permission_mode: ModeOpt = None,
    allowed_tools: AllowedOpt = None,
    disallowed_tools: DisallowedOpt = None,
    append_system_prompt: AppendOpt = None,
    max_turns: MaxTurnsOpt = None,
    output_format: FormatOpt = "text",
    max_budget_tokens: BudgetOpt = None,
    verbose: VerboseOpt = False,
    continue_session: ContinueOpt = False,
    resume: ResumeOpt = None,
    version: Annotated[
        bool, typer.Option("--version", "-v", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Start the interactive assistant, or run one prompt with -p."""
    if ctx.invoked_subcommand is not None:
        return
    once = print_prompt is not None or not sys.stdin.isatty()  # `echo question | agentcli` runs once
    if once:
        _require_credential()
    options = _session_options(
        model,
        permission_mode,
        allowed_tools,
        disallowed_tools,
        append_system_prompt,
        max_turns,
        max_budget_tokens,
        continue_session,
        resume,
    )
    if once:
        _run_once(options, print_prompt, output_format, verbose)
    from agentcli.repl.app import run_repl

    raise typer.Exit(run_repl(options, verbose=verbose))


@app.command("run")
def run(
    prompt: Annotated[
        str | None, typer.Argument(metavar="PROMPT", help="The prompt; `-` or a pipe reads it from stdin.")
    ] = None,
    model: ModelOpt = None,
    permission_mode: ModeOpt = None,
    allowed_tools: AllowedOpt = None,
    disallowed_tools: DisallowedOpt = None,
    append_system_prompt: AppendOpt = None,
    max_turns: MaxTurnsOpt = None,
    output_format: FormatOpt = "text",
    max_budget_tokens: BudgetOpt = None,
    verbose: VerboseOpt = False,
    continue_session: ContinueOpt = False,
    resume: ResumeOpt = None,
) -> None:
    """Run one prompt to completion and print the answer (scripts and CI)."""
    _require_credential()
    options = _session_options(
        model,
        permission_mode,
        allowed_tools,
        disallowed_tools,
        append_system_prompt,
        max_turns,
        max_budget_tokens,
        continue_session,
        resume,
    )
    _run_once(options, prompt, output_format, verbose)


def _run_once(base: SessionOptions, prompt: str | None, output_format: str, verbose: bool) -> NoReturn:
    """`run` and `-p`: one prompt, then exit with the run's code."""
    _check_choice("--output-format", output_format, OUTPUT_FORMATS)
    text = _read_prompt(prompt)
    from dataclasses import asdict

    from agentcli.runner import RunOptions, run_once

    options = RunOptions(**asdict(base), prompt=text, output_format=output_format, verbose=verbose)
    raise typer.Exit(run_once(options))


def _session_options(
    model: str | None,
    permission_mode: str | None,
    allowed_tools: list[str] | None,
    disallowed_tools: list[str] | None,
    append_system_prompt: str | None,
    max_turns: int | None,
    max_budget_tokens: int | None,
    continue_session: bool = False,
    resume: str | None = None,
) -> SessionOptions:
    """The options `run` and the REPL share, checked."""
    if permission_mode is not None:
        _check_choice("--permission-mode", permission_mode, PERMISSION_MODES)
    if continue_session and resume is not None:
        raise typer.BadParameter("give --continue or --resume ID, not both.", param_hint="--continue")
    from agentcli.session import SessionOptions

    return SessionOptions(
        model=model,
        permission_mode=permission_mode,
        allowed_tools=allowed_tools or [],
        disallowed_tools=disallowed_tools or [],
        append_system_prompt=append_system_prompt,
        max_turns=max_turns,
        max_budget_tokens=max_budget_tokens,
        continue_session=continue_session,
        resume=resume,
    )


def _require_credential() -> None:
    """A one-shot run without an API key fails at once (exit 1), before anything else is loaded."""
    from agentcli.credentials import MISSING_CREDENTIAL, anthropic_credential

    if anthropic_credential() is None:
        typer.echo(f"Error: {MISSING_CREDENTIAL}", err=True)
        raise typer.Exit(1)


def _check_choice(flag: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(choices)}.", param_hint=flag)


def _read_prompt(prompt: str | None) -> str:
    """The prompt argument; `-` or no argument reads stdin. With both an argument and piped
    input (`git diff | agentcli run "review this"`), the input follows the prompt."""
    if prompt == "-" or (prompt is None and not sys.stdin.isatty()):
        prompt = sys.stdin.read()
    elif prompt is not None and not sys.stdin.isatty() and _stdin_is_data():
        piped = sys.stdin.read()
        if piped.strip():
            prompt = f"{prompt}\n\n{piped}"
    if not prompt or not prompt.strip():
        raise typer.BadParameter("give a prompt, `-` to read it from stdin, or pipe it in.", param_hint="PROMPT")
    return prompt


def _stdin_is_data() -> bool:
    """True when stdin is a pipe or a file (not a terminal, nor closed or /dev/null)."""
    import os
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def main() -> None:
    from agentcli.signals import handle_termination

    with handle_termination():
        app()
