"""Claude Code's `~/.claude.json`: its user and local MCP servers are the user's own, ranked as
Claude Code ranks them against agentcli's files; a damaged file is skipped with one notice; the
user's refusals of project servers there count, their approvals do not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.mcp.config import load_servers
from tests.conftest import RunMain
from tests.fake_anthropic import FakeAnthropic, reply, text
from tests.mcp.helpers import stdio_server, write_config

UNRELATED = {
    "numStartups": 412,
    "tipsHistory": {"memory-command": 3},
    "oauthAccount": {"emailAddress": "me@example.com"},
    "cachedChangelog": "x" * 50_000,
}
"""Some of the many keys Claude Code keeps there, none of them agentcli's business."""


@pytest.fixture
def claude_json(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's file in the test's home (no CLAUDE_CONFIG_DIR, as for a user of both)."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGENTCLI_HOME", str(home / ".agentcli"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    return home / ".claude.json"


def write_claude_json(path: Path, project: Path, project_entry: dict[str, Any], **top: Any) -> None:
    other = {"mcpServers": {"elsewhere": {"command": "other-project-only"}}, "enabledMcpjsonServers": ["demo"]}
    data = {
        **UNRELATED,
        **top,
        "projects": {"/some/other/project": other, str(project): {"allowedTools": [], **project_entry}},
    }
    path.write_text(json.dumps(data, indent=2))


def test_user_and_local_servers_rank_as_in_claude_code_around_agentclis_files(
    project: Path, home: Path, claude_json: Path
) -> None:
    write_claude_json(
        claude_json,
        project,
        {"mcpServers": {"local-only": {"command": "l"}, "shared": {"command": "from-local"}}},
        mcpServers={"claude-user": {"command": "cu"}, "shared": {"command": "from-claude-user"}},
    )
    write_config(home / ".agentcli" / "mcp.json", shared={"command": "from-agentcli-user"}, mine={"command": "m"})
    write_config(project / ".mcp.json", shared={"command": "from-project"}, team={"command": "t"})
    flag = write_config(project / "extra.json", shared={"command": "from-flag"})

    found = load_servers(project, environ={})
    flagged = load_servers(project, [flag], environ={})
    strict = load_servers(project, [flag], strict=True, environ={})

    assert found.notices == []
    where = {name: (server.scope, server.source, server.command) for name, server in found.servers.items()}
    assert where == {
        "claude-user": ("user", claude_json, "cu"),
        "shared": ("local", claude_json, "from-local"),  # local over project over user, as Claude Code has it
        "mine": ("user", home / ".agentcli" / "mcp.json", "m"),
        "team": ("project", project / ".mcp.json", "t"),
        "local-only": ("local", claude_json, "l"),
    }
    assert "elsewhere" not in found.servers  # another project's local server
    assert flagged.servers["shared"].command == "from-flag"
    assert set(strict.servers) == {"shared"}

    write_claude_json(claude_json, project, {}, mcpServers={"shared": {"command": "from-claude-user"}})
    assert load_servers(project, environ={}).servers["shared"].command == "from-project"
    (project / ".mcp.json").unlink()
    assert load_servers(project, environ={}).servers["shared"].command == "from-agentcli-user"  # agentcli's file wins


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"mcpServers": {"a": ', "not valid JSON (line 1, column"),
        ("[1, 2]", "it must hold a JSON object"),
        ("[" * 100_000, "nested too deeply to read"),
        (b"\xff\xfe{}", "not UTF-8 text"),
    ],
)
def test_a_damaged_file_is_skipped_with_one_notice_and_the_rest_loads(
    project: Path, home: Path, claude_json: Path, content: str | bytes, said: str
) -> None:
    if isinstance(content, bytes):
        claude_json.write_bytes(content)
    else:
        claude_json.write_text(content)
    write_config(project / ".mcp.json", team={"command": "t"})

    found = load_servers(project, environ={})

    assert list(found.servers) == ["team"]
    [notice] = found.notices
    assert notice.startswith(f"Skipped Claude Code's {claude_json} (its MCP servers): ") and said in notice


def test_keys_of_the_wrong_shape_and_bad_servers_are_skipped_one_by_one(project: Path, claude_json: Path) -> None:
    write_claude_json(
        claude_json,
        project,
        {"mcpServers": {"good": {"command": "g"}, "bad": {"type": "carrier-pigeon"}}},
        mcpServers=["not", "an", "object"],
    )

    found = load_servers(project, environ={})

    assert list(found.servers) == ["good"]
    assert len(found.notices) == 2
    assert "Skipped mcpServers in Claude Code's" in found.notices[0]
    assert found.notices[1].startswith(f'Skipped MCP server "bad" in {claude_json}: "type" must be one of')


def _mcp_tools(api: FakeAnthropic) -> list[str]:
    return [tool["name"] for tool in api.requests[0].body["tools"] if tool["name"].startswith("mcp__")]


def test_a_local_server_starts_without_approval_and_mcp_list_shows_its_file(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, home: Path
) -> None:
    write_claude_json(home / ".claude.json", project, {"mcpServers": {"demo": stdio_server()}})
    fake_api.script(reply(text("fine")))

    done = run_main("run", "hi")
    listed = run_main("mcp", "list", env={"MCP_TIMEOUT": "60000"})

    assert done.returncode == 0, done.stderr
    assert "mcp__demo__echo" in _mcp_tools(fake_api)
    assert listed.stdout.startswith(f"demo · local · stdio · connected\n  {stdio_server()['command']}")
    assert f"  from {home / '.claude.json'}\n" in listed.stdout


def test_approvals_made_in_claude_code_are_not_carried_over(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, home: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "server.pid"
    write_config(project / ".mcp.json", demo=stdio_server(DEMO_PID_FILE=str(pid_file)))
    write_claude_json(
        home / ".claude.json", project, {"enabledMcpjsonServers": ["demo"], "enableAllProjectMcpServers": True}
    )
    fake_api.script(reply(text("fine")))

    done = run_main("run", "hi")

    assert done.returncode == 0, done.stderr
    assert _mcp_tools(fake_api) == []
    assert not pid_file.exists()
    said = " ".join(done.stderr.split())
    assert 'Not started: the MCP server "demo" of this project\'s .mcp.json, not approved yet.' in said
    assert 'You approved "demo" in Claude Code (~/.claude.json); that is not carried over' in said


def test_a_refusal_made_in_claude_code_holds_even_in_bypass_mode(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, home: Path
) -> None:
    write_config(project / ".mcp.json", demo=stdio_server(), off=stdio_server())
    write_claude_json(home / ".claude.json", project, {"disabledMcpjsonServers": ["off"]})
    fake_api.script(reply(text("fine")))

    done = run_main("run", "--permission-mode", "bypassPermissions", "hi")
    listed = run_main("mcp", "list", env={"MCP_TIMEOUT": "60000"})

    assert done.returncode == 0, done.stderr
    tools = _mcp_tools(fake_api)
    assert "mcp__demo__echo" in tools and not [name for name in tools if name.startswith("mcp__off__")]
    assert "off · project · stdio · disabled" in listed.stdout
    assert "disabled in disabledMcpjsonServers (Claude Code's ~/.claude.json)" in listed.stdout


def test_removing_a_claude_code_server_says_whose_it_is(run_main: RunMain, project: Path, home: Path) -> None:
    write_claude_json(home / ".claude.json", project, {"mcpServers": {"theirs": {"command": "t"}}})

    done = run_main("mcp", "remove", "theirs")

    assert done.returncode == 1
    assert "Claude Code's" in done.stderr and "claude mcp remove theirs" in done.stderr
    assert "theirs" in (home / ".claude.json").read_text()  # left as it was
