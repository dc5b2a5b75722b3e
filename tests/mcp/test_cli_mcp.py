"""`agentcli mcp list|add|remove`, the real CLI on a temporary home and project."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentcli.cli.app import app
from agentcli.mcp.approval import server_digest
from agentcli.mcp.config import load_servers
from tests.conftest import RunMain
from tests.mcp.helpers import DEMO_SERVER, stdio_server, write_config

SLOW_MACHINE = {"MCP_TIMEOUT": "60000"}
"""A connect ceiling for a loaded machine (the demo server's SDK takes ~1.5 s of CPU to start):
a server that fails still fails at once, one that connects is not cut off while starting."""


def _servers(path: Path) -> dict[str, object]:
    servers: dict[str, object] = json.loads(path.read_text())["mcpServers"]
    return servers


def test_add_a_stdio_server_to_the_project_keeps_the_other_keys_and_approves_it(
    run_main: RunMain, project: Path, home: Path
) -> None:
    (project / ".mcp.json").write_text(json.dumps({"note": "kept", "mcpServers": {"old": {"command": "x"}}}))

    done = run_main(
        "mcp", "add", "--env", "A=1", "--env", "B=two=2", "demo", "--", sys.executable, str(DEMO_SERVER), "-v"
    )

    assert done.returncode == 0, done.stderr
    assert 'Added MCP server "demo" (stdio)' in done.stdout
    written = (project / ".mcp.json").read_text()
    assert written.startswith('{\n  "note": "kept",\n  "mcpServers": {\n')  # indent 2, order kept
    assert json.loads(written) == {
        "note": "kept",
        "mcpServers": {
            "old": {"command": "x"},
            "demo": {"command": sys.executable, "args": [str(DEMO_SERVER), "-v"], "env": {"A": "1", "B": "two=2"}},
        },
    }
    local = json.loads((project / ".agentcli" / "settings.local.json").read_text())
    assert local["enabledMcpjsonServers"] == ["demo"]
    # the yes is pinned to what was added: the same digest the session computes from .mcp.json
    assert local["enabledMcpjsonServerDigests"] == {"demo": server_digest(load_servers(project).servers["demo"])}


def test_add_an_http_server_for_the_user_with_headers(run_main: RunMain, project: Path, home: Path) -> None:
    done = run_main(
        "mcp", "add", "--transport", "http", "--scope", "user", "-H", "Authorization: Bearer ${TOKEN}",
        "--header", "X-Team:core", "web", "https://example.com/mcp",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert _servers(home / ".agentcli" / "mcp.json") == {
        "web": {
            "type": "http",
            "url": "https://example.com/mcp",
            "headers": {"Authorization": "Bearer ${TOKEN}", "X-Team": "core"},
        }
    }
    assert not (project / ".mcp.json").exists()


def test_add_refuses_a_name_already_there_and_says_how_to_replace_it(
    run_main: RunMain, project: Path, home: Path
) -> None:
    write_config(project / ".mcp.json", demo={"command": "first"})

    done = run_main("mcp", "add", "demo", "--", "second")

    assert done.returncode == 1
    assert 'An MCP server "demo" is already in' in done.stderr
    assert "agentcli mcp remove demo --scope project" in done.stderr
    assert _servers(project / ".mcp.json") == {"demo": {"command": "first"}}


def test_add_rejects_options_that_do_not_fit_the_transport(run_main: RunMain, project: Path, home: Path) -> None:
    headers_on_stdio = run_main("mcp", "add", "-H", "A: b", "demo", "--", "cmd")
    env_on_http = run_main("mcp", "add", "-t", "http", "-e", "A=b", "web", "https://x/mcp")
    not_a_url = run_main("mcp", "add", "-t", "http", "web", "ftp://x")
    bad_transport = run_main("mcp", "add", "-t", "pigeon", "web", "https://x/mcp")

    for done in (headers_on_stdio, env_on_http, not_a_url, bad_transport):
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
    assert "a stdio server takes --env" in headers_on_stdio.stderr
    assert "takes --header" in env_on_http.stderr
    assert "not an http:// or https:// address" in not_a_url.stderr
    assert "'pigeon' is not one of stdio, http, sse" in bad_transport.stderr
    assert not (project / ".mcp.json").exists()


def test_add_leaves_a_broken_file_alone(run_main: RunMain, project: Path, home: Path) -> None:
    (project / ".mcp.json").write_text("{not json")

    done = run_main("mcp", "add", "demo", "--", "cmd")

    assert done.returncode == 1
    assert "not valid JSON" in done.stderr and "Fix it by hand" in done.stderr
    assert (project / ".mcp.json").read_text() == "{not json"


def test_remove_finds_the_scope_or_asks_for_it(run_main: RunMain, project: Path, home: Path) -> None:
    write_config(project / ".mcp.json", both={"command": "a"}, mine={"command": "b"})
    write_config(home / ".agentcli" / "mcp.json", both={"command": "c"})

    ambiguous = run_main("mcp", "remove", "both")
    removed = run_main("mcp", "remove", "mine")
    scoped = run_main("mcp", "remove", "both", "--scope", "user")
    missing = run_main("mcp", "remove", "ghost")

    assert ambiguous.returncode == 1 and "--scope project or --scope user" in ambiguous.stderr
    assert removed.returncode == 0 and 'Removed MCP server "mine"' in removed.stdout
    assert scoped.returncode == 0, scoped.stderr
    assert missing.returncode == 1 and 'No MCP server "ghost"' in missing.stderr
    assert _servers(project / ".mcp.json") == {"both": {"command": "a"}}
    assert _servers(home / ".agentcli" / "mcp.json") == {}


def test_list_connects_and_reports_each_server(run_main: RunMain, project: Path, home: Path) -> None:
    write_config(
        home / ".agentcli" / "mcp.json",
        demo=stdio_server(),
        broken={"command": sys.executable, "args": ["-c", "import sys; sys.exit('no luck')"]},
    )
    write_config(project / ".mcp.json", unapproved=stdio_server(), off=stdio_server())
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.local.json").write_text(json.dumps({"disabledMcpjsonServers": ["off"]}))

    done = run_main("mcp", "list", env=SLOW_MACHINE)

    assert done.returncode == 0, done.stderr
    blocks = {block.split(" · ")[0]: block for block in ("\n" + done.stdout).split("\n") if " · " in block}
    assert blocks["demo"] == "demo · user · stdio · connected"
    assert blocks["broken"] == "broken · user · stdio · failed"
    assert blocks["unapproved"] == "unapproved · project · stdio · needs approval"
    assert blocks["off"] == "off · project · stdio · disabled"
    assert "  tools: echo, shout, fail, picture, crash" in done.stdout
    assert "no luck" in done.stdout
    assert "enabledMcpjsonServers" in done.stdout


def test_list_without_servers_says_how_to_add_one(run_main: RunMain, project: Path, home: Path) -> None:
    done = run_main("mcp", "list")

    assert done.returncode == 0
    assert done.stdout.startswith("No MCP servers configured. Add one with `agentcli mcp add")


def test_list_takes_mcp_config_and_strict_mcp_config_before_or_after_it(
    project: Path, home: Path, in_process_env: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(home / ".agentcli" / "mcp.json", mine={"command": "absent-program"})
    write_config(project / "servers.json", demo=stdio_server())

    monkeypatch.setenv(*next(iter(SLOW_MACHINE.items())))
    with pytest.raises(SystemExit) as done:
        app(["--mcp-config", "servers.json", "mcp", "list", "--strict-mcp-config"], prog_name="agentcli")

    shown = capsys.readouterr().out
    assert done.value.code == 0
    assert shown.startswith("demo · flag · stdio · connected\n") and "tools: echo, shout" in shown
    assert "mine" not in shown  # --strict-mcp-config: only the --mcp-config servers
