"""Command line: `agentcli` (REPL), `agentcli run PROMPT`, `agentcli -p PROMPT`.

Only typer is imported here; the SDK and the harness load when a command actually runs.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from agentcli import __version__
from agentcli.option_typos import check_options

if TYPE_CHECKING:
    from typer._click.core import Context  # the context typer's commands are parsed with (for types only)

    from agentcli.session import SessionOptions

ENVIRONMENT = """\b
Environment:
  ANTHROPIC_API_KEY     the API key (ANTHROPIC_AUTH_TOKEN instead: a bearer token)
  ANTHROPIC_AUTH_TOKEN  a bearer token, for a proxy or gateway that wants one
  ANTHROPIC_BASE_URL    an Anthropic-compatible server (Ollama, llama.cpp, vLLM, a proxy)
  AGENTCLI_MODEL        the model when --model is not given
  AGENTCLI_HOME         settings, history and sessions (default ~/.agentcli)"""
EXIT_CODES = """Exit codes: 0 done · 1 runtime failure (API error, turn or token limit) · 2 usage
error · 130 interrupted (Ctrl-C) · 143 SIGTERM · 129 SIGHUP · 141 the output pipe was closed
(`| head`). A signal kills the running command's process group; `-c` continues the session."""
MAIN_HELP = """agentcli: a coding assistant in your terminal.

`agentcli` with no command starts the interactive REPL in the current directory (the
project); `agentcli run PROMPT`, `-p PROMPT` or a pipe runs one prompt and exits."""
MAIN_EPILOG = f"""{ENVIRONMENT}

{EXIT_CODES}

\b
Examples:
  agentcli --permission-mode acceptEdits     the REPL, edits allowed without asking
  agentcli run "fix the failing test in tests/test_api.py"
  git diff | agentcli run "review this diff"
"""
RUN_EPILOG = f"""--output-format text prints the answer alone on stdout and one progress line per tool
call on stderr; json prints one result object; stream-json one object per line as the run goes.

{ENVIRONMENT}

{EXIT_CODES}

\b
Examples:
  agentcli run "summarise README.md"
  agentcli run -c --allowed-tools "Edit,Bash(pytest:*)" "now make the tests pass"
  agentcli run --output-format json - < prompt.txt
"""


def _echo(text: str) -> None:
    """Print to stdout; an unwritable stdout ends agentcli with one line on stderr (see output.streams)."""
    from agentcli.errors import OutputClosed
    from agentcli.output.streams import write_err, write_out

    try:
        write_out(sys.stdout, text + "\n")
    except OutputClosed as lost:
        if not lost.quiet:
            write_err(sys.stderr, f"Error: {lost}")
        raise typer.Exit(lost.exit_code) from None


def _help(ctx: typer.Context, value: bool) -> None:
    if value:
        _echo(ctx.get_help())
        raise typer.Exit()


def _version(value: bool) -> None:
    if value:
        _echo(f"agentcli {__version__}")
        raise typer.Exit()


class _Group(TyperGroup):
    """The top-level command: a mistyped option gets the real one suggested."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        check_options(ctx, self.get_params(ctx), args, interspersed=False)
        return super().parse_args(ctx, args)


class _Command(TyperCommand):
    """`agentcli run`: a mistyped option gets the real one suggested."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        check_options(ctx, self.get_params(ctx), args, interspersed=True)
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_Group,
    add_completion=False,
    add_help_option=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help=MAIN_HELP,
    epilog=MAIN_EPILOG,
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
HelpOpt = Annotated[
    bool, typer.Option("--help", "-h", callback=_help, is_eager=True, help="Show this message and exit.")
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", help="Show details, including tracebacks.")]
ContinueOpt = Annotated[
    bool, typer.Option("--continue", "-c", help="Continue the most recent conversation in this directory.")
]
McpConfigOpt = Annotated[
    list[str] | None,
    typer.Option("--mcp-config", metavar="FILE", help='MCP servers from FILE ({"mcpServers": ...}); repeatable.'),
]
StrictMcpOpt = Annotated[
    bool, typer.Option("--strict-mcp-config", help="Use only the --mcp-config servers (not .mcp.json, not the user's).")
]
ResumeOpt = Annotated[
    str | None, typer.Option("--resume", "-r", metavar="ID", help="Resume the conversation with this session id.")
]


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
    mcp_config: McpConfigOpt = None,
    strict_mcp_config: StrictMcpOpt = False,
    version: Annotated[
        bool, typer.Option("--version", "-v", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
    help_: HelpOpt = False,
) -> None:
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
        mcp_config,
        strict_mcp_config,
    )
    if once:
        _run_once(options, print_prompt, output_format, verbose)
    from agentcli.repl.app import run_repl

    raise typer.Exit(run_repl(options, verbose=verbose))


@app.command("run", cls=_Command, add_help_option=False, epilog=RUN_EPILOG)
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
    mcp_config: McpConfigOpt = None,
    strict_mcp_config: StrictMcpOpt = False,
    help_: HelpOpt = False,
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
        mcp_config,
        strict_mcp_config,
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
    mcp_config: list[str] | None = None,
    strict_mcp_config: bool = False,
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
        mcp_config=mcp_config or [],
        strict_mcp_config=strict_mcp_config,
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
    from agentcli.output.streams import STDOUT_CLOSED, guard_standard_streams, write_err
    from agentcli.signals import handle_termination

    if not guard_standard_streams():
        write_err(sys.stderr, f"Error: {STDOUT_CLOSED}")
        raise SystemExit(1)
    with handle_termination():
        app()
