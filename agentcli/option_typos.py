"""A mistyped option on the command line gets the real one suggested.

`check_options` runs before typer parses the arguments. Typer's own hint names whatever
option is nearest however far it is (`--bogus`: "Possible options: --verbose"); this one
suggests only a close match (`--modle`: "Did you mean --model?") and otherwise lists the
options there are. It skips the value of an option that takes one, so
`--append-system-prompt --be-brief` is left to mean what it says.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from typer.core import TyperOption

if TYPE_CHECKING:
    from typer._click.core import Context  # the context typer's commands are parsed with (for types only)

CLOSE_ENOUGH = 0.6
"""difflib's similarity ratio (names compared without their dashes): `modle`/`model` is 0.8,
`bogus`/`verbose` 0.5."""
CLOSE_TIE = 0.15
"""A second suggestion is made only when it is within this much of the closest one."""


def check_options(ctx: Context, params: Iterable[object], args: list[str], *, interspersed: bool) -> None:
    """Fail (exit 2, via `ctx.fail`) on the first unknown `--option` in `args`. With
    `interspersed` false (a command group) the scan stops at the first positional argument,
    where the subcommand and its own options begin."""
    takes_value: dict[str, bool] = {}
    for param in params:
        if isinstance(param, TyperOption):
            for name in [*param.opts, *param.secondary_opts]:
                takes_value[name] = not param.is_flag and not param.count
    value_next = False
    for arg in args:
        if value_next:
            value_next = False
            continue
        if arg == "--":
            return
        if arg == "-" or not arg.startswith("-"):
            if not interspersed:
                return
            continue
        name = arg.split("=", 1)[0] if arg.startswith("--") else arg[:2]
        if name.startswith("--") and name not in takes_value:
            ctx.fail(_unknown(name, [n for n in takes_value if n.startswith("--")], ctx.command_path))
        value_next = takes_value.get(name, False) and name == arg  # `--model=x` and `-rID` carry theirs


def _unknown(name: str, options: list[str], command: str) -> str:
    close = _closest(name[2:], [option[2:] for option in options])
    if close:
        return f"No such option: {name}. Did you mean {' or '.join('--' + match for match in close)}?"
    return f"No such option: {name}. The options are {', '.join(options)}; {command} --help describes them."


def _closest(typed: str, names: list[str]) -> list[str]:
    """The one or two names close to `typed`; a second only when it is about as close as the first
    (`--outputformat` is `--output-format`, not also `--input-format`)."""
    scored = sorted(((difflib.SequenceMatcher(None, typed, name).ratio(), name) for name in names), reverse=True)
    close = [(score, name) for score, name in scored[:2] if score >= CLOSE_ENOUGH]
    return [name for score, name in close if score >= close[0][0] - CLOSE_TIE]
