"""`agentcli plugin …`: marketplaces and plugins (`agentcli.plugins.manage` does the work).

    agentcli plugin marketplace add SOURCE          a folder, a git URL, or GitHub's owner/repo
    agentcli plugin marketplace list|update [NAME]|remove NAME
    agentcli plugin install NAME@MARKETPLACE        (or NAME, a folder, a git URL) [--scope] [--yes]
    agentcli plugin list
    agentcli plugin enable|disable NAME@MARKETPLACE [--scope user|project|local] [--yes]
    agentcli plugin uninstall NAME@MARKETPLACE
    agentcli plugin update [NAME@MARKETPLACE] [--yes]

Installing, enabling and updating show what the plugin brings and ask on the terminal; `--yes`
answers for a script. Without a terminal and without `--yes` they refuse (exit 1), having printed
what the plugin brings. A failure is one line on stderr and exit 1; a usage error exit 2.

Not on the fast path: typer reads these (`agentcli.cli.app` adds this sub-app).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from agentcli.cli.shared import Subcommand
from agentcli.output.streams import write_err

if TYPE_CHECKING:
    from agentcli.plugins.manage import PluginCommands, Scope

plugin_app = typer.Typer(
    name="plugin",
    help="Install Claude Code plugins from marketplaces (git repositories or folders), and enable, "
    "disable, update and uninstall them.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
marketplace_app = typer.Typer(
    name="marketplace",
    help="Add, list, update and remove plugin marketplaces.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
plugin_app.add_typer(marketplace_app)

YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do it without asking (for scripts).")]
ScopeOption = Annotated[
    str,
    typer.Option(
        "--scope",
        "-s",
        help="user ($AGENTCLI_HOME/settings.json), project (.agentcli/settings.json, for the team; "
        "also your local yes) or local (.agentcli/settings.local.json).",
    ),
]
Key = Annotated[str, typer.Argument(metavar="NAME@MARKETPLACE")]


def _run(action: Callable[[PluginCommands], None], yes: bool = False) -> None:
    from agentcli.errors import UsageError
    from agentcli.plugins.manage import PluginCommands
    from agentcli.plugins.manifest import PluginError
    from agentcli.safe_text import for_terminal

    commands = PluginCommands(Path.cwd(), lambda line: print(for_terminal(line), flush=True), _asker(yes))
    try:
        action(commands)
    except (PluginError, UsageError, OSError) as error:  # a settings file, the store's folder
        said = (
            str(error)
            if not isinstance(error, OSError) or not error.strerror
            else f"{error.strerror}: {error.filename}"
        )
        write_err(sys.stderr, f"Error: {for_terminal(said)}")
        raise typer.Exit(2 if isinstance(error, UsageError) else 1) from None
    raise typer.Exit(0)


def _asker(yes: bool) -> Callable[[list[str], str], bool] | None:
    def show(lines: list[str], question: str) -> bool:
        for line in lines:
            print(line, flush=True)
        if yes:
            return True
        try:
            return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
        except EOFError:
            return False

    return show if yes or sys.stdin.isatty() else None


def _scope(scope: str) -> Scope:
    if scope == "user" or scope == "project" or scope == "local":
        return cast("Scope", scope)
    raise typer.BadParameter(f"{scope!r} is not one of user, project, local.", param_hint="--scope")


@marketplace_app.command("add", cls=Subcommand, no_args_is_help=True)
def marketplace_add(source: Annotated[str, typer.Argument(metavar="SOURCE")]) -> None:
    """Add a marketplace: a local folder, a git URL, or GitHub's owner/repo."""
    _run(lambda c: c.marketplace_add(source))


@marketplace_app.command("list", cls=Subcommand)
def marketplace_list() -> None:
    """The marketplaces added (and those your or the project's settings suggest)."""
    _run(lambda c: c.marketplace_list())


@marketplace_app.command("update", cls=Subcommand)
def marketplace_update(name: Annotated[str | None, typer.Argument(metavar="[NAME]")] = None) -> None:
    """Fetch a marketplace (or every one) again."""
    _run(lambda c: c.marketplace_update(name))


@marketplace_app.command("remove", cls=Subcommand, no_args_is_help=True)
def marketplace_remove(name: Annotated[str, typer.Argument(metavar="NAME")]) -> None:
    """Remove a marketplace (its installed plugins stay)."""
    _run(lambda c: c.marketplace_remove(name))


@plugin_app.command("install", cls=Subcommand, no_args_is_help=True)
def install(
    spec: Annotated[str, typer.Argument(metavar="NAME@MARKETPLACE|FOLDER|GIT-URL")],
    scope: ScopeOption = "user",
    yes: YesOption = False,
) -> None:
    """Install a plugin and enable it, once you said yes to what it brings."""
    chosen = _scope(scope)
    _run(lambda c: c.install(spec, chosen), yes)


@plugin_app.command("list", cls=Subcommand)
def list_plugins() -> None:
    """The installed plugins (agentcli's and Claude Code's), enabled or not."""
    _run(lambda c: c.list_installed())


@plugin_app.command("enable", cls=Subcommand, no_args_is_help=True)
def enable(key: Key, scope: ScopeOption = "user", yes: YesOption = False) -> None:
    """Enable an installed plugin, once you said yes to what it brings."""
    chosen = _scope(scope)
    _run(lambda c: c.enable(key, chosen), yes)


@plugin_app.command("disable", cls=Subcommand, no_args_is_help=True)
def disable(key: Key, scope: ScopeOption = "user") -> None:
    """Disable a plugin (it stays installed)."""
    chosen = _scope(scope)
    _run(lambda c: c.disable(key, chosen))


@plugin_app.command("uninstall", cls=Subcommand, no_args_is_help=True)
def uninstall(key: Key) -> None:
    """Uninstall a plugin: its files go, and it is no longer enabled."""
    _run(lambda c: c.uninstall(key))


@plugin_app.command("update", cls=Subcommand)
def update(
    key: Annotated[str | None, typer.Argument(metavar="[NAME@MARKETPLACE]")] = None, yes: YesOption = False
) -> None:
    """Fetch a plugin (or every one) again and move its pin, once you said yes to what it brings."""
    _run(lambda c: c.update(key), yes)
