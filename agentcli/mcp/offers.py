"""The `mcp` SDK's side of prompts and resources: list and get prompts, read a resource.

Run on the manager's loop (`McpManager.request`), like `connection`; what comes back is
agentcli's own: `PromptInfo`, and content blocks of the conversation (text, image).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from agentcli.contracts import JSON
from agentcli.mcp.connection import MAX_PAGES
from agentcli.mcp.status import PromptInfo
from agentcli.mcp.tools import IMAGE_TYPES


async def list_prompts(session: Any) -> list[PromptInfo]:
    found: list[PromptInfo] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        listing = await session.list_prompts(params=params)
        for prompt in listing.prompts:
            arguments = prompt.arguments or []
            found.append(
                PromptInfo(
                    prompt.name,
                    prompt.description or "",
                    tuple(argument.name for argument in arguments),
                    frozenset(argument.name for argument in arguments if argument.required),
                )
            )
        cursor = listing.next_cursor
        if not cursor:
            break
    return found


async def get_prompt(session: Any, name: str, arguments: dict[str, str]) -> list[JSON]:
    """The prompt's messages as the content of one user message."""
    result = await session.get_prompt(name, arguments)
    return [block for message in result.messages for block in _blocks(message.content)]


async def read_resource(session: Any, uri: str) -> list[JSON]:
    """The resource's contents as text blocks: text inlined, binary contents noted."""
    result = await session.read_resource(uri)
    return [_resource_block(contents) for contents in result.contents]


def _blocks(content: Any) -> list[JSON]:
    if isinstance(content, types.TextContent):
        return [{"type": "text", "text": content.text}]
    if isinstance(content, types.ImageContent) and content.mime_type in IMAGE_TYPES:
        return [{"type": "image", "source": {"type": "base64", "media_type": content.mime_type, "data": content.data}}]
    if isinstance(content, types.EmbeddedResource):
        return [_resource_block(content.resource)]
    if isinstance(content, types.ResourceLink):
        return [{"type": "text", "text": f"[resource {content.uri}: {content.name}]"}]
    return [{"type": "text", "text": f"[{content.type} content not shown]"}]


def _resource_block(contents: Any) -> JSON:
    mime = f' type="{contents.mime_type}"' if contents.mime_type else ""
    if isinstance(contents, types.TextResourceContents):
        return {"type": "text", "text": f'<resource uri="{contents.uri}"{mime}>\n{contents.text.rstrip()}\n</resource>'}
    return {"type": "text", "text": f'<resource uri="{contents.uri}"{mime}>[binary contents not shown]</resource>'}
