"""The client the MCP conformance suite tests: agentcli's own MCP client, as a user would drive it.

For each scenario the suite starts a server and runs its client command with the server's URL
(and, for a client registered by hand, `MCP_CONFORMANCE_CONTEXT`). That command is
`conformance_shim.py`, which hands both to a `ScenarioClients` listening in the test's process
and exits with what `run_scenario` made of it: importing the `mcp` SDK once there, not once per
scenario, keeps the suite's two dozen scenarios to seconds.

`run_scenario` knows nothing of the scenario: it configures one http server at the URL,
connects with the `McpManager` the REPL uses, logging in when the server asks
(`login.BrowserLogin`, with a "browser" that follows the authorization server's redirect back
to agentcli's listener, as a user clicking "allow" would), calls each tool the server lists
(arguments made from its schema) and accepts every form a server shows with its defaults (a
user pressing Enter in each field). A client registered by hand (`auth/pre-registration`) is
configured as a user would: `oauth.clientId`, and the secret given at login.
"""

from __future__ import annotations

import json
import socket
import tempfile
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentcli.contracts import JSON
from agentcli.mcp.auth_store import AuthStore
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.elicitation import Question, Reply
from agentcli.mcp.login import BrowserLogin
from agentcli.mcp.manager import McpManager

SCENARIO_TIMEOUT_S = 120.0
"""What the suite gives one scenario (`--timeout`; its default, 30 s, is too little on a busy machine)."""
TIMEOUT_S = SCENARIO_TIMEOUT_S - 10
"""What the client gives itself: under the scenario's, so it reports before the suite gives up."""
SAMPLES: dict[str, Any] = {"number": 2, "integer": 2, "string": "agentcli", "boolean": True, "array": []}


def run_scenario(url: str, context: dict[str, Any]) -> tuple[int, list[str]]:
    """Connect to `url` (logging in if asked), call every tool: 0 when all went well, and the log."""
    log: list[str] = []

    def accept_defaults(question: Question) -> Reply:
        log.append(f"{question.asker} asks: {question.message}")
        return Reply("accept", {})

    with tempfile.TemporaryDirectory() as home:
        store = AuthStore(Path(home) / "mcp-auth")
        server = ServerConfig(
            "conformance", "user", Path("conformance"), "http", url=url, oauth_client_id=context.get("client_id", "")
        )
        if "client_secret" in context:
            store.update(url, client_secret=context["client_secret"])
        manager = McpManager(
            Path(home), connect_timeout=TIMEOUT_S, on_notice=log.append, elicitor=accept_defaults, auth_store=store
        )
        login = BrowserLogin(server.name, log.append, open_browser=_allowing_browser(log))
        try:
            manager.add(server)
            manager.connect(server.name, login)
            manager.wait_for_connections(TIMEOUT_S)
            status = manager.status(server.name)
            if status.state != "connected":
                log.append(f"not connected: {status.state}: {status.error}")
                return 1, log
            failed = 0
            for tool in status.tools:
                outcome = manager.call_tool(server.name, tool.name, _arguments(tool.input_schema), threading.Event())
                log.append(f"{tool.name}: {' '.join(outcome.texts)}")
                failed += outcome.is_error
            return (1 if failed else 0), log
        finally:
            login.close()
            manager.close()


def _allowing_browser(log: list[str]) -> Any:
    """A browser whose user allows at once: it fetches the address and follows the redirects
    (the last one to agentcli's listener), in the background as a real browser would."""

    def open_browser(url: str) -> bool:
        def visit() -> None:
            try:
                urllib.request.urlopen(url, timeout=TIMEOUT_S).read()
            except OSError as error:
                log.append(f"browser: {error}")

        threading.Thread(target=visit, daemon=True).start()
        return True

    return open_browser


def _arguments(schema: JSON) -> JSON:
    properties = schema.get("properties") or {}
    return {name: SAMPLES.get(spec.get("type"), "agentcli") for name, spec in properties.items()}


@contextmanager
def scenario_clients() -> Iterator[Path]:
    """A socket that runs `run_scenario` for each shim that connects (each in its own thread)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "clients.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(64)
        accepting = threading.Thread(target=_accept, args=(listener,), daemon=True)
        accepting.start()
        try:
            yield path
        finally:
            listener.shutdown(socket.SHUT_RDWR)
            listener.close()
            accepting.join()


def _accept(listener: socket.socket) -> None:
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_serve, args=(connection,), daemon=True).start()


def _serve(connection: socket.socket) -> None:
    with connection, connection.makefile("rw", encoding="utf-8") as stream:
        asked = json.loads(stream.readline())
        try:
            code, log = run_scenario(asked["url"], asked.get("context") or {})
        except Exception as error:  # reported through the shim, as a crash of the client would be
            code, log = 1, [f"crashed: {type(error).__name__}: {error}"]
        stream.write(json.dumps({"code": code, "log": log}) + "\n")
