"""Reading the command line without typer, for the calls that must start fast.

`parse(argv)` reads the plain calls of the REPL, `-p` and `run` (with agentcli's options
before `run` too, handed on as `agentcli.cli.shared` says) from the option table
(`agentcli.cli.options`) and returns the values typer would hand the command. Anything else
it declines (None), and typer then reads the command line itself: `--help`, a subcommand
other than `run`, an option before `run` that `run` does not take (`-p`), short flags run
together (`-cv`), a number typer reads more leniently than digits (`+3`, `1_000`), and every
mistake. So usage errors, their messages and the typo suggestions are typer's, word for word,
and `tests/test_cli_parsing.py` checks that whatever is accepted here typer reads alike.

As typer does: an option's value is the next argument whatever it looks like
(`--append-system-prompt --be-brief`), `--` ends the options of `run`, `-` is an argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from agentcli.cli.options import MAIN, SUBCOMMANDS, CliCommand, CliOption


class Parsed(NamedTuple):
    command: CliCommand
    values: dict[str, Any]
    """Each option's value by its name (and the argument's), as typer passes them."""


def parse(argv: Sequence[str]) -> Parsed | None:
    """`argv` (without the program's name) read as typer reads it, or None to leave it to typer."""
    # agentcli's own options: the first argument that is not one would name a subcommand
    read = _read(MAIN, argv, interspersed=False)
    if read is None:
        return None
    given, arguments = read
    if given.get("version"):
        return Parsed(MAIN, _with_defaults(MAIN, given))  # answered before anything else is looked at
    if not arguments:
        return Parsed(MAIN, _with_defaults(MAIN, given))
    command = SUBCOMMANDS.get(arguments[0])
    if command is None:
        return None  # another subcommand, or an argument too many
    taken = {option.name: option for option in command.options}
    if any(name not in taken for name in given):
        return None  # an option the subcommand does not take: typer says so
    read = _read(command, arguments[1:], interspersed=True)
    if read is None:
        return None
    own, arguments = read
    if len(arguments) > 1:
        return None
    values = _with_defaults(command, _handed_on(given, own, taken))
    if command.argument is not None:
        values[command.argument] = arguments[0] if arguments else None
    return Parsed(command, values)


def _handed_on(before: dict[str, Any], own: dict[str, Any], taken: dict[str, CliOption]) -> dict[str, Any]:
    """The options given before a subcommand and its own (see `agentcli.cli.shared`)."""
    merged = {**before, **own}
    for name, value in before.items():
        if taken[name].takes == "texts" and name in own:
            merged[name] = [*value, *own[name]]
    return merged


def _with_defaults(command: CliCommand, given: dict[str, Any]) -> dict[str, Any]:
    return {**{option.name: _initial(option) for option in command.options}, **given}


def _read(command: CliCommand, args: Sequence[str], *, interspersed: bool) -> tuple[dict[str, Any], list[str]] | None:
    """The values of the options given and the arguments among `args`; None for anything typer
    must judge. Without `interspersed`, reading stops at the first argument (the rest is a
    subcommand's)."""
    by_flag = {flag: option for option in command.options for flag in option.flags}
    values: dict[str, Any] = {}
    arguments: list[str] = []
    pending = list(args)
    while pending:
        arg = pending.pop(0)
        if arg == "--":
            if not interspersed:
                return None
            arguments.extend(pending)
            break
        if len(arg) < 2 or not arg.startswith("-"):
            arguments.append(arg)
            if not interspersed:
                arguments.extend(pending)
                break
            continue
        flag, attached = _split(arg)
        option = by_flag.get(flag)
        if option is None or option.takes == "help":
            return None
        if option.takes in ("flag", "version"):
            if attached is not None:
                return None
            values[option.name] = True
            continue
        if attached is None:
            if not pending:
                return None
            attached = pending.pop(0)
        if not _take(option, attached, values):
            return None
    return values, arguments


def _split(arg: str) -> tuple[str, str | None]:
    """`--name=value` and `-Xvalue` into the flag and the value attached to it (None when none is)."""
    if arg.startswith("--"):
        flag, equals, value = arg.partition("=")
        return flag, value if equals else None
    return arg[:2], arg[2:] or None


def _take(option: CliOption, value: str, values: dict[str, Any]) -> bool:
    """Store `value` for `option`; False when typer must judge it."""
    if option.takes == "texts":
        values[option.name] = [*values.get(option.name, []), value]
    elif option.takes == "number":
        if not (value.isascii() and value.isdigit()) or _too_long(value, option):
            return False
        number = int(value)
        if option.minimum is not None and number < option.minimum:
            return False
        if option.maximum is not None and number > option.maximum:
            return False
        values[option.name] = number
    elif option.takes == "amount":
        whole, _, fraction = value.partition(".")
        if not (whole.isascii() and whole.isdigit() and (not fraction or (fraction.isascii() and fraction.isdigit()))):
            return False
        if _too_long(whole, option) or (option.maximum is not None and float(value) > option.maximum):
            return False
        values[option.name] = float(value)
    else:
        values[option.name] = value
    return True


def _too_long(digits: str, option: CliOption) -> bool:
    """More digits than the option's maximum has (and far fewer than `int` refuses: 4,300)."""
    return option.maximum is not None and len(digits.lstrip("0")) > len(str(option.maximum))


def _initial(option: CliOption) -> Any:
    if option.takes == "flag":
        return False
    return option.default  # None for `help` and `version`: typer keeps what their callback returns
