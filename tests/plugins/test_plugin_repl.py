"""The REPL with a plugin: where each part came from in /help, /hooks, /agents and /mcp, and /plugin."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import StartRepl
from tests.context.helpers import write
from tests.plugins.helpers import commands, commit_all, make_marketplace, make_plugin


def _rows(screen: str, start: str) -> list[str]:
    return [" ".join(line.split()) for line in screen.splitlines() if line.lstrip().startswith(start)]


def test_the_repl_shows_where_each_part_came_from_and_offers_plugin(
    start_repl: StartRepl, project: Path, home: Path, tmp_path: Path
) -> None:
    market = tmp_path / "market"
    make_plugin(market / "plugins" / "greeter")
    write(market / "plugins" / "greeter" / "commands" / "help.md", "Not the REPL's help.\n")
    write(market / "plugins" / "other" / "commands" / "wave.md", "---\ndescription: Wave\n---\nWave at $ARGUMENTS.\n")
    make_marketplace(market, [{"name": n, "source": f"./plugins/{n}"} for n in ("greeter", "other")])
    commit_all(market)
    ops, _ = commands(project, home / ".agentcli")
    ops.marketplace_add(str(market))
    ops.install("greeter@test-market")
    repl = start_repl()
    label = "plugin greeter@test-market"

    repl.submit("/help")
    [greet] = _rows(repl.wait_for("Greet someone"), "/greet ")
    assert greet == f"/greet Greet someone ({label}) also /greeter:greet"
    helped = _rows(repl.wait_for("only by this name"), "/greeter:help")
    assert helped == [
        f"/greeter:help Not the REPL's help. ({label})",
        f"/greeter:help ({label}) only by this name: /help is a built-in command",
    ]
    repl.submit("/hooks")
    [hook] = _rows(repl.wait_for("guard.py"), "PreToolUse")
    assert hook.endswith(label)
    repl.submit("/agents")
    assert f"({label})" in " ".join(repl.wait_for("greeter:reviewer").split())
    repl.submit("/mcp")
    [server] = _rows(repl.wait_for("(mcp__plugin_greeter_demo)"), "plugin:greeter:demo")
    assert label in server

    repl.submit("/plugin install other@test-market")
    repl.wait_for("Install and enable it? [y/N]")
    repl.submit("y")
    repl.wait_for("Installed other@test-market")
    repl.wait_for("restart agentcli to use the change")
    repl.submit("/plugin")
    repl.wait_for("other@test-market · enabled")
    repl.submit("/plugin disable greeter@test-market")
    repl.wait_for("Disabled greeter@test-market (user).")
