"""Built-in tools."""

from __future__ import annotations

from agentcli.tools.registry import ToolRegistry


def builtin_tools() -> ToolRegistry:
    """A registry holding every built-in tool, in manifest order."""
    from agentcli.tools.bash import BashTool
    from agentcli.tools.edit import EditTool
    from agentcli.tools.glob import GlobTool
    from agentcli.tools.grep import GrepTool
    from agentcli.tools.read import ReadTool
    from agentcli.tools.write import WriteTool

    return ToolRegistry([ReadTool(), WriteTool(), EditTool(), BashTool(), GrepTool(), GlobTool()])
