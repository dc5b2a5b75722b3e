"""Tools and gates for permission tests: the real built-in tools, stand-ins for Glob and MCP tools."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentcli.access import Access
from agentcli.contracts import JSON, Decision, PermissionGate, ToolContext
from agentcli.permissions.gate import Gate
from agentcli.permissions.prompt import Answer, PermissionRequest
from agentcli.permissions.rules import Behavior, RuleSource, parse_rule
from agentcli.permissions.sources import RuleSet
from agentcli.tools.base import BuiltinTool
from agentcli.tools.bash import BashTool
from agentcli.tools.edit import EditTool
from agentcli.tools.grep import GrepTool
from agentcli.tools.read import ReadTool
from agentcli.tools.write import WriteTool
from agentcli.workspace.local import LocalWorkspace


class StandIn(BuiltinTool):
    """A tool that only has a name and what it declares each call does (it never runs here)."""

    def __init__(self, name: str, declared: Callable[[JSON, ToolContext], Access]) -> None:
        self.name = name
        self.declared = declared

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return self.declared(tool_input, ctx)


def reads_its_path(tool_input: JSON, ctx: ToolContext) -> Access:
    """Glob's way: the folder named by `path`, the project without one."""
    return Access(reads=(ctx.resolve(str(tool_input.get("path") or ".")),))


def mcp_tool(server: str, *, read_only: bool) -> Callable[[JSON, ToolContext], Access]:
    return lambda tool_input, ctx: Access(server=server, server_read_only=read_only)


TOOLS = {
    "Read": ReadTool(),
    "Grep": GrepTool(),
    "Bash": BashTool(),
    "Glob": StandIn("Glob", reads_its_path),
    "Write": WriteTool(),
    "Edit": EditTool(),
    "mcp__srv__do": StandIn("mcp__srv__do", mcp_tool("srv", read_only=False)),
    "mcp__srv__look": StandIn("mcp__srv__look", mcp_tool("srv", read_only=True)),
    "mcp__other__do": StandIn("mcp__other__do", mcp_tool("other", read_only=False)),
}

FLAG = RuleSource("flag", "--allowed-tools")


def rules(allow: tuple[str, ...] = (), ask: tuple[str, ...] = (), deny: tuple[str, ...] = ()) -> RuleSet:
    rule_set = RuleSet()
    groups: tuple[tuple[Behavior, tuple[str, ...]], ...] = (("allow", allow), ("ask", ask), ("deny", deny))
    for behavior, texts in groups:
        for text in texts:
            rule_set.add(parse_rule(text, behavior, FLAG))
    return rule_set


class Recorder:
    """A prompter that records each question and gives scripted answers (default: yes)."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[PermissionRequest] = []

    def __call__(self, request: PermissionRequest) -> Answer:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else Answer.yes()


def check(gate: PermissionGate, tool: str, tool_input: JSON, cwd: Path) -> Decision:
    return gate.check(TOOLS[tool], tool_input, ToolContext(LocalWorkspace(cwd)))


def outcome(gate: Gate, tool: str, tool_input: JSON, cwd: Path) -> str:
    """ "allow" (ran without asking), "ask" (the user was asked) or "deny" (refused without asking)."""
    recorder = Recorder()
    gate.prompter = recorder
    decision = check(gate, tool, tool_input, cwd)
    if recorder.requests:
        return "ask"
    return "allow" if decision.allowed else "deny"
