"""The connection manager against the real demo server: parallel connects, timeouts, HTTP with
headers, a crash and a reconnect, and no server left behind when agentcli goes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.mcp.config import ServerConfig
from agentcli.mcp.manager import McpManager
from agentcli.mcp.status import CallCancelled, ServerDown
from tests.conftest import AGENTCLI, cli_env
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.mcp.helpers import CONNECT_CEILING, DEMO_SERVER, cold_stdio_server, stdio_server, write_config
from tests.mcp.warm_demo import LAUNCHER, copies_running
from tests.terminal import descendants
from tests.waiting import CEILING, wait_until

NEVER = threading.Event()


def stdio(name: str, *, warm: bool = True, **env: str) -> ServerConfig:
    """The demo server, started warm (`warm_demo.py`) unless `warm=False`."""
    entry = stdio_server(**env) if warm else cold_stdio_server(**env)
    return ServerConfig(
        name, "user", Path("test"), "stdio", command=entry["command"], args=tuple(entry["args"]), env=env
    )


@pytest.fixture
def notices() -> list[str]:
    return []


@pytest.fixture
def manager(tmp_path: Path, notices: list[str]) -> Iterator[McpManager]:
    made = McpManager(tmp_path, connect_timeout=CEILING, on_notice=notices.append)
    yield made
    made.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie waiting for its parent is gone too
        return stat.read().split(") ")[-1][0] != "Z"


def test_a_slow_server_does_not_hold_up_the_others(manager: McpManager) -> None:
    manager.add(stdio("slow", DEMO_START_DELAY="600"))
    manager.add(stdio("quick"))
    manager.connect("slow")
    manager.connect("quick")

    wait_until(lambda: manager.status("quick").state == "connected", "the quick server connecting")

    assert "echo" in [tool.name for tool in manager.status("quick").tools]
    assert manager.status("slow").state == "connecting"
    assert manager.wait_for_connections(0.01) == ["slow"]


def _servers_running() -> list[int]:
    """This process's descendants that run the demo server or its launcher, and the warm server's
    copies (killed early, a server may not have written a pid file)."""
    running = copies_running()
    for pid in descendants(os.getpid()):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if (str(DEMO_SERVER).encode() in command or str(LAUNCHER).encode() in command) and _alive(pid):
            running.append(pid)
    return running


def test_a_server_that_does_not_connect_in_time_fails_and_is_stopped(tmp_path: Path) -> None:
    manager = McpManager(tmp_path, connect_timeout=0.5, on_notice=print)
    try:
        manager.add(stdio("slow", DEMO_START_DELAY="600"))
        manager.connect("slow")

        assert manager.wait_for_connections(CEILING) == []

        slow = manager.status("slow")
        assert (slow.state, slow.error) == ("failed", "did not connect within 0.5 s")
        wait_until(lambda: not _servers_running(), "the slow server stopping")
    finally:
        manager.close()


def test_calls_results_and_a_crash_reported_once_then_a_reconnect(manager: McpManager, notices: list[str]) -> None:
    manager.add(stdio("demo", warm=False))  # the SDK's server as agentcli's own child, crashing
    manager.connect("demo")
    manager.wait_for_connections(CEILING)

    echo = next(tool for tool in manager.status("demo").tools if tool.name == "echo")
    assert echo.read_only and echo.input_schema["required"] == ["text"]
    assert manager.call_tool("demo", "echo", {"text": "a"}, NEVER).texts == ("echo: a",)
    failed = manager.call_tool("demo", "fail", {"why": "x"}, NEVER)
    assert failed.is_error and "failed on purpose: x" in failed.texts[0]
    for _ in range(2):
        with pytest.raises(ServerDown, match='The MCP server "demo" is down'):
            manager.call_tool("demo", "crash", {}, NEVER)
    assert notices == ['MCP server "demo" stopped; its tools answer with an error until it is reconnected (/mcp).']
    assert manager.status("demo").state == "failed"

    manager.reconnect("demo")
    manager.wait_for_connections(CEILING)
    assert manager.call_tool("demo", "echo", {"text": "b"}, NEVER).texts == ("echo: b",)


def test_an_interrupted_call_stops_waiting_and_the_server_goes_on(manager: McpManager) -> None:
    manager.add(stdio("demo"))
    manager.connect("demo")
    manager.wait_for_connections(CEILING)
    interrupted = threading.Event()
    interrupted.set()

    with pytest.raises(CallCancelled):
        manager.call_tool("demo", "wait", {"seconds": 600}, interrupted)

    assert manager.call_tool("demo", "echo", {"text": "still here"}, NEVER).texts == ("echo: still here",)


def test_a_program_that_cannot_start_fails_saying_why(manager: McpManager) -> None:
    manager.add(ServerConfig("missing", "user", Path("test"), "stdio", command="no-such-program-here"))
    manager.connect("missing")
    manager.wait_for_connections(CEILING)

    status = manager.status("missing")
    assert status.state == "failed" and "cannot start no-such-program-here" in status.error


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def http_server() -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen([sys.executable, str(DEMO_SERVER), "http", str(port), "s3cret"])
    url = f"http://127.0.0.1:{port}/mcp"

    def listening() -> bool:
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", port)) == 0

    wait_until(listening, "the HTTP server listening")
    yield url
    process.terminate()
    process.wait(CEILING)


def test_streamable_http_sends_the_configured_headers(manager: McpManager, http_server: str) -> None:
    good = {"Authorization": "Bearer s3cret"}
    manager.add(ServerConfig("web", "user", Path("test"), "http", url=http_server, headers=good))
    manager.add(ServerConfig("wrong", "user", Path("test"), "http", url=http_server, headers={}))
    manager.connect("web")
    manager.connect("wrong")
    manager.wait_for_connections(CEILING)

    assert manager.status("web").state == "connected"
    assert manager.call_tool("web", "echo", {"text": "over http"}, NEVER).texts == ("echo: over http",)
    wrong = manager.status("wrong")
    assert wrong.state == "failed" and "check the url and the headers it needs, such as a token" in wrong.error


@pytest.mark.parametrize(("how", "code"), [(signal.SIGKILL, -9), (signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_no_server_outlives_agentcli(
    fake_api: FakeAnthropic, home: Path, project: Path, tmp_path: Path, how: signal.Signals, code: int
) -> None:
    pid_file = tmp_path / "server.pid"
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server(DEMO_PID_FILE=str(pid_file)))
    fake_api.script(reply(tool_use("mcp__demo__wait", {"seconds": 600}, id="toolu_1")), reply(text("never")))
    agentcli = subprocess.Popen(
        [AGENTCLI, "run", "--allowed-tools", "mcp__demo", "wait"],
        cwd=project,
        env=cli_env(home, fake_api.url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        fake_api.wait_for_requests(1, timeout=CONNECT_CEILING)  # the first request waits for the server to connect
        wait_until(pid_file.exists, "the server starting")
        server = int(pid_file.read_text())
        assert _alive(server)

        agentcli.send_signal(how)

        assert agentcli.wait(CEILING) == code
        wait_until(lambda: not _alive(server), "the server stopping")
    finally:
        agentcli.kill()
        agentcli.wait()
