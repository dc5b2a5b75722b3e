"""How many questions a typical session asks, without the sandbox and with it.

The session: the calls a model makes to fix a bug and commit (below, `SESSION`), judged by the
real permission gate in the default mode with no allow rules, as the REPL would. Each question is
answered the way a user who wants fewer questions answers it: "yes, and don't ask again" for
what the question suggests (a command's prefix, the session's edits), else yes. With the
sandbox on, the Bash calls are judged as sandboxed (`Workspace.confines`), and the one host a
command needs (pypi.org for `pip install`) is one more question, asked by the sandbox's proxy.

Usage: .venv/bin/python bench/sandbox_prompts.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.contracts import JSON, Tool, ToolContext
from agentcli.permissions.gate import Gate
from agentcli.permissions.prompt import Answer, PermissionRequest
from agentcli.tools import builtin_tools
from agentcli.workspace.contract import Workspace
from agentcli.workspace.local import LocalWorkspace
from agentcli.workspace.sandbox_settings import SandboxSettings
from agentcli.workspace.sandboxed import SandboxedWorkspace

SESSION: list[tuple[str, JSON]] = [
    ("Read", {"file_path": "README.md"}),
    ("Grep", {"pattern": "def parse"}),
    ("Bash", {"command": "ls -la src"}),
    ("Bash", {"command": "git status"}),
    ("Bash", {"command": "python -m pytest -q"}),
    ("Read", {"file_path": "src/parse.py"}),
    ("Edit", {"file_path": "src/parse.py", "old_string": "a", "new_string": "b"}),
    ("Bash", {"command": "python -m pytest -q tests/test_parse.py"}),
    ("Edit", {"file_path": "src/parse.py", "old_string": "b", "new_string": "c"}),
    ("Write", {"file_path": "tests/test_new.py", "content": "def test(): pass\n"}),
    ("Bash", {"command": "pip install requests"}),
    ("Bash", {"command": "python -m pytest -q"}),
    ("Bash", {"command": "ruff check src tests"}),
    ("Bash", {"command": "ruff format src tests"}),
    ("Bash", {"command": "git diff --stat"}),
    ("Bash", {"command": "git add -A && git commit -m 'Fix the parser'"}),
    ("Bash", {"command": "git log --oneline -3"}),
]
HOSTS = ["pypi.org"]
"""What the session's commands reach over the network (asked about once each in the sandbox)."""


def questions(workspace: Workspace, tools: dict[str, Tool]) -> list[str]:
    asked: list[str] = []

    def prompter(request: PermissionRequest) -> Answer:
        asked.append(f"{request.title}: {request.subject}")
        if request.suggestion is not None:
            return Answer("always", request.suggestion.rules)
        return Answer.yes()

    sandboxed = workspace.confines("true")
    gate = Gate(prompter=prompter, auto_allow_sandboxed=sandboxed)  # sandbox.autoAllowBashIfSandboxed's default
    ctx = ToolContext(workspace)
    for name, tool_input in SESSION:
        decision = gate.check(tools[name], tool_input, ctx)
        assert decision.allowed, (name, tool_input)
    if sandboxed:
        for host in HOSTS:
            gate.ask_about_host(host, 443)
    return asked


def main() -> None:
    tools = {tool.name: tool for tool in builtin_tools()}
    with tempfile.TemporaryDirectory(prefix="agentcli-prompts-") as folder:
        root = Path(folder)
        (root / "src").mkdir()
        (root / "tests").mkdir()
        (root / "README.md").write_text("parser\n")
        (root / "src" / "parse.py").write_text("a\n")
        without = questions(LocalWorkspace(root), tools)
        within = questions(SandboxedWorkspace(root, SandboxSettings(enabled=True)), tools)
    print(f"a typical session of {len(SESSION)} tool calls, default mode, no allow rules:")
    for label, asked in (("without the sandbox", without), ("with the sandbox", within)):
        print(f"\n{label}: {len(asked)} questions")
        for question in asked:
            print(f"  {question}")


if __name__ == "__main__":
    main()
