"""Command line: `agentcli` (REPL), `agentcli run PROMPT`, `agentcli -p PROMPT`.

`main()` reads the plain calls with the light parser (`argv`) and runs them (`commands`)
without loading typer; `--version` is answered before anything else loads (then libraries'
logging is routed to the debug log: `agentcli.debug_log`). Everything else,
`--help` and every mistake included, goes to typer (`app`), which knows the same options.
Before either, the `env` of the user's own settings is set in the process's environment
(`agentcli.settings_env`), as if it had been exported in the shell.
A usage error the command itself finds (`--permission-mode nope`) is left to typer too: it
reads the command line again, reaches the same error and reports it as it reports its own.

The process ends with `exit_now` once its work is done (see there).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import NoReturn


def main() -> NoReturn:
    exit_now(exit_code())


def exit_code() -> int:
    """Do what the command line in `sys.argv` asks and return its exit code; the process goes on
    (the tests run the command line in their own process this way)."""
    return _exit_code(_main)


def _main() -> int:
    from agentcli.cli.argv import parse
    from agentcli.cli.commands import CliUsageError, acp_command, echo, main_command, run_command
    from agentcli.output.streams import STDOUT_CLOSED, guard_standard_streams, write_err
    from agentcli.signals import handle_termination

    if not guard_standard_streams():
        write_err(sys.stderr, f"Error: {STDOUT_CLOSED}")
        return 1
    with handle_termination():
        parsed = parse(sys.argv[1:])
        if parsed is not None and parsed.values.get("version"):
            from agentcli import __version__

            return echo(f"agentcli {__version__}")
        _route_logging(verbose=parsed is not None and bool(parsed.values.get("verbose")))
        _apply_settings_env()
        if parsed is not None:
            command = {"run": run_command, "acp": acp_command}.get(parsed.command.name or "", main_command)
            try:
                return command(parsed.values)
            except CliUsageError:
                pass  # typer reports it, below
        from agentcli.cli.app import app

        app()  # always ends with SystemExit
    raise AssertionError("typer returned without exiting")


def _apply_settings_env() -> None:
    """The `env` of the user's own settings, into this process's environment before anything
    reads it (`agentcli.settings_env`)."""
    from pathlib import Path

    from agentcli.settings_env import apply_settings_env

    try:
        cwd = Path.cwd()
    except OSError:  # the folder is gone: the command reports that itself
        return
    apply_settings_env(cwd)


def _route_logging(verbose: bool) -> None:
    """Libraries' logging to the debug log, not the terminal (`agentcli.debug_log`)."""
    from agentcli.debug_log import route_logging
    from agentcli.settings import agentcli_home

    route_logging(agentcli_home(), verbose=verbose)


def _exit_code(run: Callable[[], int]) -> int:
    """What `run` returned, or the code of the SystemExit it raised (as the interpreter would exit)."""
    try:
        return run()
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        from agentcli.output.streams import write_err

        write_err(sys.stderr, str(done.code))
        return 1


def exit_now(code: int) -> NoReturn:
    """Flush stdout and stderr and end the process at once, without tearing the interpreter down.

    Called when the work is over: the answer is printed, the transcript synced and closed, each
    tool call's child processes killed, the tool threads joined (`Session.close`). What the
    interpreter would still do is free every object and module one by one, which takes ~0.5 s
    once the HTTP and SDK modules are loaded, time in which the run looks unfinished to whoever
    waits for it. Nothing agentcli needs runs at exit: it registers no atexit handler.
    """
    from agentcli.output.streams import silence

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # gone (`| head`) or closed: nothing left to show there
            silence(stream)
    os._exit(code)
