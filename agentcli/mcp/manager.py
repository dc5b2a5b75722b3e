"""Connections to MCP servers: one asyncio loop in a background thread, every server in parallel.

    manager = McpManager(cwd, connect_timeout=30.0, on_notice=print)
    manager.add(server)                       # or add(server, "needs approval" / "disabled", why)
    manager.connect("github")                 # returns at once; connecting in the background
    manager.wait_for_connections(30.0)        # at most that long; names still connecting come back
    manager.statuses()                        # ServerStatus per server: state, error, tools
    manager.call_tool("github", "search", {"q": "x"}, cancel, timeout=600.0)  # CallOutcome, or ServerDown
    manager.request("github", lambda session: session.list_prompts())  # anything else, on the SDK session
    manager.reconnect("github")
    manager.connect("github", BrowserLogin(...))  # connect, logging in (OAuth) if the server asks
    manager.logout("github")                  # forget its tokens and stop it
    manager.close()                           # stops every server (also done by the session's `with`)

Nothing here imports the `mcp` SDK on the caller's thread: the thread starts with the first
`connect` and loads it there, so a session without servers never pays the ~0.5 s import.

A server that does not finish connecting within `connect_timeout` fails ("did not connect
within 30 s") and is stopped; it never holds up another. One whose connection breaks
mid-session (it exited) is marked failed and reported once through `on_notice`; its calls
raise `ServerDown` until it is reconnected. Stdio servers start through `launch.py`, so they
die with agentcli even when agentcli is killed.

Remote servers that ask for a login (OAuth) use the tokens in `auth_store`, refreshed as they
run out. Without a login to use, a server is "needs login" (the error says how to log in):
only a `connect` given an authorizer (`login.BrowserLogin`, from `/mcp login` or `agentcli mcp
login`) opens a browser, and it has `login.LOGIN_TIMEOUT_S`, not the connect timeout.

A server's elicitation requests go to `elicitor` (none: agentcli does not offer elicitation),
labelled with the agents whose calls of that server are running; a request while none is
running is declined without asking anyone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from agentcli.contracts import JSON
from agentcli.mcp.auth_store import AuthStore, default_store
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.elicitation import Elicitor, Question, Reply, refused
from agentcli.mcp.login import LOGIN_TIMEOUT_S, LoginFailed, LoginRequired, NoLogin
from agentcli.mcp.status import CallCancelled, CallOutcome, CallTimedOut, ServerDown, ServerStatus, State, ToolInfo

if TYPE_CHECKING:
    from agentcli.mcp.oauth import Authorizer

T = TypeVar("T")
Notify = Callable[[str], None]
POLL_S = 0.05
"""How often a waiting caller checks whether the user interrupted."""
STOP_TIMEOUT_S = 10.0
"""How long `close` waits for the servers to stop (the SDK ends a stdio server within ~4 s)."""
STDERR_SHOWN = 400
"""Characters of a failed server's stderr quoted in its error."""
MESSAGE_LIMIT = 6 << 20
"""Characters of one message from a stdio server kept as it arrives, by default: more than the
output cap keeps, and more than the 5 MB the API takes of one image (`agentcli.mcp.tools`)."""
STDERR_READ = 16 * STDERR_SHOWN
"""Bytes read from the end of its stderr for them."""
UNASKED = "agentcli asks the user only while one of the server's own calls is running"


def how_to_log_in(name: str, why: str = "") -> str:
    """The error of a server in "needs login": what happened, if anything, and how to log in."""
    said = f" ({why})" if why else ""
    return f"needs you to log in{said}: run `agentcli mcp login {name}` (or /mcp login {name} in agentcli)"


class McpManager:
    def __init__(
        self,
        cwd: Path,
        *,
        connect_timeout: float,
        on_notice: Notify,
        message_limit: int = MESSAGE_LIMIT,
        elicitor: Elicitor | None = None,
        auth_store: AuthStore | None = None,
    ) -> None:
        self.cwd = cwd
        self.connect_timeout = connect_timeout
        self.on_notice = on_notice
        self.message_limit = message_limit
        """Characters of a stdio server's message kept as it arrives (`agentcli.mcp.stdio`)."""
        self.elicitor = elicitor
        self.auth_store = auth_store or default_store()
        self._callers: dict[str, list[tuple[str, threading.Event | None]]] = {}
        """Per server, the (agent, cancel) of each request of it running now (under `_lock`)."""
        self._status: dict[str, ServerStatus] = {}
        self._sessions: dict[str, Any] = {}
        """The SDK's ClientSession of each connected server (touched on the loop's thread only)."""
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._stops: dict[str, asyncio.Event] = {}
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    # ------------------------------------------------------------------ the caller's side

    def add(self, server: ServerConfig, state: State = "connecting", why: str = "") -> None:
        """Know about `server` (replacing one of that name). Only `connect` starts it: "connecting" is
        for a server about to be connected, "needs approval" and "disabled" say why one is not."""
        with self._lock:
            self._status[server.name] = ServerStatus(server, state, why)

    def statuses(self) -> list[ServerStatus]:
        """Every server, in the order added."""
        with self._lock:
            return list(self._status.values())

    def status(self, name: str) -> ServerStatus:
        """Raises KeyError for a server not added."""
        with self._lock:
            return self._status[name]

    def connect(self, name: str, authorizer: Authorizer | None = None) -> None:
        """Start connecting `name` in the background (stopping its current connection first).
        With `authorizer`, a server that asks for a login gets one through it (the browser).
        Raises KeyError for a server not added."""
        with self._lock:
            if self._closed:
                return
            current = self._status[name]
            self._status[name] = ServerStatus(current.config, "connecting")
            self._changed.notify_all()
        self._submit(self._restart(current.config, authorizer))

    def logout(self, name: str) -> bool:
        """Forget `name`'s tokens and client registration and stop it ("needs login"); False when
        there was no login to forget. Raises KeyError for a server not added."""
        status = self.status(name)
        forgot = self.auth_store.forget(status.config.url)
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(self._stop(name), self._loop).result(STOP_TIMEOUT_S)
        self._set(name, "needs login", how_to_log_in(name))
        return forgot

    reconnect = connect

    def wait_for(self, name: str, timeout: float) -> ServerStatus:
        """`name`'s status once it is no longer connecting, or after `timeout` seconds."""
        with self._changed:
            self._changed.wait_for(lambda: self._status[name].state != "connecting", timeout)
            return self._status[name]

    def wait_for_connections(self, timeout: float) -> list[str]:
        """Wait until no server is connecting, at most `timeout` seconds; the names still connecting."""
        with self._changed:
            self._changed.wait_for(lambda: not self._connecting(), timeout)
            return self._connecting()

    def call_tool(
        self,
        server: str,
        tool: str,
        arguments: JSON,
        cancel: threading.Event,
        timeout: float | None = None,
        agent: str = "",
    ) -> CallOutcome:
        """Call `tool` of `server` for `agent` (see `request`). Raises ServerDown when it is not
        connected (or its connection breaks now), CallCancelled when `cancel` is set before the
        answer comes, CallTimedOut when it has not come within `timeout` seconds."""
        return self.request(
            server, lambda session: self._call(server, session, tool, arguments), cancel, timeout, agent
        )

    def request(
        self,
        server: str,
        operation: Callable[[Any], Awaitable[T]],
        cancel: threading.Event | None = None,
        timeout: float | None = None,
        agent: str = "",
    ) -> T:
        """Run `operation(session)` on the loop with `server`'s SDK `ClientSession` and return its
        result (for prompts, resources, anything the SDK offers). Raises ServerDown when the server
        is not connected, CallCancelled when `cancel` is set first, CallTimedOut when `timeout`
        seconds pass first, and what `operation` raises. Cancelled or timed out, the request is
        abandoned at once: the SDK tells the server (`notifications/cancelled`). A KeyboardInterrupt
        (Ctrl-C, SIGTERM's Halt) while waiting abandons it too and goes on up. `agent` is whose
        request it is (a sub-agent's type, "" for the session's agent): a question the server asks
        meanwhile names it."""

        async def run() -> T:
            session = self._sessions.get(server)
            if session is None:
                raise ServerDown(self._down_message(server))
            return await operation(session)

        caller = (agent, cancel)
        with self._lock:
            self._callers.setdefault(server, []).append(caller)
        try:
            return self._wait(self._submit(run()), cancel, timeout)
        finally:
            with self._lock:
                self._callers[server].remove(caller)

    def _wait(self, future: Future[T], cancel: threading.Event | None, timeout: float | None) -> T:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                return future.result(timeout=POLL_S)
            except TimeoutError:
                if cancel is not None and cancel.is_set():
                    future.cancel()
                    raise CallCancelled from None
                if deadline is not None and time.monotonic() >= deadline:
                    future.cancel()
                    raise CallTimedOut(timeout or 0.0) from None
            except BaseException:
                future.cancel()
                raise

    def close(self) -> None:
        """Stop every server and the loop's thread. Safe to call again."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._loop is None or self._thread is None:
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._stop_all(), self._loop).result(STOP_TIMEOUT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(STOP_TIMEOUT_S)
        if not self._thread.is_alive():
            self._loop.close()

    # ------------------------------------------------------------------ the loop's side

    def _submit(self, coroutine: Awaitable[T]) -> Future[T]:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=loop.run_forever, name="mcp", daemon=True)
            self._thread.start()
            self._loop = loop
        return asyncio.run_coroutine_threadsafe(_as_coroutine(coroutine), self._loop)

    async def _restart(self, server: ServerConfig, authorizer: Authorizer | None) -> None:
        await self._stop(server.name)
        stop = asyncio.Event()
        self._stops[server.name] = stop
        task = asyncio.get_running_loop().create_task(self._serve(server, stop, authorizer))
        self._tasks[server.name] = task
        timeout = self.connect_timeout if authorizer is None else max(self.connect_timeout, LOGIN_TIMEOUT_S)
        asyncio.get_running_loop().call_later(timeout, self._give_up, server.name, task, timeout)

    def _give_up(self, name: str, task: asyncio.Task[None], timeout: float) -> None:
        """The connect timeout passed: a server still connecting fails and is stopped."""
        if self._tasks.get(name) is task and self.status(name).state == "connecting":
            self._set(name, "failed", f"did not connect within {timeout:g} s")
            task.cancel()

    async def _serve(self, server: ServerConfig, stop: asyncio.Event, authorizer: Authorizer | None) -> None:
        """Connect (logging in through `authorizer` if the server asks), list the tools, then hold
        the connection until told to stop."""
        name = server.name
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
            try:
                from agentcli.mcp import connection

                auth = None
                if server.transport != "stdio":
                    from agentcli.mcp.oauth import auth_for

                    auth = auth_for(server, self.auth_store, authorizer or NoLogin(how_to_log_in(name)))
                elicit = self._elicit if self.elicitor is not None else None
                async with contextlib.AsyncExitStack() as stack:
                    session, offers = await connection.open_session(
                        server, stack, errlog, self.cwd, self.message_limit, auth=auth, elicit=elicit
                    )
                    tools = await connection.list_tools(session)
                    self._sessions[name] = session
                    self._set(name, "connected", tools=tuple(tools), offers=offers)
                    try:
                        await stop.wait()
                    finally:
                        self._sessions.pop(name, None)
            except asyncio.CancelledError:
                pass  # stopped, or given up on (`_give_up` said why)
            except Exception as error:
                if self.status(name).state != "connecting":
                    return
                login = _login_failure(error)
                if isinstance(login, LoginRequired):
                    self._set(name, "needs login", str(login))
                elif login is not None:
                    self._set(name, "needs login", how_to_log_in(name, f"the last login did not complete: {login}"))
                else:
                    why = _failure(error, errlog)
                    if server.transport != "stdio":
                        why += f" (from {server.target}: check the url and the headers it needs, such as a token)"
                    self._set(name, "failed", server.conceal(why))

    async def _elicit(self, question: Question) -> Reply:
        """Ask the user `question` through the elicitor, naming the agents whose calls are running."""
        with self._lock:
            callers = list(self._callers.get(question.server, ()))
        if not callers or self.elicitor is None:
            return Reply("decline", reason=UNASKED)
        why = refused(question)
        if why:
            return Reply("decline", reason=why)
        cancel = next((event for _, event in callers if event is not None), None)
        asked = replace(question, agents=tuple(agent for agent, _ in callers), cancel=cancel)
        import anyio

        return await anyio.to_thread.run_sync(self.elicitor, asked, abandon_on_cancel=True)

    async def _call(self, server: str, session: Any, tool: str, arguments: JSON) -> CallOutcome:
        from agentcli.mcp import connection

        try:
            elicit = self._elicit if self.elicitor is not None else None
            return await connection.call_tool(session, tool, arguments, server=server, elicit=elicit)
        except Exception as error:
            if not connection.is_disconnect(error):
                raise
            self._sessions.pop(server, None)
            if self.status(server).state == "connected":
                self._set(server, "failed", "the server stopped")
                self.on_notice(
                    f'MCP server "{server}" stopped; its tools answer with an error until it is reconnected (/mcp).'
                )
                stop = self._stops.get(server)
                if stop is not None:
                    stop.set()
            raise ServerDown(self._down_message(server)) from None

    async def _stop(self, name: str) -> None:
        task = self._tasks.pop(name, None)
        stop = self._stops.pop(name, None)
        if task is None or stop is None:
            return
        if self.status(name).state == "connecting":
            task.cancel()  # it would not look at `stop` before the server answered
        else:
            stop.set()  # it leaves its session and the SDK ends the server
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(task, STOP_TIMEOUT_S)

    async def _stop_all(self) -> None:
        await asyncio.gather(*(self._stop(name) for name in list(self._tasks)), return_exceptions=True)

    # ------------------------------------------------------------------ state

    def _set(
        self,
        name: str,
        state: State,
        error: str = "",
        *,
        tools: tuple[ToolInfo, ...] = (),
        offers: frozenset[str] = frozenset(),
    ) -> None:
        with self._changed:
            current = self._status[name]
            self._status[name] = replace(current, state=state, error=error, tools=tools, offers=offers)
            self._changed.notify_all()

    def _connecting(self) -> list[str]:
        return [name for name, status in self._status.items() if status.state == "connecting"]

    def _down_message(self, server: str) -> str:
        status = self._status.get(server)
        why = f" ({status.error})" if status is not None and status.error else ""
        state = "not connected" if status is None else status.state
        return (
            f'The MCP server "{server}" is down: {state}{why}. Its tools cannot be used now; '
            "carry on without them or ask the user to reconnect it (/mcp)."
        )


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable


def _login_failure(error: BaseException) -> LoginFailed | Exception | None:
    """The login problem behind `error`: a LoginFailed (LoginRequired: nobody can log in), or the
    SDK's OAuth error; None when it is not about logging in."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        inner = pending.pop()
        if inner is None or id(inner) in seen:
            continue
        seen.add(id(inner))
        if isinstance(inner, LoginFailed):
            return inner
        if type(inner).__module__.startswith("mcp.client.auth"):
            return inner if isinstance(inner, Exception) else None
        if isinstance(inner, BaseExceptionGroup):
            pending.extend(inner.exceptions)
        pending.extend((inner.__cause__, inner.__context__))
    return None


def _failure(error: BaseException, errlog: TextIO) -> str:
    """Why connecting failed, with the end of what the server wrote to stderr."""
    inner = error
    while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
        inner = inner.exceptions[0]
    why = str(inner) or type(inner).__name__
    errlog.flush()
    fd = errlog.fileno()  # the server writes to the file itself; read only its end, however much it wrote
    end = os.fstat(fd).st_size
    tail = os.pread(fd, STDERR_READ, max(0, end - STDERR_READ)).decode("utf-8", errors="replace")
    said = " ".join(tail.split())[-STDERR_SHOWN:]
    return f"{why}; it said: {said}" if said else why


def connect_all(manager: McpManager, names: Sequence[str]) -> None:
    """Start connecting each of `names` (in parallel)."""
    for name in names:
        manager.connect(name)
