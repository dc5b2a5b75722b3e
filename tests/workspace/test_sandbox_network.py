"""The sandbox's network, with the real bubblewrap: no way out but agentcli's proxy, which lets
through only the hosts the user allows (a local server on another loopback address stands in for
the internet), over plain HTTP and HTTPS-style CONNECT; and the user is asked about a new host."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agentcli.workspace.network import NetworkPolicy
from agentcli.workspace.sandbox_settings import SandboxSettings
from agentcli.workspace.sandboxed import SandboxedWorkspace
from tests.sandbox_support import PYTHON, require_sandbox, run_in

FETCH = """{python} - <<'EOF'
import urllib.request
try:
    print(urllib.request.urlopen("http://{host}:{port}/page", timeout=20).read().decode())
except Exception as error:
    print("failed:", error)
EOF"""
TUNNEL = """{python} - <<'EOF'
import http.client, os
proxy = os.environ["HTTPS_PROXY"].rsplit(":", 1)
connection = http.client.HTTPConnection(proxy[0].removeprefix("http://"), int(proxy[1]), timeout=20)
connection.set_tunnel("{host}", {port})
try:
    connection.request("GET", "/tunnelled")
    print(connection.getresponse().read().decode())
except Exception as error:
    print("failed:", error)
EOF"""
DIRECT = """{python} - <<'EOF'
import socket
try:
    socket.create_connection(("{host}", {port}), timeout=5)
    print("reached")
except OSError as error:
    print("failed:", error)
EOF"""


class Site(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        address = self.server.server_address
        host = address[0] if isinstance(address, tuple) else str(address)
        body = f"served {self.path} by {host}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def sites() -> Iterator[dict[str, int]]:
    """Two web servers of this machine: an allowed one on 127.0.0.1, another on 127.0.0.2."""
    servers = [ThreadingHTTPServer((address, 0), Site) for address in ("127.0.0.1", "127.0.0.2")]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield {str(server.server_address[0]): int(server.server_address[1]) for server in servers}
    for server in servers:
        server.shutdown()
        server.server_close()


def sandbox(project: Path, outside: Path, **settings: object) -> SandboxedWorkspace:
    require_sandbox()
    return SandboxedWorkspace(project, SandboxSettings(enabled=True, **settings), home=outside)  # type: ignore[arg-type]


def test_by_default_no_host_is_reached_and_the_result_names_the_refusal(
    project: Path, outside: Path, sites: dict[str, int]
) -> None:
    with sandbox(project, outside) as workspace:
        through_proxy = run_in(workspace, FETCH.format(python=PYTHON, host="127.0.0.2", port=sites["127.0.0.2"]))
        direct = run_in(workspace, DIRECT.format(python=PYTHON, host="127.0.0.2", port=sites["127.0.0.2"]))
        loopback = run_in(workspace, DIRECT.format(python=PYTHON, host="127.0.0.1", port=sites["127.0.0.1"]))

    assert through_proxy.output.startswith("failed: HTTP Error 403")
    assert through_proxy.notes == (
        f"The sandbox refused network access to 127.0.0.2:{sites['127.0.0.2']}: sandbox.network.allowedDomains "
        "does not list it (and agentcli run asks nobody).",
    )
    assert direct.output.startswith("failed:")
    assert loopback.output.startswith("failed:")  # the machine's own loopback is not the sandbox's


@pytest.fixture(params=["socat", "python relay"])
def bridge(request: pytest.FixtureRequest, outside: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The sandbox's network bridge: socat, or the Python relay where socat is not on PATH
    (a folder outside /tmp, which the sandbox's commands see too)."""
    if request.param == "python relay":
        folder = outside / "bin-without-socat"
        folder.mkdir()
        for program in ("bwrap", "bash"):
            found = shutil.which(program)
            assert found is not None, program
            (folder / program).symlink_to(found)
        monkeypatch.setenv("PATH", str(folder))
    elif shutil.which("socat") is None:
        require_sandbox()
        if os.environ.get("CI") == "true":
            pytest.fail("socat must be installed on CI")
        pytest.skip("socat is not installed")
    return str(request.param)


def test_an_allowed_host_is_reached_through_the_proxy_and_no_other(
    project: Path, outside: Path, sites: dict[str, int], bridge: str
) -> None:
    with sandbox(project, outside, allowed_domains=("127.0.0.1",)) as workspace:
        allowed = run_in(workspace, FETCH.format(python=PYTHON, host="127.0.0.1", port=sites["127.0.0.1"]))
        tunnelled = run_in(workspace, TUNNEL.format(python=PYTHON, host="127.0.0.1", port=sites["127.0.0.1"]))
        other = run_in(workspace, TUNNEL.format(python=PYTHON, host="127.0.0.2", port=sites["127.0.0.2"]))
        direct = run_in(workspace, DIRECT.format(python=PYTHON, host="127.0.0.1", port=sites["127.0.0.1"]))

    assert allowed.output == "served /page by 127.0.0.1"
    assert tunnelled.output == "served /tunnelled by 127.0.0.1"
    assert other.output.startswith("failed: Tunnel connection failed: 403")
    assert direct.output.startswith("failed:")  # only the proxy leads out


def test_an_allowed_name_that_resolves_to_the_machine_s_own_or_a_link_local_address_is_refused() -> None:
    policy = NetworkPolicy(["*.example.com", "localhost"])

    assert policy.admits("app.example.com", 80) is None
    assert "this machine's own or a link-local address" in str(
        policy.admits_address("app.example.com", 80, "127.0.0.1")
    )
    assert policy.admits_address("app.example.com", 80, "::ffff:169.254.169.254") is not None  # cloud metadata
    assert policy.admits_address("app.example.com", 80, "93.184.216.34") is None
    assert policy.admits_address("localhost", 80, "127.0.0.1") is None  # named exactly
    assert policy.admits("example.com", 80) is not None  # *.example.com is its subdomains only


def test_the_user_is_asked_once_about_a_new_host_and_a_no_is_kept(
    project: Path, outside: Path, sites: dict[str, int]
) -> None:
    asked: list[tuple[str, int]] = []

    def ask(host: str, port: int) -> bool | None:
        asked.append((host, port))
        return host == "127.0.0.2"

    require_sandbox()
    settings = SandboxSettings(enabled=True)
    with SandboxedWorkspace(project, settings, home=outside, ask_host=ask) as workspace:
        first = run_in(workspace, FETCH.format(python=PYTHON, host="127.0.0.2", port=sites["127.0.0.2"]))
        again = run_in(workspace, FETCH.format(python=PYTHON, host="127.0.0.2", port=sites["127.0.0.2"]))
        refused = run_in(workspace, FETCH.format(python=PYTHON, host="example.invalid", port=80))
        refused_again = run_in(workspace, FETCH.format(python=PYTHON, host="example.invalid", port=80))

    assert first.output == again.output == "served /page by 127.0.0.2"
    assert asked == [("127.0.0.2", sites["127.0.0.2"]), ("example.invalid", 80)]
    assert refused.output.startswith("failed: HTTP Error 403") and refused_again.output == refused.output
    assert "the user said no to it" in refused_again.notes[0]
    assert workspace.policy.allowed() == ["127.0.0.2"]
