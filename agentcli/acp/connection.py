"""JSON-RPC 2.0 over newline-delimited JSON, as the Agent Client Protocol carries it on stdio.

    connection = Connection(stdin, stdout, handler)
    connection.serve()                       # until stdin closes
    connection.notify("session/update", {...})
    answer = connection.call("session/request_permission", {...}, cancel=event)

Each request from the client is handled on a thread of its own (a prompt runs for minutes and
asks the client questions meanwhile), so the reader is never blocked; `handler.request` returns
the result or raises `RpcError`. Our own requests (`call`) wait for the client's response with
the same id. A line that is not JSON, or not a JSON-RPC message, is answered with the protocol's
error (when it carries an id) and the connection goes on. A line longer than `MAX_LINE` is
refused without being held. Writes are whole lines under one lock, so messages from several
threads never interleave. When stdin closes, waiting calls end with `ConnectionClosed`,
`handler.closed()` runs, the requests still being handled are answered, and `handler.closed()`
runs again (it must be safe to call twice) for what they opened.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
from typing import IO, Protocol

from agentcli.contracts import JSON

log = logging.getLogger(__name__)
MAX_LINE = 64 * 1024 * 1024
"""Bytes of one message: room for a prompt with embedded files, not for a client gone wrong."""

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
RESOURCE_NOT_FOUND = -32002


class RpcError(Exception):
    """An error response: `code` is JSON-RPC's (or the protocol's), `message` says what to fix."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ConnectionClosed(Exception):
    """The client went away (stdin closed) before it answered."""


class Handler(Protocol):
    def request(self, method: str, params: JSON) -> JSON: ...
    def notification(self, method: str, params: JSON) -> None: ...
    def closed(self) -> None: ...


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: JSON | None = None
        self.error: RpcError | None = None


class Connection:
    def __init__(self, reader: IO[bytes], writer: IO[bytes], handler: Handler) -> None:
        self._reader = reader
        self._writer = writer
        self._handler = handler
        self._write_lock = threading.Lock()
        self._ids = itertools.count()
        self._pending: dict[int, _Pending] = {}
        self._pending_lock = threading.Lock()
        self._handling: set[threading.Thread] = set()
        """The threads answering the client's requests."""
        self.closed = threading.Event()
        """Set once stdin has closed."""

    def serve(self) -> None:
        """Read messages until stdin closes, then end what waits on the client."""
        try:
            while (line := self._reader.readline(MAX_LINE + 1)) != b"":
                if len(line) > MAX_LINE and not line.endswith(b"\n"):
                    self._skip_rest_of_line()
                    self._error(None, INVALID_REQUEST, f"A message over {MAX_LINE:,} bytes was refused.")
                    continue
                if line.strip():
                    self._receive(line)
        finally:
            self.closed.set()
            with self._pending_lock:
                waiting, self._pending = list(self._pending.values()), {}
            for pending in waiting:
                pending.done.set()
            self._handler.closed()  # turns in progress are cancelled: their requests end soon
            with self._pending_lock:
                handling = list(self._handling)
            for thread in handling:  # what the client asked for before it left is still answered
                thread.join()
            self._handler.closed()  # and what those requests opened is closed too

    def notify(self, method: str, params: JSON) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def call(self, method: str, params: JSON, cancel: threading.Event | None = None) -> JSON | None:
        """Send a request and wait for its result; None when `cancel` is set first.
        Raises `RpcError` for an error response and `ConnectionClosed` when the client is gone."""
        if self.closed.is_set():
            raise ConnectionClosed()
        request_id = next(self._ids)
        pending = _Pending()
        with self._pending_lock:
            self._pending[request_id] = pending
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            while not pending.done.wait(0.05):
                if cancel is not None and cancel.is_set():
                    return None
        finally:
            with self._pending_lock:
                self._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        if pending.result is None:
            raise ConnectionClosed()
        return pending.result

    def _receive(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            self._error(None, PARSE_ERROR, "The message is not JSON.")
            return
        if not isinstance(message, dict):
            self._error(None, INVALID_REQUEST, "A message must be a JSON object.")
            return
        method, message_id = message.get("method"), message.get("id")
        if isinstance(method, str):
            params = message.get("params", {})
            if not isinstance(params, dict):
                if message_id is not None:
                    self._error(message_id, INVALID_PARAMS, f"{method}: params must be an object.")
                return
            if "id" in message:
                thread = threading.Thread(target=self._answer, args=(message_id, method, params), daemon=True)
                with self._pending_lock:
                    self._handling.add(thread)
                thread.start()
            else:
                self._notice(method, params)
            return
        if isinstance(message_id, int) and ("result" in message or "error" in message):
            self._settle(message_id, message)
            return
        answerable = message_id if isinstance(message_id, (int, str)) else None
        self._error(answerable, INVALID_REQUEST, "Not a JSON-RPC message.")

    def _answer(self, message_id: object, method: str, params: JSON) -> None:
        try:
            result = self._handler.request(method, params)
        except RpcError as error:
            self._error(message_id, error.code, error.message)
        except Exception as error:  # a bug of ours: the client gets an answer, the log the details
            log.exception("%s failed", method)
            self._error(message_id, INTERNAL_ERROR, f"Internal error: {type(error).__name__}: {error}")
        else:
            self._write({"jsonrpc": "2.0", "id": message_id, "result": result})
        finally:
            with self._pending_lock:
                self._handling.discard(threading.current_thread())

    def _settle(self, message_id: int, message: JSON) -> None:
        with self._pending_lock:
            pending = self._pending.get(message_id)
        if pending is None:
            return  # an answer to a call given up (cancelled): nothing waits for it
        error = message.get("error")
        if error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            text = error.get("message") if isinstance(error, dict) else None
            pending.error = RpcError(code if isinstance(code, int) else INTERNAL_ERROR, str(text or error))
        else:
            result = message.get("result")
            pending.result = result if isinstance(result, dict) else {}
        pending.done.set()

    def _notice(self, method: str, params: JSON) -> None:
        try:
            self._handler.notification(method, params)
        except RpcError as error:  # a notification has no answer to carry an error: the log has it
            log.info("%s: %s", method, error.message)
        except Exception:
            log.exception("%s failed", method)

    def _error(self, message_id: object, code: int, text: str) -> None:
        self._write({"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": text}})

    def _write(self, message: JSON) -> None:
        data = json.dumps(message, ensure_ascii=False).encode() + b"\n"
        with self._write_lock:
            try:
                self._writer.write(data)
                self._writer.flush()
            except (BrokenPipeError, ValueError, OSError):
                self.closed.set()  # the client stopped reading: nothing more can reach it

    def _skip_rest_of_line(self) -> None:
        while (chunk := self._reader.readline(MAX_LINE)) and not chunk.endswith(b"\n"):
            pass
