"""Test doubles for the permission gate (the real one is tested with the permissions package)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from agentcli.access import Access
from agentcli.contracts import JSON, Concurrency, Decision, Tool, ToolContext, ToolResult


class RuleGate:
    """Allows a Bash command when some allow rule `Bash(prefix:*)` matches its start; records every check."""

    def __init__(self, allow: Sequence[str] = ()) -> None:
        self.allow = list(allow)
        self.checks: list[tuple[str, JSON, list[str]]] = []

    def check(self, tool: Tool, tool_input: JSON, ctx: ToolContext) -> Decision:
        self.checks.append((tool.name, dict(tool_input), list(self.allow)))
        if tool.access(tool_input, ctx).read_only or tool.name in self.allow:
            return Decision(True)
        command = str(tool_input.get("command", ""))
        for rule in self.allow:
            if rule.startswith(f"{tool.name}(") and rule.endswith(":*)"):
                prefix = rule[len(tool.name) + 1 : -3]
                if command == prefix or command.startswith(prefix + " "):
                    return Decision(True)
        return Decision(False, f"{tool.name} is not allowed here.")

    @contextmanager
    def temporary_allow(self, rules: Sequence[str], label: str = "a skill") -> Iterator[None]:
        self.allow.extend(rules)
        try:
            yield
        finally:
            for rule in rules:
                self.allow.remove(rule)


class ShellBash:
    """A stand-in for the Bash tool: runs the command with `bash -c` and reports like it does."""

    name = "Bash"
    description = "test bash"
    input_schema: JSON = {"type": "object", "properties": {"command": {"type": "string"}}}
    concurrency: Concurrency = "exclusive"

    def __init__(self) -> None:
        self.ran: list[str] = []

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        command = str(tool_input["command"])
        self.ran.append(command)
        done = subprocess.run(["bash", "-c", command], cwd=ctx.cwd, capture_output=True, text=True, check=False)
        output = (done.stdout + done.stderr).rstrip("\n")
        status = f"Exit code {done.returncode}"
        return ToolResult(f"{output}\n{status}" if output else status, is_error=done.returncode != 0)

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return Access(command=str(tool_input["command"]))
