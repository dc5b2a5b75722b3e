"""The `mcp` SDK's side of one server: open a session, list its tools, call one.

Imported only by the manager's background thread (the SDK takes ~0.5 s to import). Everything
handed back is agentcli's own types (`ToolInfo`, `CallOutcome`), so no other module sees the SDK;
a server's elicitation requests reach the manager as `elicitation` questions, its answers go
back as the SDK's results.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError

from agentcli.contracts import JSON
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.elicitation import FormQuestion, FormUnusable, Question, Reply, UrlQuestion, parse_form, with_defaults
from agentcli.mcp.status import CallOutcome, ToolInfo

LAUNCHER = Path(__file__).with_name("launch.py")
CLIENT_NAME = "agentcli"
MAX_PAGES = 50
"""Tool listings longer than this many pages are cut (a server that pages forever)."""
Elicit = Callable[[Question], Awaitable[Reply]]


async def open_session(
    server: ServerConfig,
    stack: contextlib.AsyncExitStack[Any],
    errlog: TextIO,
    cwd: Path,
    message_limit: int,
    *,
    auth: httpx2.Auth | None = None,
    elicit: Elicit | None = None,
) -> tuple[Any, frozenset[str]]:
    """An initialised SDK `ClientSession` for `server` (its transport and session kept open by
    `stack`), and what else the server offers besides tools ("prompts", "resources"). A stdio
    server's messages over `message_limit` characters are capped as they arrive (`stdio`).
    `auth` signs a remote server's requests (`agentcli.mcp.oauth`); with `elicit`, agentcli tells
    the server it can ask the user (form and url elicitation) and `elicit` answers."""
    if server.transport == "stdio":
        from mcp.client.stdio import StdioServerParameters

        from agentcli.mcp.stdio import stdio_transport

        parameters = StdioServerParameters(
            command=sys.executable,
            args=["-I", "-S", str(LAUNCHER), str(os.getpid()), server.command, *server.args],
            env=dict(server.env),
            cwd=cwd,
        )
        read, write = await stack.enter_async_context(stdio_transport(server.name, parameters, errlog, message_limit))
    elif server.transport == "http":
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = await stack.enter_async_context(create_mcp_http_client(headers=dict(server.headers), auth=auth))
        read, write = await stack.enter_async_context(streamable_http_client(server.url, http_client=client))
    else:
        from mcp.client.sse import sse_client

        read, write = await stack.enter_async_context(sse_client(server.url, headers=dict(server.headers), auth=auth))
    session = await stack.enter_async_context(
        ClientSession(
            read,
            write,
            client_info=types.Implementation(name=CLIENT_NAME, version=_version()),
            elicitation_callback=_elicitation(server.name, elicit) if elicit is not None else None,
        )
    )
    offered = (await session.initialize()).capabilities
    extras = {"prompts": offered.prompts, "resources": offered.resources}
    return session, frozenset(name for name, capability in extras.items() if capability is not None)


async def list_tools(session: Any) -> list[ToolInfo]:
    """Every tool the server offers, page by page."""
    found: list[ToolInfo] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        listing = await session.list_tools(params=params)
        for tool in listing.tools:
            hints = tool.annotations
            found.append(
                ToolInfo(
                    name=tool.name,
                    description=tool.description or "",
                    input_schema=tool.input_schema,
                    read_only=bool(hints is not None and hints.read_only_hint),
                    title=tool.title or (hints.title if hints is not None and hints.title else ""),
                )
            )
        cursor = listing.next_cursor
        if not cursor:
            break
    return found


async def call_tool(
    session: Any, name: str, arguments: JSON, *, server: str = "", elicit: Elicit | None = None
) -> CallOutcome:
    """The server's answer; an error the server sent instead of a result comes back as an error
    outcome. When the server answers that the user must first open pages (URL elicitation
    required, -32042), each is put to `elicit` (as a question of `server`) and the model is told
    what the user did and to call again once they are done."""
    try:
        result = await session.call_tool(name, arguments)
    except MCPError as error:
        if is_disconnect(error):
            raise
        if error.error.code == types.URL_ELICITATION_REQUIRED:
            return await _pages_first(error.error, server, elicit)
        return CallOutcome(texts=(f"The MCP server answered with an error: {error.error.message}",), is_error=True)
    if not isinstance(result, types.CallToolResult):
        return CallOutcome(texts=("The MCP server asked for input agentcli cannot give.",), is_error=True)
    return outcome_of(result)


async def _pages_first(error: types.ErrorData, server: str, elicit: Elicit | None) -> CallOutcome:
    """The outcome of a call the server refused until the user opens its pages."""
    try:
        pages = UrlElicitationRequiredError.from_error(error).elicitations
    except (ValueError, TypeError):  # pydantic's ValidationError is a ValueError
        pages = []
    said = f"The MCP server answered that the user must first open a page in the browser ({error.message})"
    if not pages:
        return CallOutcome(texts=(f"{said}, but it named no page agentcli can show.",), is_error=True)
    texts = [f"{said}:"]
    for page in pages:
        if elicit is None:
            done = "agentcli did not show it to the user"
        else:
            reply = await elicit(UrlQuestion(server, page.message, page.url))
            if reply.action == "accept":
                done = "the user opened it"
            else:
                done = f"not opened: {reply.reason}" if reply.reason else "the user did not open it"
        texts.append(f'- "{page.message}" {page.url}: {done}.')
    texts.append("Call the tool again once the user says they are done there; do not open the pages yourself.")
    return CallOutcome(texts=("\n".join(texts),), is_error=True)


def outcome_of(result: Any) -> CallOutcome:
    """Text for the model (structured content only when there is no text), images as images."""
    texts: list[str] = []
    images: list[tuple[str, str]] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            texts.append(block.text)
        elif isinstance(block, types.ImageContent):
            images.append((block.mime_type, block.data))
        elif isinstance(block, types.EmbeddedResource):
            inner = block.resource
            if isinstance(inner, types.TextResourceContents):
                texts.append(inner.text)
            else:
                texts.append(f"[binary resource {inner.uri} ({inner.mime_type or 'unknown type'}) not shown]")
        elif isinstance(block, types.ResourceLink):
            texts.append(f"[resource {block.uri}: {block.name}]")
        else:
            texts.append(f"[{block.type} content not shown]")
    if not texts and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    return CallOutcome(texts=tuple(texts), images=tuple(images), is_error=bool(result.is_error))


def _elicitation(server: str, elicit: Elicit) -> Any:
    """The SDK's elicitation callback: the request as a question for `elicit`, its reply as the result."""

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        question: Question
        fields: tuple[Any, ...] = ()
        if isinstance(params, types.ElicitRequestURLParams):
            question = UrlQuestion(server, params.message, params.url)
        else:
            try:
                fields = parse_form(params.requested_schema)
            except FormUnusable as why:
                return types.ErrorData(code=types.INVALID_PARAMS, message=f"agentcli cannot show this form: {why}.")
            question = FormQuestion(server, params.message, fields)
        reply = await elicit(question)
        content: dict[str, Any] | None = None
        if reply.action == "accept" and isinstance(question, FormQuestion):
            content = with_defaults(fields, reply.content or {})
        meta = {"agentcli/reason": reply.reason} if reply.reason else None
        return types.ElicitResult(action=reply.action, content=content, _meta=meta)

    return callback


def is_disconnect(error: BaseException) -> bool:
    """The connection to the server is gone (it exited, or the stream broke)."""
    if isinstance(error, MCPError):
        return error.error.code == types.CONNECTION_CLOSED
    return isinstance(error, (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream))


def _version() -> str:
    from agentcli import __version__

    return __version__
