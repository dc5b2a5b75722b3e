"""Prompt-cache breakpoints: on the tools + system prefix and on the newest block.

Applied to a copy of each request, so stored messages are never rewritten. At most 4
breakpoints are ever sent (the API's limit).
"""

from __future__ import annotations

from dataclasses import replace

from agentcli.contracts import JSON, ModelRequest

EPHEMERAL: JSON = {"type": "ephemeral"}


def with_cache_breakpoints(request: ModelRequest) -> ModelRequest:
    system = [dict(block) for block in request.system]
    if system:
        system[-1]["cache_control"] = EPHEMERAL
    tools = list(request.tools)
    if tools and not system:
        tools[-1] = {**tools[-1], "cache_control": EPHEMERAL}
    messages = list(request.messages)
    if messages:
        last = messages[-1]
        content = last["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if content:
            content = [*content[:-1], {**content[-1], "cache_control": EPHEMERAL}]
            messages[-1] = {**last, "content": content}
    return replace(request, system=system, tools=tools, messages=messages)
