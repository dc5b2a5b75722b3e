"""`agentcli acp`: agentcli as an Agent Client Protocol agent, serving one editor on stdio.

The editor (the client) opens sessions (`session/new`, or `session/load` for one of agentcli's
own sessions, whose conversation is replayed to it first), sends prompts (`session/prompt`:
text, links to files, embedded files), watches the turn through `session/update`, answers the
gate's questions (`session/request_permission`, see `permission`), switches the permission
mode (`session/set_mode`) and cancels a turn (`session/cancel`: the prompt answers `cancelled`
at once; the turn then winds down as an interrupt does and leaves the conversation valid).

Each ACP session is an agentcli `Session` with the command line's options, rooted at the
folder the client names, with the MCP servers it passes added to the user's own. When stdin
closes every session is interrupted and closed.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli import __version__
from agentcli.acp.connection import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    Connection,
    RpcError,
)

if TYPE_CHECKING:
    from agentcli.acp.updates import SessionUpdates
    from agentcli.contracts import Model
    from agentcli.events import Event
    from agentcli.session import Session, SessionOptions

JSON = dict[str, Any]
PROTOCOL_VERSION = 1
MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
"""agentcli's permission modes (`permissions.modes.MODES`, spelled here to keep that module off
the path to `initialize`), offered as the session's modes."""
MODE_NAMES = {
    "default": "Ask before changes",
    "acceptEdits": "Accept edits",
    "plan": "Plan (read only)",
    "dontAsk": "Don't ask (deny what would be asked)",
    "bypassPermissions": "Bypass permissions",
}


class AcpAgent:
    """The protocol's agent side; `make_model` and `retry_base_delay` are for tests (a scripted model).

    `initialize` is answered before the session's modules are loaded; they load meanwhile, on a
    thread of their own, so the editor's next request (`session/new`) does not wait for them either.
    """

    def __init__(
        self,
        options: Callable[[], SessionOptions],
        *,
        make_model: Callable[[], Model | None] = lambda: None,
        retry_base_delay: float | None = None,
    ) -> None:
        """`options`: the command line's, made when the first session opens (building them loads
        the session's modules, which `initialize` does not wait for)."""
        self.options = options
        self.make_model = make_model
        self.retry_base_delay = retry_base_delay
        self.connection: Connection | None = None
        self._sessions: dict[str, _AcpSession] = {}
        self._lock = threading.Lock()
        self._initialized = threading.Event()

    def serve(self, connection: Connection) -> None:
        self.connection = connection
        connection.serve()

    # ------------------------------------------------------------------ the Handler protocol

    def request(self, method: str, params: JSON) -> JSON:
        if method == "initialize":
            if not self._initialized.is_set():
                self._initialized.set()
                threading.Thread(target=_load_session_modules, daemon=True).start()
            return self._initialize(params)
        if not self._initialized.is_set():
            raise RpcError(INVALID_REQUEST, f"Send initialize before {method}.")
        if method == "session/new":
            return self._open(params, resume=None)
        if method == "session/load":
            session_id = _text(params, "sessionId")
            acp = self._open(params, resume=session_id)
            return {"modes": acp["modes"]}
        if method == "session/prompt":
            return self._session(params).prompt(params.get("prompt"))
        if method == "session/set_mode":
            self._session(params).set_mode(_text(params, "modeId"))
            return {}
        if method == "authenticate":
            return {}
        raise RpcError(METHOD_NOT_FOUND, f"agentcli does not offer {method!r}.")

    def notification(self, method: str, params: JSON) -> None:
        if method == "session/cancel":
            self._session(params).cancel()

    def closed(self) -> None:
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            session.close()

    # ------------------------------------------------------------------ methods

    def _initialize(self, params: JSON) -> JSON:
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": True, "sse": False},
            },
            "agentInfo": {"name": "agentcli", "title": "agentcli", "version": __version__},
            "authMethods": [],
        }

    def _open(self, params: JSON, *, resume: str | None) -> JSON:
        assert self.connection is not None
        cwd = Path(_text(params, "cwd"))
        if not cwd.is_absolute() or not cwd.is_dir():
            raise RpcError(INVALID_PARAMS, f"cwd must be an existing folder, given as an absolute path: {cwd}")
        servers = _mcp_servers(params.get("mcpServers"))
        from agentcli.errors import AgentcliError, UsageError
        from agentcli.sessions.store import find_session

        if resume is not None:
            try:
                find_session(cwd, resume)
            except UsageError as error:
                raise RpcError(RESOURCE_NOT_FOUND, str(error)) from None
        acp = _AcpSession(self.connection, cwd)
        options = replace(self.options(), resume=resume, continue_session=False)
        try:
            acp.start(options, servers, self.make_model(), self.retry_base_delay)
        except AgentcliError as error:
            raise RpcError(INVALID_PARAMS if isinstance(error, UsageError) else INTERNAL_ERROR, str(error)) from None
        with self._lock:
            self._sessions[acp.id] = acp
        if resume is not None:
            acp.replay()
        return {"sessionId": acp.id, "modes": acp.modes()}

    def _session(self, params: JSON) -> _AcpSession:
        session_id = _text(params, "sessionId")
        with self._lock:
            found = self._sessions.get(session_id)
        if found is None:
            raise RpcError(RESOURCE_NOT_FOUND, f"No session {session_id!r} is open: start one with session/new.")
        return found


class _AcpSession:
    """One ACP session: an agentcli Session, its updates, and the turn in progress."""

    def __init__(self, connection: Connection, cwd: Path) -> None:
        from agentcli.acp.updates import SessionUpdates

        self.connection = connection
        self.cwd = cwd
        self.updates: SessionUpdates = SessionUpdates(cwd)
        self.session: Session | None = None
        self._turn_lock = threading.Lock()
        self._cancelled = threading.Event()
        self._mcp_file: str | None = None

    @property
    def id(self) -> str:
        assert self.session is not None
        return self.session.id

    def start(
        self, options: SessionOptions, servers: JSON, model: Model | None, retry_base_delay: float | None
    ) -> None:
        from agentcli.acp.permission import ClientPrompter
        from agentcli.loop import LoopConfig
        from agentcli.session import Session

        if servers:
            handle, self._mcp_file = tempfile.mkstemp(prefix="agentcli-acp-", suffix=".json")
            with os.fdopen(handle, "w") as file:
                json.dump({"mcpServers": servers}, file)
            options = replace(options, mcp_config=[*options.mcp_config, self._mcp_file])
        prompter = ClientPrompter(self.connection, lambda: self.id, self.updates.pending_call)
        delay = LoopConfig.retry_base_delay if retry_base_delay is None else retry_base_delay
        self.session = Session(
            options, self.cwd, self._on_event, model=model, prompter=prompter, retry_base_delay=delay
        )

    def modes(self) -> JSON:
        assert self.session is not None
        return {
            "currentModeId": self.session.gate.mode,
            "availableModes": [{"id": mode, "name": MODE_NAMES[mode]} for mode in MODES],
        }

    def prompt(self, blocks: object) -> JSON:
        from agentcli.acp.prompt import prompt_text

        assert self.session is not None
        text = prompt_text(blocks, self.cwd)
        # A cancelled turn may still be winding down: the next prompt waits for it (not long).
        if not self._turn_lock.acquire(blocking=self._cancelled.is_set()):
            raise RpcError(INVALID_REQUEST, "A prompt is still running in this session: cancel it or wait for it.")
        self._cancelled.clear()
        done: Future[str] = Future()
        threading.Thread(target=self._run_turn, args=(text, done), daemon=True).start()
        while not done.done():
            if self._cancelled.wait(0.05) and not done.done():
                return {"stopReason": "cancelled"}  # at once; the turn winds down behind the answer
        return {"stopReason": done.result()}

    def cancel(self) -> None:
        if self.session is not None:
            self._cancelled.set()
            self.session.agent.ctx.cancel.set()

    def set_mode(self, mode: str) -> None:
        assert self.session is not None
        if mode not in MODES:
            raise RpcError(INVALID_PARAMS, f"Unknown mode {mode!r}; choose one of {', '.join(MODES)}.")
        self.session.gate.mode = mode

    def replay(self) -> None:
        """A loaded session's conversation, shown to the client as it happened."""
        assert self.session is not None
        for update in _history(self.session.agent.messages):
            self._send(update)

    def close(self) -> None:
        self.cancel()
        with self._turn_lock:  # the turn in progress ends first (the conversation stays valid)
            if self.session is not None:
                self.session.close()
        if self._mcp_file is not None:
            os.unlink(self._mcp_file)

    def _run_turn(self, text: str, done: Future[str]) -> None:
        from agentcli.errors import AgentcliError, Cancelled, MaxTurnsReached

        assert self.session is not None
        try:
            self.session.run(self.session.prepare(text))
            done.set_result("end_turn")
        except Cancelled:
            self.session.record_interrupt()
            done.set_result("cancelled")
        except MaxTurnsReached:
            done.set_result("max_turn_requests")
        except AgentcliError as error:
            done.set_exception(RpcError(INTERNAL_ERROR, str(error)))
        except Exception as error:  # a bug of ours: the client gets a message, not a dead session
            done.set_exception(RpcError(INTERNAL_ERROR, f"Internal error: {type(error).__name__}: {error}"))
        finally:
            self._turn_lock.release()

    def _on_event(self, event: Event) -> None:
        for update in self.updates.of(event):
            self._send(update)

    def _send(self, update: JSON) -> None:
        self.connection.notify("session/update", {"sessionId": self.id, "update": update})


def _load_session_modules() -> None:
    import agentcli.session  # noqa: F401  (loaded ahead of the first session/new)


def _history(messages: Sequence[JSON]) -> Iterator[JSON]:
    """The user's text and the assistant's text and calls of a conversation, as updates."""
    for message in messages:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            kind = block.get("type")
            if kind == "text" and not str(block.get("text", "")).lstrip().startswith("<system-reminder>"):
                update = "user_message_chunk" if message["role"] == "user" else "agent_message_chunk"
                yield {"sessionUpdate": update, "content": {"type": "text", "text": block["text"]}}
            elif kind == "tool_use":
                yield {
                    "sessionUpdate": "tool_call",
                    "toolCallId": block["id"],
                    "title": block["name"],
                    "status": "completed",
                    "rawInput": block.get("input", {}),
                }


def _mcp_servers(value: object) -> JSON:
    """The client's MCP servers as agentcli's configuration (`{"name": {...}}`)."""
    servers: JSON = {}
    for entry in value if isinstance(value, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise RpcError(INVALID_PARAMS, "Each MCP server needs a name.")
        pairs = {item.get("name"): item.get("value") for item in entry.get("env") or entry.get("headers") or []}
        if entry.get("type") in ("http", "sse"):
            servers[entry["name"]] = {"type": entry["type"], "url": entry.get("url"), "headers": pairs}
        else:
            servers[entry["name"]] = {"command": entry.get("command"), "args": entry.get("args") or [], "env": pairs}
    return servers


def _text(params: JSON, key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str) or not value:
        raise RpcError(INVALID_PARAMS, f"{key} is required (a string).")
    return value
