"""A basic gate: permission modes plus tool-name allow/deny lists.

(The full rule language and the interactive prompt build on this.)
"""

from __future__ import annotations

from collections.abc import Callable

from agentcli.contracts import JSON, Decision, Tool, ToolContext

MODES = ("default", "acceptEdits", "plan", "bypassPermissions")

Prompter = Callable[[Tool, JSON], Decision]
"""Asks the user about one call; supplied by an interactive front end."""


class ModeGate:
    def __init__(
        self,
        mode: str = "default",
        allow: list[str] | None = None,
        deny: list[str] | None = None,
        prompter: Prompter | None = None,
    ) -> None:
        self.mode = mode
        self.allow = set(allow or [])
        self.deny = set(deny or [])
        self.prompter = prompter

    def check(self, tool: Tool, tool_input: JSON, ctx: ToolContext) -> Decision:
        if tool.name in self.deny:
            return Decision(False, f"{tool.name} is denied by a --disallowed-tools rule.")
        if tool.read_only or tool.name in self.allow or self.mode == "bypassPermissions":
            return Decision(True)
        if self.mode == "plan":
            return Decision(False, f"{tool.name} was not run: the session is in plan mode (read-only).")
        if self.prompter is not None:
            return self.prompter(tool, tool_input)
        return Decision(
            False,
            f"Permission to use {tool.name} was denied (non-interactive run). "
            f"To allow it, pass --allowed-tools {tool.name} or --permission-mode bypassPermissions.",
        )
