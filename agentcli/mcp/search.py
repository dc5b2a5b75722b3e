"""Deferred MCP tools: a large toolset offered as two small tools, so every request stays cheap.

When a conversation's MCP tool definitions would take more than a share of the model's context
window (`mcpToolSearchThreshold` percent in settings, default 10; `ENABLE_TOOL_SEARCH` as in
Claude Code: `auto`, `auto:N` for N percent, `true` always, `false` never), its `tools` hold,
instead of them, `ToolSearch` and `McpCall`:

- `ToolSearch` lists every deferred tool's name and one-line summary in its description; called
  with keywords (or `select:name1,name2`), it returns the matching tools' full definitions and
  loads them.
- `McpCall` calls a loaded tool: `{"name": "mcp__server__tool", "input": {...}}`. It declares
  `Dispatches`, so the executor validates the input against that tool's own schema and the gate
  and the hooks judge the call as that tool's (rules `mcp__server__tool` apply as ever).

Why a proxy and not the loaded tools themselves: the model may only call what `tools` lists, and
adding the loaded tools to `tools` (what Claude Code did before the API's own `defer_loading`)
changes the first block of the prompt, so every load re-writes the whole cached prompt. With
the proxy, the manifest is byte-stable for the whole conversation, on every provider.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentcli.access import NOTHING, Access, unknown
from agentcli.contracts import JSON, Concurrency, Tool, ToolContext, ToolResult
from agentcli.setting_keys import setting

SEARCH_ENV = "ENABLE_TOOL_SEARCH"
THRESHOLD_SETTING = setting("mcpToolSearchThreshold")
DEFAULT_THRESHOLD_PERCENT = 10.0
CHARS_PER_TOKEN = 4
MAX_RESULTS = 5
SUMMARY_CHARS = 120
SEARCH_NAME = "ToolSearch"
CALL_NAME = "McpCall"


def threshold_percent(env: str | None, setting: object) -> float | None:
    """The share of the context window (percent) above which MCP tools are deferred: 0 defers
    them always, None never. `env` (`ENABLE_TOOL_SEARCH`) wins over `setting`."""
    value = (env or "").strip().lower()
    if value in ("true", "1", "yes", "on"):
        return 0.0
    if value in ("false", "0", "no", "off"):
        return None
    if value.startswith("auto:"):
        number = _percent(value.removeprefix("auto:"))
        if number is not None:
            return number
    number = _percent(setting)
    return DEFAULT_THRESHOLD_PERCENT if number is None else number


def _percent(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if 0 <= number <= 100 else None


def definition(tool: Tool) -> JSON:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def definition_tokens(tools: Sequence[Tool]) -> int:
    """About how many tokens the tools' definitions take in every request (4 characters a token)."""
    return sum(len(json.dumps(definition(tool), ensure_ascii=False)) for tool in tools) // CHARS_PER_TOKEN


def should_defer(tools: Sequence[Tool], context_window: int, percent: float | None) -> bool:
    if percent is None or not tools:
        return False
    return definition_tokens(tools) > context_window * percent / 100


@dataclass
class DeferredTools:
    """One conversation's deferred tools and which of them are loaded (shared by its sub-agents)."""

    tools: dict[str, Tool]
    loaded: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def find(self, query: str, limit: int) -> list[Tool]:
        """`select:a,b` → those tools; otherwise the tools whose name and description match the
        most of the query's words (ties in listing order)."""
        if query.startswith("select:"):
            wanted = [name.strip() for name in query.removeprefix("select:").split(",")]
            return [self.tools[name] for name in wanted if name in self.tools]
        words = [word for word in re.split(r"[\s_,]+", query.lower()) if word]
        scored: list[tuple[int, int, Tool]] = []
        for order, tool in enumerate(self.tools.values()):
            haystack = f"{tool.name} {tool.description}".lower()
            score = sum(word in haystack for word in words) + 2 * (query.lower() == tool.name.lower())
            if score:
                scored.append((-score, order, tool))
        return [tool for _, _, tool in sorted(scored, key=lambda item: item[:2])[:limit]]

    def load(self, tools: Sequence[Tool]) -> None:
        with self.lock:
            self.loaded.update(tool.name for tool in tools)

    def is_loaded(self, name: str) -> bool:
        with self.lock:
            return name in self.loaded


def summary(tool: Tool) -> str:
    line = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"


class ToolSearch:
    """Finds deferred tools and loads them (returns their definitions)."""

    name = SEARCH_NAME
    concurrency: Concurrency = "exclusive"  # loads tools: the conversation's own state
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": 'Keywords to find tools by, or "select:<name>,<name>" for exact names.',
            },
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "description": f"At most this many (default {MAX_RESULTS}).",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }

    def __init__(self, deferred: DeferredTools) -> None:
        self.deferred = deferred
        listing = "\n".join(f"- {tool.name}: {summary(tool)}" for tool in deferred.tools.values())
        self._description = (
            f"Loads MCP tools that are not in your tool list (there are too many to send with every request). "
            f"Call it with keywords, or select:<name>,<name> for exact names; it returns the matching tools' "
            f"full definitions (description and input schema) and makes them callable through {CALL_NAME}. "
            f"Load a tool before its first use.\n\nThe deferred tools:\n{listing}"
        )

    @property
    def description(self) -> str:
        return self._description

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        """Loading tools changes only the conversation's own state."""
        return NOTHING

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        query = str(tool_input["query"]).strip()
        limit = tool_input.get("max_results")
        found = self.deferred.find(query, limit if isinstance(limit, int) and limit > 0 else MAX_RESULTS)
        if not found:
            return ToolResult(
                f"No deferred tool matches {query!r}. Try other keywords, or select:<name> with a name from "
                f"the list in {SEARCH_NAME}'s description.",
                summary="No match",
            )
        self.deferred.load(found)
        definitions = json.dumps([definition(tool) for tool in found], indent=1, ensure_ascii=False)
        return ToolResult(
            f"Loaded {len(found)} tool{'s' if len(found) > 1 else ''}. Call one through {CALL_NAME} with "
            f'{{"name": "<its name>", "input": {{...its input, as its input_schema says...}}}}.\n\n{definitions}',
            summary=f"Loaded {', '.join(tool.name for tool in found)}",
        )


class McpCall:
    """Calls a loaded deferred tool (`contracts.Dispatches`): the executor runs that tool instead."""

    name = CALL_NAME
    concurrency: Concurrency = "exclusive"
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": f"The tool's name, as {SEARCH_NAME} returned it."},
            "input": {"type": "object", "description": "The tool's input, as its input_schema says."},
        },
        "required": ["name", "input"],
        "additionalProperties": False,
    }
    description = (
        f"Calls an MCP tool loaded with {SEARCH_NAME}: name is the tool's name, input its input. "
        f"Load the tool with {SEARCH_NAME} first."
    )

    def __init__(self, deferred: DeferredTools, output_limit: int) -> None:
        self.deferred = deferred
        self.output_limit = output_limit

    def dispatch(self, tool_input: JSON) -> tuple[Tool, JSON] | ToolResult:
        name = str(tool_input["name"])
        tool = self.deferred.tools.get(name)
        if tool is None:
            return ToolResult(
                f"There is no deferred tool {name!r}. Find the tool you need with {SEARCH_NAME}.",
                is_error=True,
                summary="Unknown tool",
            )
        if not self.deferred.is_loaded(name):
            return ToolResult(
                f'{name} is not loaded yet. Load it with {SEARCH_NAME} (query "select:{name}") to see its '
                "input schema, then call it again.",
                is_error=True,
                summary="Not loaded",
            )
        return tool, tool_input["input"]

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        """Never judged itself: the executor has the gate judge the tool it dispatches to."""
        return unknown(f"{CALL_NAME} stands for another tool")

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        # The executor runs the dispatched tool instead (gated as that tool); never this.
        return ToolResult(f"{CALL_NAME} could not be dispatched. Tell the user.", is_error=True)
