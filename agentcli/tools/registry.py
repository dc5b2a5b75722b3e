"""The tool registry: looks tools up by name and produces the API manifest."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from agentcli.contracts import JSON, Tool


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is registered twice")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __iter__(self) -> Iterator[Tool]:
        """The tools in manifest order."""
        return iter(self._tools.values())

    def names(self) -> list[str]:
        return list(self._tools)

    def manifest(self) -> list[JSON]:
        """The `tools` field of a request: stable order, so the prompt cache keeps hitting."""
        return [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in self._tools.values()
        ]
