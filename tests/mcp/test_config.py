"""Which MCP servers there are: the three kinds of file, variables, and what a bad file does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.mcp.config import load_servers
from tests.mcp.helpers import write_config


@pytest.fixture
def agentcli_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTCLI_HOME", str(home / ".agentcli"))
    return home / ".agentcli"


def test_servers_of_each_transport_with_variables_expanded(project: Path, agentcli_home: Path) -> None:
    write_config(
        project / ".mcp.json",
        files={"command": "${TOOLS}/server", "args": ["--root", "${ROOT:-.}"], "env": {"KEY": "${KEY}"}},
        web={"type": "http", "url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${KEY}"}},
        old={"type": "sse", "url": "http://127.0.0.1:9/sse"},
    )

    found = load_servers(project, environ={"TOOLS": "/opt/t", "KEY": "k1", "HOST": "example.com"})

    assert found.notices == []
    files, web, old = found.servers.values()
    assert (files.scope, files.transport, files.command, files.args) == (
        "project",
        "stdio",
        "/opt/t/server",
        ("--root", "."),
    )
    assert files.env == {"KEY": "k1"}
    assert (web.transport, web.url, web.headers) == ("http", "https://example.com/mcp", {"Authorization": "Bearer k1"})
    assert old.transport == "sse"


def test_a_later_file_wins_and_strict_reads_only_the_flag_files(project: Path, agentcli_home: Path) -> None:
    write_config(agentcli_home / "mcp.json", shared={"command": "user-version"}, mine={"command": "mine"})
    write_config(project / ".mcp.json", shared={"command": "project-version"})
    flag = write_config(project / "extra.json", extra={"command": "extra"})

    everything = load_servers(project, [Path("extra.json")], environ={})
    strict = load_servers(project, [Path("extra.json")], strict=True, environ={})

    assert {name: s.command for name, s in everything.servers.items()} == {
        "shared": "project-version",
        "mine": "mine",
        "extra": "extra",
    }
    assert everything.servers["shared"].scope == "project" and everything.servers["extra"].scope == "flag"
    assert list(strict.servers) == ["extra"] and strict.servers["extra"].source == flag


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{not json", "not valid JSON (line 1"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"mcpServers": []}', '"mcpServers" must be an object'),
        ('{"mcpServers": ' + "[" * 100_000, "nested too deeply to read"),
    ],
)
def test_a_bad_file_is_skipped_with_a_notice_naming_it(
    project: Path, agentcli_home: Path, content: str, said: str
) -> None:
    (project / ".mcp.json").write_text(content)
    write_config(agentcli_home / "mcp.json", fine={"command": "ok"})

    found = load_servers(project, environ={})

    assert list(found.servers) == ["fine"]
    [notice] = found.notices
    assert str(project / ".mcp.json") in notice and said in notice


def test_a_bad_server_is_skipped_alone_saying_what_to_fix(project: Path, agentcli_home: Path) -> None:
    write_config(
        project / ".mcp.json",
        unset={"command": "x", "env": {"TOKEN": "${NOT_SET}"}},
        typo={"type": "websocket", "url": "ws://x"},
        noargs={"command": "x", "args": "one two"},
        relative={"type": "http", "url": "example.com/mcp"},
        good={"command": "x"},
    )

    found = load_servers(project, environ={})

    assert list(found.servers) == ["good"]
    notices = "\n".join(found.notices)
    assert '"unset"' in notices and "${NOT_SET} in env.TOKEN is not set" in notices
    assert '"type" must be one of stdio, http, sse' in notices
    assert '"args" must be a list of strings' in notices
    assert '"url" must be an http:// or https:// address' in notices


def test_a_missing_flag_file_is_reported(project: Path, agentcli_home: Path) -> None:
    found = load_servers(project, [Path("nowhere.json")], environ={})

    assert found.notices == [f"Skipped MCP config {project / 'nowhere.json'}: no such file."]
    assert json.dumps(found.servers) == "{}"
