"""An in-process ACP client for the protocol's edge cases: `AcpAgent` served on a pair of pipes.

The whole-session test uses the official SDK's client (`test_editor_client.py`); this one sends
what a well-behaved client never would (malformed lines, requests out of order) and watches the
agent's side of things: what the model was sent, which files changed.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.acp.agent import AcpAgent
from agentcli.acp.connection import Connection
from agentcli.providers.scripted import ScriptedModel
from agentcli.session import SessionOptions
from tests.waiting import CEILING

Answerer = Callable[[dict[str, Any]], dict[str, Any] | None]
"""Answers one of the agent's requests (None: leave it unanswered)."""


class Client:
    def __init__(self, model: ScriptedModel, options: SessionOptions | None = None) -> None:
        to_agent_r, to_agent_w = os.pipe()
        from_agent_r, from_agent_w = os.pipe()
        self._to_agent = os.fdopen(to_agent_w, "wb", buffering=0)
        self._from_agent = os.fdopen(from_agent_r, "rb")
        chosen = options or SessionOptions()
        self.agent = AcpAgent(lambda: chosen, make_model=lambda: model, retry_base_delay=0)
        connection = Connection(os.fdopen(to_agent_r, "rb"), os.fdopen(from_agent_w, "wb", buffering=0), self.agent)
        self.served = threading.Thread(target=self.agent.serve, args=(connection,), daemon=True)
        self.served.start()
        self._inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._ids = iter(range(1, 1_000_000))
        self.updates: list[dict[str, Any]] = []
        self.asked: list[dict[str, Any]] = []
        self.answer: Answerer = lambda params: {"outcome": {"outcome": "cancelled"}}

    def send(self, line: bytes) -> None:
        self._to_agent.write(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The response (with `result` or `error`) to one request; the agent's own requests and
        notifications on the way are handled meanwhile."""
        return self.next_response(self.send_request(method, params))

    def send_request(self, method: str, params: dict[str, Any] | None = None) -> int:
        """Send a request without waiting for its response; its id."""
        request_id = next(self._ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
        self.send(json.dumps(message).encode() + b"\n")
        return request_id

    def until(self, condition: Callable[[], bool]) -> None:
        """Handle what the agent sends until `condition()` holds."""
        while not condition():
            self._handle(self._inbox.get(timeout=CEILING))

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode() + b"\n")

    def next_response(self, request_id: int | None) -> dict[str, Any]:
        while True:
            message = self._inbox.get(timeout=CEILING)
            if "method" not in message and message.get("id") == request_id:
                return message
            self._handle(message)

    def start(self, cwd: Path) -> str:
        assert "result" in self.request("initialize", {"protocolVersion": 1})
        opened = self.request("session/new", {"cwd": str(cwd), "mcpServers": []})
        return str(opened["result"]["sessionId"])

    def close(self) -> None:
        """stdin closes, as when the editor quits; returns once the agent has ended its sessions."""
        self._to_agent.close()
        self.served.join(CEILING)
        assert not self.served.is_alive(), "the agent did not end after stdin closed"

    def _handle(self, message: dict[str, Any]) -> None:
        if message.get("method") == "session/update":
            self.updates.append(message["params"]["update"])
        elif message.get("method") == "session/request_permission":
            self.asked.append(message["params"])
            result = self.answer(message["params"])
            if result is not None:
                self.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n")

    def _read(self) -> None:
        for line in self._from_agent:
            self._inbox.put(json.loads(line))


def choose(kind: str) -> Answerer:
    """Answer every permission question with the option of this kind."""

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        option = next(o for o in params["options"] if o["kind"] == kind)
        return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}

    return answer
