"""MCP tools as agentcli tools, and the source that offers them to a conversation.

`McpToolSource.freeze()` fixes a conversation's MCP tools at its first request: the tools of
every server connected by then (servers still connecting are waited for, at most the connect
timeout). A server that connects later joins at the next conversation (`/clear`, a new run):
the `tools` of a conversation stay byte-stable, so the prompt cache keeps hitting. Sub-agents
started during the conversation get the same tools. When the tools' definitions would take more
than `defer_above` tokens, the conversation is offered `ToolSearch` and `McpCall` instead
(`agentcli.mcp.search`).

An `McpTool` declares what the gate and the executor need: `read_only` (and concurrency-safe)
only when the server annotated it `readOnlyHint`; no paths (the gate asks about every MCP call
unless a rule `mcp__server` or `mcp__server__tool` allows it); its own output cap
(`maxMcpOutputTokens`, default 25,000 tokens), with a note saying how to raise it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.contracts import JSON, Tool, ToolContext, ToolResult
from agentcli.mcp import search
from agentcli.mcp.names import SchemaRejected, repaired_schema, tool_name
from agentcli.mcp.status import CallCancelled, ServerDown, ServerStatus, ToolInfo
from agentcli.setting_keys import setting

if TYPE_CHECKING:
    from agentcli.mcp.manager import McpManager

SOURCE = "mcp"
CHARS_PER_TOKEN = 4
DEFAULT_OUTPUT_TOKENS = 25_000
OUTPUT_SETTING = setting("maxMcpOutputTokens")
OUTPUT_ENV = "MAX_MCP_OUTPUT_TOKENS"
MAX_DESCRIPTION = 2048
"""Characters of a server's tool description passed on (as Claude Code): a server cannot flood the prompt."""
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The media types the API takes in an image block."""
NOTE_ROOM = 300
Notify = Callable[[str], None]


@dataclass
class McpTool:
    """One server's tool, as the model sees it (`mcp__<server>__<tool>`)."""

    name: str
    server: str
    info: ToolInfo
    input_schema: JSON
    manager: McpManager
    output_tokens: int = DEFAULT_OUTPUT_TOKENS
    read_only: bool = field(init=False)
    concurrency_safe: bool = field(init=False)
    output_limit: int = field(init=False)
    """Characters (`contracts.CapsOwnOutput`): the token cap and room for its note."""

    def __post_init__(self) -> None:
        self.read_only = self.concurrency_safe = self.info.read_only
        self.output_limit = self.output_tokens * CHARS_PER_TOKEN + NOTE_ROOM

    @property
    def description(self) -> str:
        text = self.info.description.strip() or self.info.title or f"The {self.info.name} tool of {self.server}."
        return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"

    def touched_paths(self, tool_input: JSON, ctx: ToolContext) -> list[Path]:
        return []

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        try:
            outcome = self.manager.call_tool(self.server, self.info.name, tool_input, ctx.cancel, ctx.agent_label)
        except ServerDown as down:
            return ToolResult(str(down), is_error=True, summary=f'MCP server "{self.server}" is down')
        except CallCancelled:
            return ToolResult(
                "Interrupted by the user before this call finished.", is_error=True, summary="Interrupted"
            )
        text = "\n\n".join(outcome.texts)
        images: list[JSON] = []
        for media_type, data in outcome.images:
            if media_type in IMAGE_TYPES:
                images.append({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
            else:
                text += f"\n\n[an image of type {media_type} was left out: the model takes png, jpeg, gif and webp]"
        text = self._capped(text)
        if not text and images:
            text = f"({len(images)} image{'s' if len(images) > 1 else ''})"
        summary = ("Error" if outcome.is_error else "Done") + (f", {len(images)} image(s)" if images else "")
        return ToolResult(text, is_error=outcome.is_error, summary=summary, images=tuple(images))

    def _capped(self, text: str) -> str:
        limit = self.output_tokens * CHARS_PER_TOKEN
        if len(text) <= limit:
            return text
        return (
            f"{text[:limit]}\n\n[... output truncated: {len(text) - limit:,} characters cut. MCP output is capped at "
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
    ):
        self.manager = manager
        self.on_notice = on_notice
        self.output_tokens = output_tokens
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
        for status in self.manager.statuses():
            if status.state == "connected":
                tools.extend(self._tools_of(status, {tool.name for tool in tools}))
        return tuple(tools)

    def _tools_of(self, status: ServerStatus, taken: set[str]) -> list[McpTool]:
        assert self.manager is not None
        made: list[McpTool] = []
        for info in status.tools:
            try:
                schema = repaired_schema(info.input_schema)
            except SchemaRejected as why:
                self.on_notice(f'Skipped the tool "{info.name}" of MCP server "{status.name}": {why}.')
                continue
            name = tool_name(status.name, info.name, taken)
            taken.add(name)
            made.append(McpTool(name, status.name, info, schema, self.manager, self.output_tokens))
        return made
