"""A real MCP server for the tests, written with the `mcp` SDK: `python demo_server.py [stdio|http PORT TOKEN]`.

Tools: `echo` (read-only), `fail` (an error result), `picture` (an image), `crash` (the server
exits mid-call), `shout` (not read-only), `wait` (a slow call), `show_env` (a variable of its environment),
`get weather!` (a name the API would reject), and `form` and `page`, which ask the user (elicitation:
a form of the schema given, a page to open) and answer with what came back, as JSON; `later`
asks once its call is over (when a file appears), writing what came back to another.
Prompt `review(file, focus="bugs")`; resources
`note://greeting` (text) and `blob://dot` (a PNG). `DEMO_START_DELAY` seconds pass before it
answers anything (a slow start); `DEMO_PID_FILE` is where it writes its process id;
`DEMO_EXTRA_TOOLS=N` adds N generated tools `op_1`…`op_N` (a large toolset).
Over http it listens on 127.0.0.1:PORT/mcp and refuses requests without `Authorization: Bearer TOKEN`.

Most tests start it warm (`warm_demo.py`): a copy of a process that has imported it already.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import ToolAnnotations

PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082"
)

server = MCPServer("demo")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@server.tool()
def shout(text: str) -> str:
    """Say the text loudly (not read-only)."""
    return text.upper()


@server.tool()
def fail(why: str) -> str:
    """Always fails, saying why."""
    raise ToolError(f"failed on purpose: {why}")


@server.tool()
def picture() -> Image:
    """A 1x1 PNG."""
    return Image(data=PNG_1X1, format="png")


@server.tool()
def crash() -> str:
    """The server dies in the middle of this call."""
    os._exit(3)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def wait(seconds: float) -> str:
    """Answer after `seconds` (a call still running when agentcli is stopped)."""
    time.sleep(seconds)
    return "waited"


@server.tool()
def show_env(name: str) -> str:
    """The value of an environment variable of the server."""
    return os.environ.get(name, "(unset)")


@server.tool(name="get weather!")
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@server.tool()
def big(size: int) -> str:
    """`size` characters of text."""
    return "x" * size


@server.tool()
async def form(message: str, schema: dict[str, Any], ctx: Context) -> str:
    """Ask the user to fill in a form of `schema`; what came back, as JSON."""
    result = await ctx.request_context.session.elicit_form(message, schema, related_request_id=ctx.request_id)
    return json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json"), sort_keys=True)


@server.tool()
async def page(message: str, url: str, ctx: Context) -> str:
    """Ask the user to open `url`; what came back, as JSON."""
    result = await ctx.request_context.session.elicit_url(message, url, "demo-1", related_request_id=ctx.request_id)
    return json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json"), sort_keys=True)


_later: list[asyncio.Task[None]] = []


@server.tool()
async def later(message: str, trigger: str, answer: str, ctx: Context) -> str:
    """Once `trigger` exists (this call long answered), ask the user; what came back goes to `answer`."""
    session = ctx.request_context.session

    async def ask() -> None:
        while not Path(trigger).exists():
            await asyncio.sleep(0.02)
        result = await session.elicit_form(message, {"type": "object", "properties": {}})
        Path(answer).write_text(json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json")))

    _later.append(asyncio.get_running_loop().create_task(ask()))
    return "will ask later"


@server.prompt()
def review(file: str, focus: str = "bugs") -> str:
    """Ask for a review of a file."""
    return f"Please review {file}, looking for {focus}."


@server.resource("note://greeting", mime_type="text/plain")
def greeting() -> str:
    """A short text."""
    return "Hello from the demo server."


@server.resource("blob://dot", mime_type="image/png")
def dot() -> bytes:
    """A binary resource."""
    return PNG_1X1


def _add_generated_tools(count: int) -> None:
    for number in range(1, count + 1):
        server.tool(
            name=f"op_{number}",
            description=(
                f"Operation {number} on a record of the demo tracker.\n\nUpdates record fields, returns the "
                "changed record; fails when the record does not exist. Use for bulk changes of type "
                f"{number}, with the note stored in the audit log."
            ),
        )(_operation(number))


def _operation(number: int) -> Any:
    def operation(item_id: str, note: str = "", limit: int = 10) -> str:
        return f"op_{number} did {item_id}"

    return operation


def _check_token(app: Any, token: str) -> Any:
    async def checked(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {token}".encode():
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"missing or wrong token"})
            return
        await app(scope, receive, send)

    return checked


def main() -> None:
    _add_generated_tools(int(os.environ.get("DEMO_EXTRA_TOOLS", "0")))
    if pid_file := os.environ.get("DEMO_PID_FILE"):
        Path(pid_file).write_text(str(os.getpid()))
    time.sleep(float(os.environ.get("DEMO_START_DELAY", "0")))
    if len(sys.argv) > 1 and sys.argv[1] == "http":
        import uvicorn

        port, token = int(sys.argv[2]), sys.argv[3]
        app = _check_token(server.streamable_http_app(), token)
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
