"""The sandbox in the REPL, in a real pseudo-terminal with the real bubblewrap: a sandboxed
command runs without a question, the first connection to a new host asks one, and /sandbox
says what the sandbox allows."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import StartRepl
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.sandbox_support import PYTHON, require_sandbox


class Site(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from the host"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[int]:
    """A web server of this machine on 127.0.0.2, standing in for a host on the internet."""
    server = ThreadingHTTPServer(("127.0.0.2", 0), Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def test_a_sandboxed_command_runs_unasked_and_a_new_host_is_asked_about_once(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path, project: Path, site: int
) -> None:
    require_sandbox()
    (home / ".agentcli" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    fetch = f"{PYTHON} -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.2:{site}/').read().decode())\""
    fake_api.script(
        reply(tool_use("Bash", {"command": f"touch made.txt && {fetch}"})),
        reply(text("Fetched it.")),
    )
    repl = start_repl()

    repl.submit("fetch the page")
    screen = repl.wait_for("Network access from the sandbox")
    assert "Do you want to proceed?" not in screen.split("Network access from the sandbox")[0]
    assert f"127.0.0.2:{site}" in screen
    repl.press("1")
    repl.wait_for("Fetched it.")

    assert (project / "made.txt").exists()
    sent = json.dumps(fake_api.requests[-1].body["messages"][-1])
    assert "hello from the host" in sent


def test_slash_sandbox_shows_what_the_sandbox_allows(start_repl: StartRepl, project: Path) -> None:
    require_sandbox()
    repl = start_repl("--sandbox")

    repl.submit("/sandbox")

    screen = repl.wait_for("The model cannot leave it")
    assert "The sandbox is on (--sandbox): the agent's commands run in it (bubblewrap)" in screen
    assert f"Writable: {project.resolve()} and a private /tmp." in screen
