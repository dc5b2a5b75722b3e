"""Options given before a subcommand (`agentcli --mcp-config F run "..."`), handed on to it.

`agentcli`'s own options (the REPL's, `options.MAIN`) may come before a subcommand as well as
after it. The top-level command keeps those given on the command line (`keep_for_subcommand`);
a subcommand (`Subcommand`) takes them as it starts: for a repeatable option, the values given
before come first, then its own; for any other, the one given before counts unless the
subcommand's own options give it again (the last one given counts, as everywhere). An option
the subcommand does not take is a usage error (exit 2) naming it, never silently dropped.

The light parser (`argv`) reads `agentcli OPTIONS run OPTIONS PROMPT` the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typer.core import TyperCommand

from agentcli.cli.options import MAIN
from agentcli.option_typos import check_options

if TYPE_CHECKING:
    from typer._click.core import Context  # the context typer's commands are parsed with (for types only)

BEFORE_SUBCOMMAND = "agentcli.options_before_subcommand"
"""The key of `Context.meta` (shared by a command and its subcommands) that holds them."""


def keep_for_subcommand(ctx: Context, values: dict[str, Any]) -> None:
    """The top-level command is about to hand over to a subcommand: keep the options it was given."""
    from typer._click.core import ParameterSource

    given = {
        name: value for name, value in values.items() if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
    }
    ctx.meta[BEFORE_SUBCOMMAND] = given


class Subcommand(TyperCommand):
    """A subcommand: a mistyped option gets the real one suggested, and the options given before
    it are taken as its own (or refused)."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        check_options(ctx, self.get_params(ctx), args, interspersed=True)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Context) -> Any:
        from typer._click.core import ParameterSource

        params = {param.name: param for param in self.params}
        for name, value in ctx.meta.get(BEFORE_SUBCOMMAND, {}).items():
            param = params.get(name)
            if param is None:
                flag = next(option.flags[0] for option in MAIN.options if option.name == name)
                ctx.fail(
                    f"{flag} was given before the subcommand, and {ctx.command_path} does not take it: "
                    f"remove it ({ctx.command_path} --help lists what it takes)."
                )
            if param.multiple:
                ctx.params[name] = [*value, *(ctx.params.get(name) or [])]
            elif ctx.get_parameter_source(name) is not ParameterSource.COMMANDLINE:
                ctx.params[name] = value
        return super().invoke(ctx)
