"""The command line as typer sees it: `--help`, and every call the light parser leaves to it.

The commands' parameters are built from the option table (`agentcli.cli.options`), so typer
and the light parser (`agentcli.cli.argv`) know the same options; the commands themselves
are `agentcli.cli.commands`, which both call with the same values.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

from agentcli import __version__
from agentcli.cli import commands
from agentcli.cli.options import ACP, BATCH, MAIN, RAY_LOCAL, REWIND, RUN, STATS, CliCommand, CliOption
from agentcli.cli.shared import Subcommand, keep_for_subcommand
from agentcli.option_typos import check_options

if TYPE_CHECKING:
    from typer._click.core import Context  # the context typer's commands are parsed with (for types only)

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

BATCH_EPILOG = """TASKS is a JSONL file (one task a line: id, prompt, workdir or repo [+ commit], setup,
check, model, max_turns, timeout, permission_mode, allowed_tools) or a folder of Harbor tasks.
The options `run` takes are every task's defaults; a task's own fields win. Running the same
command again runs only the tasks without a result in DIR/results.jsonl. Exit codes: 0 every
task passed · 1 some did not, or were not started · 2 usage error · 130 interrupted.

\b
Examples:
  agentcli batch tasks.jsonl --out runs/nightly --workers 4 --max-budget-usd 20
  agentcli batch harbor-tasks/ --out runs/eval --ray auto --retries 2
"""


def _help(ctx: typer.Context, value: bool) -> None:
    if value:
        raise typer.Exit(commands.echo(ctx.get_help()))


def _version(value: bool) -> None:
    if value:
        raise typer.Exit(commands.echo(f"agentcli {__version__}"))


class _Group(TyperGroup):
    """The top-level command: a mistyped option gets the real one suggested."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        check_options(ctx, self.get_params(ctx), args, interspersed=False)
        return super().parse_args(ctx, args)


_TYPES: dict[str, Any] = {
    "flag": bool,
    "text": str | None,
    "number": int | None,
    "amount": float | None,
    "texts": list[str] | None,
    "help": bool,
    "version": bool,
}
_EAGER: dict[str, Callable[..., None]] = {"help": _help, "version": _version}


def _parameter(option: CliOption) -> inspect.Parameter:
    """The table's option as typer reads it: a keyword parameter annotated with its `typer.Option`."""
    callback = _EAGER.get(option.takes)
    info = typer.Option(
        *option.flags,
        metavar=option.metavar,
        help=option.help,
        min=option.minimum,
        max=option.maximum,
        callback=callback,
        is_eager=callback is not None,
        show_default=option.default is not None,
    )
    kind = str if option.default is not None else _TYPES[option.takes]
    default: Any = False if option.takes in ("flag", "help", "version") else option.default
    return inspect.Parameter(
        option.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, info]
    )


def _declared(command: CliCommand) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a `(ctx, **values)` function the parameters typer should read for `command`."""

    def declare(function: Callable[..., None]) -> Callable[..., None]:
        parameters = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
        if command.argument is not None:
            argument = typer.Argument(metavar=command.argument_metavar, help=command.argument_help)
            parameters.append(
                inspect.Parameter(
                    command.argument,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=None,
                    annotation=Annotated[str | None, argument],
                )
            )
        parameters += [_parameter(option) for option in command.options]
        function.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        return function

    return declare


def _finish(command: Callable[[commands.Values], int], values: commands.Values) -> NoReturn:
    try:
        code = command(values)
    except commands.CliUsageError as error:
        raise typer.BadParameter(error.message, param_hint=error.param_hint) from None
    raise typer.Exit(code)


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


@app.callback(invoke_without_command=True)
@_declared(MAIN)
def main_command(ctx: typer.Context, **values: Any) -> None:
    if ctx.invoked_subcommand is None:
        _finish(commands.main_command, values)
    keep_for_subcommand(ctx, values)


@app.command("run", cls=Subcommand, add_help_option=False, epilog=RUN_EPILOG)
@_declared(RUN)
def run(ctx: typer.Context, **values: Any) -> None:
    """Run one prompt to completion and print the answer (scripts and CI)."""
    _finish(commands.run_command, values)


@app.command("acp", cls=Subcommand, add_help_option=False)
@_declared(ACP)
def acp(ctx: typer.Context, **values: Any) -> None:
    """Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains, Neovim, Emacs)."""
    _finish(commands.acp_command, values)


@app.command("stats", cls=Subcommand, add_help_option=False)
@_declared(STATS)
def stats(ctx: typer.Context, **values: Any) -> None:
    """Figures from your sessions' transcripts: turns per task, tool failures, stops, tokens, cost, latency."""
    _finish(commands.stats_command, values)


class BatchCommand(Subcommand):
    """`agentcli batch`, whose `--ray` may come without its ADDRESS: alone (last, before another
    option, or before TASKS, a file or folder that exists) it means a local cluster."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _ray_alone(args))


def _ray_alone(args: list[str]) -> list[str]:
    import os

    given: list[str] = []
    for index, arg in enumerate(args):
        after = args[index + 1] if index + 1 < len(args) else None
        alone = after is None or after.startswith("-") or os.path.exists(after)
        given.append(f"--ray={RAY_LOCAL}" if arg == "--ray" and alone else arg)
    return given


@app.command("batch", cls=BatchCommand, add_help_option=False, epilog=BATCH_EPILOG)
@_declared(BATCH)
def batch(ctx: typer.Context, **values: Any) -> None:
    """Run many tasks, each in a workspace of its own, on this machine or a Ray cluster; resumable."""
    _finish(commands.batch_command, values)


@app.command("rewind", cls=Subcommand, add_help_option=False)
@_declared(REWIND)
def rewind(ctx: typer.Context, **values: Any) -> None:
    """List a session's turns and checkpoints, or take its files or conversation back to before a turn."""
    from agentcli.cli.rewind import rewind_command

    _finish(rewind_command, values)


def _add_subcommands() -> None:
    from agentcli.cli.mcp import mcp_app
    from agentcli.cli.plugin import plugin_app

    app.add_typer(mcp_app)
    app.add_typer(plugin_app)


_add_subcommands()
