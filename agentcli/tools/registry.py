"""The tool registry: looks tools up by name and produces the API manifest."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from agentcli.contracts import JSON, Tool


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._entries: dict[str, tuple[Tool, JSON]] = {}
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
        """The `tools` field of a request: stable order, so the prompt cache keeps hitting.

        A tool's entry is the same object request after request while the tool is unchanged, so a
        provider encodes it once (`agentcli.providers.body`); treat it as read-only."""
        return [self._entry(tool) for tool in self._tools.values()]

    def _entry(self, tool: Tool) -> JSON:
        kept = self._entries.get(tool.name)
        if kept is not None:
            same, entry = kept
            if same is tool and entry["description"] == tool.description and entry["input_schema"] is tool.input_schema:
                return entry
        entry = {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
        self._entries[tool.name] = (tool, entry)
        return entry
