"""The stdio transport: a server started as a child process, one JSON-RPC message per line each way.

    async with stdio_transport("github", parameters, errlog, message_limit) as (read, write):
        session = ClientSession(read, write)

As the SDK's `stdio_client` (the same minimal environment, plus the variables of your settings'
`env` without the credentials, then the server's own `env`; the same process group and stopping
order: close its stdin, wait 2 s, then end its process group), but its output is read with a bound: a message
longer than `message_limit` characters is copied through `JsonCapper` as it arrives (its long
strings cut, the rest of its arrays left out once the copy is that long), so a server's 50 MB
answer never sits in memory whole. A line that is not JSON-RPC (a server printing to stdout) is
skipped and written to the debug log, not handed to the SDK, which would print a traceback.

Imported only by the manager's background thread (`agentcli.mcp.connection`).
"""

from __future__ import annotations

import codecs
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any, TextIO

import anyio
import mcp_types as types
from anyio.abc import Process
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

from agentcli.mcp.capped_json import JsonCapper
from agentcli.settings_env import applied_variables

logger = logging.getLogger(__name__)
EXIT_WAIT_S = 2.0
"""How long a server has to exit once its stdin is closed, and again once told to terminate."""
POLL_S = 0.01


class LineReader:
    """Splits a server's output into lines, each decoded as UTF-8; a line over `limit` characters
    is passed through a `JsonCapper` as it comes instead of being held."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._pieces: list[bytes] = []
        self._size = 0
        self._capper: JsonCapper | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.capped = 0
        """Lines capped so far (for the debug log)."""

    def feed(self, chunk: bytes) -> list[str]:
        """The lines `chunk` completes."""
        lines: list[str] = []
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            self._add(chunk[start:] if newline < 0 else chunk[start:newline])
            if newline < 0:
                return lines
            lines.append(self._line())
            start = newline + 1

    def _add(self, part: bytes) -> None:
        if self._capper is not None:
            self._capper.feed(self._decoder.decode(part))
            return
        self._pieces.append(part)
        self._size += len(part)
        if self._size > self.limit:  # bytes: at least as many as the characters they decode to
            self._capper = JsonCapper(string_limit=self.limit, total_limit=self.limit)
            self._capper.feed(self._decoder.decode(b"".join(self._pieces)))
            self._pieces, self._size = [], 0
            self.capped += 1

    def _line(self) -> str:
        if self._capper is not None:
            self._capper.feed(self._decoder.decode(b"", final=True))
            line, self._capper = self._capper.text(), None
            return line
        line = b"".join(self._pieces).decode("utf-8", errors="replace")
        self._pieces, self._size = [], 0
        return line


@contextlib.asynccontextmanager
async def stdio_transport(
    name: str, server: StdioServerParameters, errlog: TextIO, message_limit: int
) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK session's read and write streams for the server `name` started as `server`, started
    now and stopped on exit."""
    process = await anyio.open_process(
        [server.command, *server.args],
        env=get_default_environment() | applied_variables() | (server.env or {}),
        stderr=errlog,
        cwd=server.cwd,
        start_new_session=True,
    )
    incoming_in, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_out = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        assert process.stdout is not None
        lines = LineReader(message_limit)
        async with incoming_in:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
                async for chunk in process.stdout:
                    for line in lines.feed(chunk):
                        message = _message(line, name)
                        if message is not None:
                            await incoming_in.send(message)
        if lines.capped:
            logger.info(
                "MCP server %s: %d message(s) over %d characters capped as they arrived",
                name,
                lines.capped,
                message_limit,
            )
        await _drain(process)

    async def write() -> None:
        assert process.stdin is not None
        try:
            async with outgoing_out:
                async for session_message in outgoing_out:
                    data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await incoming_in.aclose()  # the server stopped reading: its requests must not wait forever

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        try:
            yield incoming, outgoing
        finally:
            with anyio.CancelScope(shield=True):
                await incoming.aclose()  # the reader stops delivering and drains what is left
                await outgoing.aclose()
                await _stop(process)
            tasks.cancel_scope.cancel()


def _message(line: str, name: str) -> SessionMessage | None:
    if not line.strip():
        return None
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as error:
        logger.warning("MCP server %s wrote a line that is not a JSON-RPC message (%s): %.200r", name, error, line)
        return None


async def _drain(process: Process) -> None:
    """Read and drop what the server still writes, so it is never stuck on a full pipe."""
    assert process.stdout is not None
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        while True:
            await process.stdout.receive()


async def _stop(process: Process) -> None:
    """Close the server's stdin; if it has not exited within EXIT_WAIT_S, end its process group."""
    assert process.stdin is not None and process.stdout is not None
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await _exited(process, EXIT_WAIT_S):
        await terminate_posix_process_tree(process, EXIT_WAIT_S)
        await _exited(process, EXIT_WAIT_S)
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()


async def _exited(process: Process, timeout: float) -> bool:
    """Poll, rather than `wait`, which also waits for the pipes to close (a grandchild may hold them)."""
    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(POLL_S)
    return process.returncode is not None
