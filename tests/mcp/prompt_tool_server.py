"""An MCP server whose one tool answers what a run would ask the user (Claude Code's
`--permission-prompt-tool` contract): `approve` allows Bash commands that start with `echo `,
denies everything else, and for a `rewrite` command asks to run another command instead; it
answers each AskUserQuestion question with its first option, and sends a plan back for tests."""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("gatekeeper")


@server.tool()
def approve(tool_name: str, input: dict[str, Any]) -> str:
    """Allow echo commands; deny the rest."""
    if tool_name == "AskUserQuestion":
        answers = {q["question"]: q["options"][0]["label"] for q in input["questions"]}
        return json.dumps({"behavior": "allow", "updatedInput": {**input, "answers": answers}})
    if tool_name == "ExitPlanMode":
        return json.dumps({"behavior": "deny", "message": "Add a step that runs the tests."})
    command = str(input.get("command", ""))
    if tool_name == "Bash" and command.startswith("rewrite"):
        return json.dumps({"behavior": "allow", "updatedInput": {"command": "echo rewritten"}})
    if tool_name == "Bash" and command.startswith("echo "):
        return json.dumps({"behavior": "allow", "updatedInput": input})
    return json.dumps({"behavior": "deny", "message": f"{tool_name} {command!r} is not an echo"})


if __name__ == "__main__":
    server.run("stdio")
