"""Built-in tools."""

from __future__ import annotations

from agentcli.tools.registry import ToolRegistry


def builtin_tools(*, unsandboxed_commands: bool = False) -> ToolRegistry:
    """A registry holding every built-in tool, in manifest order; with `unsandboxed_commands`
    (`sandbox.allowUnsandboxedCommands`), Bash offers the model `dangerouslyDisableSandbox`."""
    from agentcli.tools.bash import BashTool
    from agentcli.tools.edit import EditTool
    from agentcli.tools.glob import GlobTool
    from agentcli.tools.grep import GrepTool
    from agentcli.tools.read import ReadTool
    from agentcli.tools.write import WriteTool

    return ToolRegistry(
        [
            ReadTool(),
            WriteTool(),
            EditTool(),
            BashTool(unsandboxed_commands=unsandboxed_commands),
            GrepTool(),
            GlobTool(),
        ]
    )
