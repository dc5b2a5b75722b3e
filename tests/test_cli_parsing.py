"""The light parser reads every command line it accepts exactly as typer does, and leaves the
rest to typer: help, subcommands it does not know, and every mistake (whose messages are
then typer's own, typo suggestions included)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

from agentcli.cli import app as cli_app
from agentcli.cli import commands, mcp_list
from agentcli.cli import mcp as cli_mcp
from agentcli.cli.argv import parse
from agentcli.cli.options import MAIN, RUN, CliCommand, CliOption


def typer_reads(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, Any]] | int:
    """The command typer runs for `argv` and the values it hands it, or the exit code when it
    runs none (a usage error, help). `mcp list` hands on its MCP options, `mcp add` and
    `mcp remove` their server's name (nothing is written)."""
    called: list[tuple[str, dict[str, Any]]] = []

    def recorder(name: str) -> Any:
        def record(values: commands.Values) -> int:
            called.append((name, dict(values)))
            return 0

        return record

    def list_servers(cwd: Path, flag_files: list[Path], strict: bool, plugin_dirs: list[Path]) -> tuple[str, list[str]]:
        options = {
            "mcp_config": [str(f) for f in flag_files] or None,
            "strict_mcp_config": strict,
            "plugin_dirs": [str(f) for f in plugin_dirs] or None,
        }
        called.append(("mcp list", options))
        return "", []

    def edit(name: str) -> Any:
        return lambda path, server, *rest, **more: called.append((name, {"name": server}))

    monkeypatch.setattr(commands, "main_command", recorder("agentcli"))
    monkeypatch.setattr(commands, "run_command", recorder("run"))
    monkeypatch.setattr(commands, "stats_command", recorder("stats"))
    monkeypatch.setattr(mcp_list, "server_report", list_servers)
    monkeypatch.setattr(cli_mcp, "add_server", edit("mcp add"))
    monkeypatch.setattr(cli_mcp, "remove_server", edit("mcp remove"))
    monkeypatch.setattr(cli_mcp, "server_names", lambda path: {"demo"})
    monkeypatch.setattr(cli_mcp, "_approve", lambda name: "")
    with pytest.raises(SystemExit) as done:
        typer_command()(argv, prog_name="agentcli")
    if called:
        assert done.value.code == 0
        [reading] = called
        return reading
    assert isinstance(done.value.code, int)
    return done.value.code


@functools.cache
def typer_command() -> typer.core.TyperGroup:
    """What `cli_app.app(argv)` builds afresh on each call (a tenth of this file's time, 800 times
    over): its commands look up what they run when they run, so the monkeypatches above still apply."""
    group = typer.main.get_command(cli_app.app)
    assert isinstance(group, typer.core.TyperGroup)
    return group


def light_reads(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    parsed = parse(argv)
    if parsed is None:
        return None
    return parsed.command.name or "agentcli", parsed.values


SAMPLES: dict[str, list[str]] = {
    "text": ["x", "", "-", "--looks-like-an-option", "a=b", "two words", "é"],
    "texts": ["Read", "Edit,Bash(git status:*)", ""],
    "number": ["1", "7", "0042", "1000000"],
    "amount": ["0", "2", "2.5", "0.05", "10.000"],
}
CHOSEN = {"permission_mode": "plan", "output_format": "json", "tool_protocol": "xml"}
"""A value of the choices for options the command checks after parsing."""


def spellings(option: CliOption, value: str) -> Iterator[list[str]]:
    """Every way to give `option` one `value`."""
    for flag in option.flags:
        yield [flag, value]
        if flag.startswith("--"):
            yield [f"{flag}={value}"]
        elif value:
            yield [f"{flag}{value}"]


def accepted_command_lines(command: CliCommand) -> Iterator[list[str]]:
    """Each option alone in every spelling with every sample value, repeated, and together;
    `run` with its prompt before, after and behind `--`."""
    prefix = [command.name] if command.name else []
    for option in command.options:
        if option.takes == "help":
            continue
        if option.takes in ("flag", "version"):
            for flag in option.flags:
                yield [*prefix, flag]
                yield [*prefix, flag, flag]
            continue
        samples = [CHOSEN[option.name]] if option.name in CHOSEN else SAMPLES[option.takes]
        for value in samples:
            for spelling in spellings(option, value):
                yield [*prefix, *spelling]
        first, second = samples[0], samples[-1]
        yield [*prefix, option.flags[0], first, option.flags[-1], second]  # repeated: last wins, or both
    everything = [
        part
        for option in command.options
        if option.takes not in ("help", "version")
        for part in ([option.flags[0]] if option.takes == "flag" else [option.flags[0], _value(option)])
    ]
    yield [*prefix, *everything]
    if command is RUN:
        for prompt in ("hi", "-", ""):
            yield ["run", prompt]
            yield ["run", prompt, "--model", "m"]
            yield ["run", "--model", "m", prompt, "--verbose"]
        yield ["run", "--", "--model"]
        yield ["run", "--model", "m", "--", "-"]
        yield ["run"]
        # agentcli's options before `run`: each in every spelling, and given on both sides
        shared = CliCommand(None, tuple(option for option in MAIN.options if option in RUN.options))
        for line in accepted_command_lines(shared):
            if line:
                yield [*line, "run", "hi"]
        yield ["--model", "a", "run", "--model", "b", "hi"]
        yield ["--allowed-tools", "Read", "run", "--allowed-tools", "Edit", "hi", "--allowed-tools", "Bash"]
        yield ["-c", "--output-format", "json", "run", "--output-format", "stream-json", "hi"]
    else:
        yield []


def _value(option: CliOption) -> str:
    return CHOSEN.get(option.name) or SAMPLES[option.takes][0]


@pytest.mark.parametrize("argv", [*accepted_command_lines(MAIN), *accepted_command_lines(RUN)], ids=" ".join)
def test_what_the_light_parser_accepts_typer_reads_alike(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    light = light_reads(argv)
    assert light is not None, "a plain command line was left to typer"
    if light[1].get("version"):
        assert typer_reads(argv, monkeypatch) == 0  # typer answers --version without running the command
        return
    assert light == typer_reads(argv, monkeypatch)


def test_every_option_typer_knows_is_in_the_table() -> None:
    group = typer.main.get_command(cli_app.app)
    assert isinstance(group, typer.core.TyperGroup)
    for command, table in ((group, MAIN), (group.commands["run"], RUN)):
        typer_flags = {flag for param in command.params for flag in param.opts}
        assert typer_flags - {"prompt"} == {flag for option in table.options for flag in option.flags}


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["run", "-h"],
        ["run", "hi", "--help"],
        ["--modle", "x"],  # typos: typer suggests the real option
        ["run", "--max-turn", "3", "hi"],
        ["run", "hi", "--outputformat=json"],
        ["--bogus"],
        ["-x"],
        ["run", "-m", "x", "hi"],
        ["--model"],  # a value missing
        ["run", "hi", "--resume"],
        ["run", "--verbose=yes", "hi"],  # a flag given a value
        ["-cv"],  # short flags together
        ["run", "-cr", "abc", "hi"],
        ["run", "a", "b"],  # an argument too many
        ["hi"],  # no such command
        ["-p", "hi", "extra"],
        ["-p", "x", "run", "hi"],  # an option before `run` that `run` does not take
        ["--model", "x", "stats"],  # before another subcommand
        ["--", "run", "hi"],
        ["run", "--max-turns", "0", "hi"],  # numbers typer must judge
        ["run", "--max-turns", "-1", "hi"],
        ["run", "--max-turns", "+3", "hi"],
        ["run", "--max-turns", " 3", "hi"],
        ["run", "--max-turns", "1_000", "hi"],
        ["run", "--max-turns", "three", "hi"],
        ["--max-budget-tokens", "٣"],
        ["run", "--max-budget-usd", "-1", "hi"],  # amounts typer must judge
        ["run", "--max-budget-usd", ".5", "hi"],
        ["run", "--max-budget-usd", "1e3", "hi"],
        ["run", "--max-budget-usd", "two", "hi"],
    ],
    ids=" ".join,
)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert light_reads(argv) is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--permission-mode", "nope", "hi"], "Invalid value for --permission-mode: 'nope' is not one of"),
        (["run", "--output-format", "xml", "hi"], "Invalid value for --output-format: 'xml' is not one of"),
        (["run", "-c", "-r", "abc", "hi"], "Invalid value for --continue: give --continue or --resume ID, not both."),
        (["-p", " "], "Invalid value for PROMPT: give a prompt"),
    ],
)
def test_a_usage_error_found_after_parsing_is_reported_by_typer(
    argv: list[str], message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the commands raise on a light parse, typer reports (the command runs again under it)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    parsed = parse(argv)
    assert parsed is not None
    command = commands.run_command if parsed.command is RUN else commands.main_command
    with pytest.raises(commands.CliUsageError):
        command(parsed.values)
    with pytest.raises(SystemExit) as done:
        typer_command()(argv, prog_name="agentcli")
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("Usage: agentcli")
    assert message in " ".join(err.split())


def test_the_corpus_covers_every_option_and_spelling() -> None:
    """The accepted command lines above give each option in each of its flags."""
    lines = [*accepted_command_lines(MAIN), *accepted_command_lines(RUN)]
    given = {arg.split("=", 1)[0] for arg in itertools.chain.from_iterable(lines) if arg.startswith("-")}
    for option in (*MAIN.options, *RUN.options):
        if option.takes != "help":
            assert set(option.flags) <= given, option.name


# ------------------------------------------------------------------ options before or after a subcommand

SHARED = [option for option in MAIN.options if option in RUN.options and option.takes != "help"]
"""The options the REPL and `run` share: accepted before a subcommand as after it, or refused."""
SUBCOMMANDS: dict[str, tuple[list[str], list[str], frozenset[str]]] = {
    "run": (["run"], ["hi"], frozenset(option.name for option in SHARED)),
    "stats": (["stats"], [], frozenset()),
    "mcp list": (["mcp", "list"], [], frozenset({"mcp_config", "strict_mcp_config", "plugin_dirs"})),
    "mcp add": (["mcp", "add"], ["demo", "--", "python", "server.py"], frozenset()),
    "mcp remove": (["mcp", "remove"], ["demo"], frozenset()),
}
"""Each subcommand: its words, the arguments it needs, and which shared options it takes."""


def given(option: CliOption) -> tuple[list[str], Any]:
    """`option` on a command line, and the value a command receives for it."""
    if option.takes == "flag":
        return [option.flags[0]], True
    value = _value(option)
    if option.takes == "texts":
        return [option.flags[0], value], [value]
    if option.takes in ("number", "amount"):
        return [option.flags[0], value], int(value) if option.takes == "number" else float(value)
    return [option.flags[0], value], value


@pytest.mark.parametrize("option", SHARED, ids=lambda option: option.flags[0])
@pytest.mark.parametrize("subcommand", SUBCOMMANDS)
@pytest.mark.parametrize("where", ["before", "after"])
def test_a_shared_option_before_or_after_a_subcommand_is_taken_or_refused_never_ignored(
    option: CliOption,
    subcommand: str,
    where: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)
    words, arguments, takes = SUBCOMMANDS[subcommand]
    flag_and_value, value = given(option)
    argv = [*flag_and_value, *words, *arguments] if where == "before" else [*words, *flag_and_value, *arguments]

    reading = typer_reads(argv, monkeypatch)

    if option.name in takes:
        assert not isinstance(reading, int), capsys.readouterr().err
        name, values = reading
        assert name == subcommand and values[option.name] == value
        if subcommand == "run":
            assert light_reads(argv) == reading  # the fast path reads it alike
    else:
        assert reading == 2  # a usage error; the command did not run
        err = " ".join(capsys.readouterr().err.split())
        assert option.flags[0] in err
        if where == "before":
            assert (
                f"{option.flags[0]} was given before the subcommand, and agentcli {subcommand} does not take it" in err
            )
        assert light_reads(argv) is None


BOTH_SIDES: list[tuple[list[str], str, Any]] = [
    (["--model", "a", "run", "--model", "b", "hi"], "model", "b"),  # the last one given counts
    (["--max-turns", "3", "run", "hi", "--max-turns", "5"], "max_turns", 5),
    (["--allowed-tools", "Read", "run", "--allowed-tools", "Edit", "hi"], "allowed_tools", ["Read", "Edit"]),
    (["--mcp-config", "a.json", "mcp", "list", "--mcp-config", "b.json"], "mcp_config", ["a.json", "b.json"]),
    (["--strict-mcp-config", "mcp", "list"], "strict_mcp_config", True),
]


@pytest.mark.parametrize(("argv", "name", "value"), BOTH_SIDES, ids=[" ".join(case[0]) for case in BOTH_SIDES])
def test_an_option_given_on_both_sides_counts_as_given_twice(
    argv: list[str], name: str, value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reading = typer_reads(argv, monkeypatch)
    assert not isinstance(reading, int)
    assert reading[1][name] == value
    if argv[-1] == "hi":
        assert light_reads(argv) == reading


def test_print_before_run_is_refused(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert light_reads(["-p", "x", "run", "hi"]) is None
    assert typer_reads(["-p", "x", "run", "hi"], monkeypatch) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "-p was given before the subcommand, and agentcli run does not take it" in err
