"""MCP tools as agentcli tools, and the source that offers them to a conversation.

`McpToolSource.freeze()` fixes a conversation's MCP tools at its first request: the tools of
every server connected by then (servers still connecting are waited for, at most the connect
timeout). A server that connects later joins at the next conversation (`/clear`, a new run):
the `tools` of a conversation stay byte-stable, so the prompt cache keeps hitting. Sub-agents
started during the conversation get the same tools. When the tools' definitions would take more
than `defer_above` tokens, the conversation is offered `ToolSearch` and `McpCall` instead
(`agentcli.mcp.search`).

An `McpTool` declares what the gate and the executor need: that it acts through its server
(`Access.server`: the gate asks about every MCP call unless a rule `mcp__server` or
`mcp__server__tool` allows it), read-only (and run alongside other reads) only when the server
annotated it `readOnlyHint`; its origin, the server's and the tool's names as listed
(`contracts.FromMcpServer`); its own output cap (`maxMcpOutputTokens`, default 25,000 tokens),
with a note saying how to raise it; and how long a call may wait for its answer
(`mcpToolTimeout` or `MCP_TOOL_TIMEOUT`, in milliseconds, default 10 minutes), after which the
model is told the server did not answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.access import Access
from agentcli.contracts import JSON, Concurrency, McpOrigin, Tool, ToolContext, ToolResult
from agentcli.mcp import search
from agentcli.mcp.capped_json import CUT_COUNT
from agentcli.mcp.names import RENAME, OfferedName, Refused, server_parts, tool_names
from agentcli.mcp.schemas import SchemaRejected, repaired_schema
from agentcli.mcp.status import CallCancelled, CallTimedOut, ServerDown, ServerStatus, ToolInfo
from agentcli.setting_keys import setting

if TYPE_CHECKING:
    from agentcli.mcp.manager import McpManager

SOURCE = "mcp"
CHARS_PER_TOKEN = 4
DEFAULT_OUTPUT_TOKENS = 25_000
OUTPUT_SETTING = setting("maxMcpOutputTokens")
OUTPUT_ENV = "MAX_MCP_OUTPUT_TOKENS"
DEFAULT_CALL_TIMEOUT_MS = 600_000
CALL_TIMEOUT_SETTING = setting("mcpToolTimeout")
CALL_TIMEOUT_ENV = "MCP_TOOL_TIMEOUT"
MAX_DESCRIPTION = 2048
"""Characters of a server's tool description passed on (as Claude Code): a server cannot flood the prompt."""
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The media types the API takes in an image block."""
MAX_IMAGE_CHARS = 5 * 1024 * 1024
"""Base64 characters of the largest image the API takes: a bigger one would fail every later request."""
NOTE_ROOM = 300
Notify = Callable[[str], None]


@dataclass
class McpTool:
    """One server's tool, as the model sees it: `name` is `mcp__<server>__<tool>` (`agentcli.mcp.names`)."""

    name: str
    server: str
    info: ToolInfo
    input_schema: JSON
    manager: McpManager
    output_tokens: int = DEFAULT_OUTPUT_TOKENS
    call_timeout: float = DEFAULT_CALL_TIMEOUT_MS / 1000
    """Seconds a call may wait for the server's answer (`MCP_TOOL_TIMEOUT`, `mcpToolTimeout`)."""
    concurrency: Concurrency = field(init=False)
    output_limit: int = field(init=False)
    """Characters (`contracts.CapsOwnOutput`): the token cap and room for its note."""
    origin: McpOrigin = field(init=False)
    """The server's and the tool's names as configured and listed (`contracts.FromMcpServer`)."""

    def __post_init__(self) -> None:
        self.origin = McpOrigin(self.server, self.info.name)
        self.concurrency = "shared" if self.info.read_only else "exclusive"
        self.output_limit = self.output_tokens * CHARS_PER_TOKEN + NOTE_ROOM

    @property
    def description(self) -> str:
        text = self.info.description.strip() or self.info.title or f"The {self.info.name} tool of {self.server}."
        return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return Access(server=self.server, server_read_only=self.info.read_only)

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        try:
            outcome = self.manager.call_tool(
                self.server, self.info.name, tool_input, ctx.cancel, self.call_timeout, ctx.agent_label
            )
        except ServerDown as down:
            return ToolResult(str(down), is_error=True, summary=f'MCP server "{self.server}" is down')
        except CallCancelled:
            return ToolResult(
                "Interrupted by the user before this call finished.", is_error=True, summary="Interrupted"
            )
        except CallTimedOut as late:
            return ToolResult(
                self._timed_out(late.seconds), is_error=True, summary=f'MCP server "{self.server}" timed out'
            )
        images: list[JSON] = []
        notes: list[str] = []  # first, where the cap never reaches them
        for media_type, data in outcome.images:
            if media_type not in IMAGE_TYPES:
                notes.append(f"[an image of type {media_type} was left out: the model takes png, jpeg, gif and webp]")
            elif not data or len(data) > MAX_IMAGE_CHARS:
                notes.append("[an image was left out: it was empty, or over the 5 MB the model takes of one image]")
            else:
                images.append({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        text = self._capped("\n\n".join([*notes, *outcome.texts]))
        if not text and images:
            text = f"({len(images)} image{'s' if len(images) > 1 else ''})"
        summary = ("Error" if outcome.is_error else "Done") + (f", {len(images)} image(s)" if images else "")
        return ToolResult(text, is_error=outcome.is_error, summary=summary, images=tuple(images))

    def _timed_out(self, seconds: float) -> str:
        return (
            f'The MCP server "{self.server}" did not answer this call of its tool "{self.info.name}" within '
            f"{seconds:g} s, so agentcli stopped waiting and told the server to cancel it. The server may be stuck "
            "or the call too big: try a smaller request, go on without it, or tell the user. (The limit is "
            f"{CALL_TIMEOUT_ENV}, in milliseconds, or {CALL_TIMEOUT_SETTING} in settings.)"
        )

    def _capped(self, text: str) -> str:
        limit = self.output_tokens * CHARS_PER_TOKEN
        if len(text) <= limit:
            return text
        cut = len(text) - limit
        for note in CUT_COUNT.finditer(text):  # cut on arrival, by the stdio transport: say how much
            if note.end() > limit:
                cut += int(note[1].replace(",", "")) - len(note[0]) - 2  # the note and the two newlines before it
        return (
            f"{text[:limit]}\n\n[... output truncated: {cut:,} characters cut. MCP output is capped at "
            f"{self.output_tokens:,} tokens ({OUTPUT_SETTING} in settings, or {OUTPUT_ENV}); ask for less, "
            "e.g. a narrower query or a page of the results ...]"
        )


class McpToolSource:
    """The MCP tools of one conversation (`agents.sources.ToolSource`): none until `freeze`."""

    name = SOURCE

    def __init__(
        self,
        manager: McpManager | None,
        on_notice: Notify,
        output_tokens: int = DEFAULT_OUTPUT_TOKENS,
        *,
        search_percent: float | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT_MS / 1000,
    ):
        self.manager = manager
        self.on_notice = on_notice
        self.output_tokens = output_tokens
        self.call_timeout = call_timeout
        self.search_percent = search_percent
        """Defer the tools when they take more than this share of the context window (None: never)."""
        self._tools: tuple[McpTool, ...] | None = None
        self._offered: tuple[Tool, ...] = ()

    @property
    def frozen(self) -> bool:
        return self._tools is not None

    def tools(self) -> Sequence[Tool]:
        """What the model is offered: the MCP tools, or `ToolSearch` and `McpCall` standing for them."""
        return self._offered

    def freeze(self, wait: float, context_window: int = 0) -> Sequence[McpTool]:
        """Fix the tools now (once): wait at most `wait` seconds for servers still connecting; defer
        them when they would take more than `search_percent` of `context_window` tokens."""
        if self._tools is None:
            self._tools = self._collect(wait)
            self._offered = self._tools
            if search.should_defer(self._tools, context_window, self.search_percent):
                deferred = search.DeferredTools({tool.name: tool for tool in self._tools})
                limit = self.output_tokens * CHARS_PER_TOKEN + NOTE_ROOM
                self._offered = (search.ToolSearch(deferred), search.McpCall(deferred, limit))
        return self._tools

    def _collect(self, wait: float) -> tuple[McpTool, ...]:
        if self.manager is None:
            return ()
        late = self.manager.wait_for_connections(wait)
        if late:
            names = ", ".join(f'"{name}"' for name in late)
            self.on_notice(
                f"MCP server{'s' if len(late) > 1 else ''} {names} still connecting: their tools join at the next "
                "conversation (/clear), so this one's tool list stays the same (the prompt cache)."
            )
        tools: list[McpTool] = []
        statuses = self.manager.statuses()
        parts, refused = server_parts(status.name for status in statuses)
        sources = {status.name: status.config.source for status in statuses}
        for server in refused:
            self.on_notice(refused_server_notice(server, sources[server.name]))
        for status in statuses:
            if status.state == "connected" and status.name in parts:
                tools.extend(self._tools_of(status, parts[status.name]))
        return tuple(tools)

    def _tools_of(self, status: ServerStatus, part: str) -> list[McpTool]:
        assert self.manager is not None
        usable, left_out = usable_tools(status, part)
        for tool in left_out:
            self.on_notice(f'Left out the tool "{tool.name}" of MCP server "{status.name}": {tool.why}.')
        return [
            McpTool(named.name, status.name, named.info, schema, self.manager, self.output_tokens, self.call_timeout)
            for named, schema in usable
        ]


def usable_tools(status: ServerStatus, part: str) -> tuple[list[tuple[OfferedName, JSON]], list[Refused]]:
    """The tools of a connected server whose tools are named `mcp__<part>__…` that can be offered,
    each with its name and the input schema the API accepts, and the tools left out, with why."""
    offered, left_out = tool_names(part, status.tools)
    usable: list[tuple[OfferedName, JSON]] = []
    for named in offered:
        try:
            usable.append((named, repaired_schema(named.info.input_schema)))
        except SchemaRejected as why:
            left_out.append(Refused(named.info.name, str(why)))
    return usable, left_out


def refused_server_notice(server: Refused, source: Path) -> str:
    """What the user is told about a server refused for its name (configured in `source`)."""
    return (
        f'MCP server "{server.name}" in {source} is not used: {server.why}, so permission rules could not name '
        f"its tools unambiguously. Rename it: {RENAME}."
    )
