"""Logging in to a remote MCP server (OAuth 2.1) and using the login, against
`oauth_server.OAuthServers` (a protected MCP server, its authorization server on another origin).

The shell's commands (`agentcli mcp login|list|logout`, with a browser that allows at once,
`follow_browser.py`) and `run` without a login are run as the user runs them; the rest drives
the same `log_in` and `McpManager` in-process, with a browser function that does the same."""

from __future__ import annotations

import json
import stat
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.mcp.auth_store import AuthStore
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.login import BrowserLogin, Endpoints
from agentcli.mcp.login_flow import log_in, login_result
from agentcli.mcp.manager import McpManager
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent, RunCli, StartRepl
from tests.fake_anthropic import FakeAnthropic
from tests.fake_anthropic import reply as api_reply
from tests.fake_anthropic import text as api_text
from tests.mcp.helpers import CONNECT_CEILING, write_config
from tests.mcp.oauth_server import OAuthServers
from tests.waiting import CEILING

BROWSER = f"{sys.executable} -I -S {Path(__file__).with_name('follow_browser.py')} %s"
NEVER = threading.Event()


@pytest.fixture
def servers() -> Iterator[OAuthServers]:
    with OAuthServers() as running:
        yield running


@pytest.fixture
def configured(servers: OAuthServers, home: Path) -> Path:
    return write_config(home / ".agentcli" / "mcp.json", secure={"type": "http", "url": servers.mcp_url})


@pytest.fixture
def store(home: Path) -> AuthStore:
    return AuthStore(home / ".agentcli" / "mcp-auth")


@pytest.fixture
def manager(servers: OAuthServers, store: AuthStore, tmp_path: Path) -> Iterator[McpManager]:
    made = McpManager(tmp_path, connect_timeout=CONNECT_CEILING, on_notice=print, auth_store=store)
    made.add(ServerConfig("secure", "user", tmp_path, "http", url=servers.mcp_url))
    yield made
    made.close()


def allow(url: str) -> bool:
    """The browser: it follows the authorization server's redirect back to agentcli's listener."""
    threading.Thread(target=lambda: urllib.request.urlopen(url, timeout=CEILING).read(), daemon=True).start()
    return True


def logged_in(manager: McpManager, shown: list[str] | None = None) -> str:
    """Log in as `/mcp login` does; the login's state afterwards."""
    status = log_in(manager, "secure", (shown if shown is not None else []).append, None, open_browser=allow)
    return status.state


def test_login_from_the_shell_shows_the_address_keeps_the_tokens_for_the_user_only_and_logout_forgets_them(
    run_cli: RunCli, servers: OAuthServers, configured: Path, home: Path
) -> None:
    done = run_cli("mcp", "login", "secure", env={"BROWSER": BROWSER})

    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert 'Log in to MCP server "secure"' in out and f"{servers.auth_url}/authorize?" in out
    assert f"Tokens come from: {servers.auth_url}/token" in out and "Warning" not in out
    assert out.rstrip().endswith('Logged in to MCP server "secure"; it is connected (1 tools).')
    [record] = (home / ".agentcli" / "mcp-auth").glob("*.json")
    assert stat.S_IMODE(record.stat().st_mode) == 0o600 and stat.S_IMODE(record.parent.stat().st_mode) == 0o700
    assert json.loads(record.read_text())["url"] == servers.mcp_url
    assert servers.issued and not any(token in out + done.stderr for token in servers.issued)
    listed = run_cli("mcp", "list").stdout.splitlines()
    assert listed[:5] == [
        "secure · user · http · connected",
        f"  {servers.mcp_url}",
        f"  from {configured}",
        "  login: logged in",
        "  tools: echo",
    ]

    done = run_cli("mcp", "logout", "secure")

    assert done.stdout == 'Logged out of MCP server "secure": its tokens and client registration are deleted.\n'
    assert not record.exists()


def test_run_without_a_login_says_in_one_line_how_to_log_in_and_registers_nothing(
    run_cli: RunCli, fake_api: FakeAnthropic, servers: OAuthServers, configured: Path
) -> None:
    fake_api.script(api_reply(api_text("Without it.")))

    done = run_cli("run", "hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Without it.\n"
    assert [line for line in done.stderr.splitlines() if "secure" in line] == [
        '! MCP server "secure" needs you to log in: run `agentcli mcp login secure` (or /mcp login secure in '
        "agentcli); its tools are left out until then."
    ]
    assert not any(seen.path == "/register" for seen in servers.requests)
    assert "mcp__secure__echo" not in [tool["name"] for tool in fake_api.requests[0].body["tools"]]


def test_a_run_uses_the_login_and_the_token_goes_only_to_the_server_it_is_for(
    run_agent: RunAgent, model: ScriptedModel, servers: OAuthServers, configured: Path, manager: McpManager, home: Path
) -> None:
    assert logged_in(manager) == "connected"
    manager.close()
    model.script(reply(tool_use("mcp__secure__echo", {"text": "hi"}, id="toolu_1")), reply(text("Done.")))

    ran = run_agent("echo hi", allowed_tools=["mcp__secure"])

    assert ran.returncode == 0, ran.stderr
    assert model.requests[1].messages[-1]["content"][0]["content"] == "echo: hi"
    access = servers.issued[0]
    assert {seen.authorization for seen in servers.seen_at(servers.resource_url)} <= {"", f"Bearer {access}"}
    assert not any(seen.authorization for seen in servers.seen_at(servers.auth_url))
    transcripts = list((home / ".agentcli").rglob("*.jsonl"))
    assert transcripts and not any(token in path.read_text() for path in transcripts for token in servers.issued)
    assert not any(token in ran.stdout + ran.stderr for token in servers.issued)


def test_a_token_that_ran_out_is_refreshed_at_the_authorization_servers_token_endpoint(
    servers: OAuthServers, manager: McpManager, store: AuthStore, tmp_path: Path
) -> None:
    assert logged_in(manager) == "connected"
    manager.close()
    servers.expire_access_tokens()
    record = store.path(servers.mcp_url)
    record.write_text(json.dumps({**json.loads(record.read_text()), "expires_at": 1.0}))  # as a later day finds it
    later = McpManager(tmp_path, connect_timeout=CONNECT_CEILING, on_notice=print, auth_store=store)  # a new process's
    later.add(ServerConfig("secure", "user", tmp_path, "http", url=servers.mcp_url))
    try:
        later.connect("secure")
        assert later.wait_for("secure", CONNECT_CEILING).state == "connected"
        assert later.call_tool("secure", "echo", {"text": "again"}, NEVER).texts == ("echo: again",)
    finally:
        later.close()

    assert [seen.origin for seen in servers.requests if seen.path == "/token"] == [servers.auth_url] * 2
    assert store.load(servers.mcp_url)["tokens"]["access_token"] == servers.issued[-2]  # the new one, kept


def test_metadata_sending_tokens_to_another_origin_is_shown_before_the_browser_opens(
    servers: OAuthServers, manager: McpManager
) -> None:
    servers.token_endpoint = f"{servers.resource_url}/token"  # a host that issued nothing
    shown: list[str] = []

    assert logged_in(manager, shown) == "needs login"

    warning = next(index for index, line in enumerate(shown) if line.startswith("! Warning"))
    assert f"the token endpoint {servers.resource_url} is not on the authorization server's origin" in shown[warning]
    assert warning < next(index for index, line in enumerate(shown) if line.startswith("Opened your browser"))


def test_what_a_hostile_authorization_server_answers_is_shown_escaped(
    servers: OAuthServers, manager: McpManager, store: AuthStore
) -> None:
    servers.token_refusal = "\x1b[2J\x1b]0;pwned\x07 no tokens for you"
    shown: list[str] = []

    status = log_in(manager, "secure", shown.append, None, open_browser=allow)

    said = login_result(status, store)
    assert status.state == "needs login" and "no tokens for you" in said
    assert "\\x1b[2J" in said and not any(char in said + "".join(shown) for char in "\x1b\x07")


def test_the_login_listener_takes_only_the_state_it_issued() -> None:
    login = BrowserLogin("secure", lambda line: None, open_browser=lambda url: True)
    try:
        login.present("https://auth.example/authorize?state=ours&code_challenge=x", _endpoints())
        forged = f"{login.redirect_uri}?code=attacker&state=theirs"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(forged, timeout=CEILING)
        refused.value.close()
        assert refused.value.code == 400
        assert login.paste(forged).startswith("This is not the login agentcli is waiting for")
        with urllib.request.urlopen(f"{login.redirect_uri}?code=good&state=ours", timeout=CEILING) as page:
            assert page.status == 200
        redirect = login.wait()
        assert (redirect.code, redirect.state) == ("good", "ours")
    finally:
        login.close()


def _endpoints() -> Endpoints:
    return Endpoints(server="secure", url="https://mcp.example/mcp")


def test_slash_mcp_shows_the_login_state_and_logs_in_and_out_in_the_repl(
    start_repl: StartRepl, servers: OAuthServers, configured: Path, home: Path
) -> None:
    repl = start_repl(env={"BROWSER": BROWSER})
    for shown in range(1, 200):  # until its first connection has found that it needs a login
        repl.submit("/mcp")
        screen = repl.wait_for_count("server  scope", shown)
        if "/mcp login NAME logs in" in screen:
            break
        repl.pump(0.1)
    row = [line for line in screen.splitlines() if line.lstrip().startswith("secure")][-1]
    assert "needs login" in row and "not logged in" in row

    repl.submit("/mcp login secure")

    screen = repl.wait_for('Logged in to MCP server "secure"; it is connected (1 tools).')
    assert f"{servers.auth_url}/authorize?" in screen
    assert not any(token in screen for token in servers.issued)
    repl.submit("/mcp")
    screen = repl.wait_for_count("server  scope", shown + 1)
    row = [line for line in screen.splitlines() if line.lstrip().startswith("secure")][-1]
    assert "connected" in row and "logged in" in row and "not logged in" not in row

    repl.submit("/mcp logout secure")

    repl.wait_for('Logged out of MCP server "secure"')
    assert not list((home / ".agentcli" / "mcp-auth").glob("*.json"))
