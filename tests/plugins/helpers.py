"""Plugins and marketplaces built by the tests: a plugin with every kind of part, and a git
repository (a bare one standing in for a remote) holding a marketplace of them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.plugins.manage import PluginCommands
from tests.context.helpers import GIT_ENV, write
from tests.mcp.helpers import RAW_SERVER

GUARD = """\
import json, os, sys
data = json.load(sys.stdin)
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "guard-saw.txt"), "a") as out:
    out.write(os.environ.get("CLAUDE_PLUGIN_ROOT", "unset") + "\\n")
if "forbidden" in data["tool_input"].get("command", ""):
    print("the greeter plugin forbids this", file=sys.stderr)
    sys.exit(2)
"""
COUNT = "import pathlib; pathlib.Path('tally.txt').write_text('counted by the plugin')\n"
REVIEWER_PROMPT = "You are the greeter plugin's reviewer. Report in one line."


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    )
    return done.stdout.strip()


def make_plugin(folder: Path, name: str = "greeter", **manifest: Any) -> Path:
    """A plugin with a command, an agent, a skill with a script, a PreToolUse hook and a stdio MCP server."""
    write(
        folder / ".claude-plugin" / "plugin.json",
        json.dumps(
            {"name": name, "version": "1.0.0", "description": "Greets people", "author": {"name": "T"}, **manifest}
        ),
    )
    write(folder / "commands" / "greet.md", "---\ndescription: Greet someone\n---\nSay hello to $ARGUMENTS, warmly.\n")
    write(
        folder / "agents" / "reviewer.md",
        f"---\nname: reviewer\ndescription: Reviews greetings\ntools: Read\n---\n{REVIEWER_PROMPT}\n",
    )
    write(
        folder / "skills" / "tally" / "SKILL.md", "---\ndescription: Count the greetings\n---\nRun scripts/count.py.\n"
    )
    write(folder / "skills" / "tally" / "scripts" / "count.py", COUNT)
    write(folder / "hooks" / "guard.py", GUARD)
    hook = {"type": "command", "command": 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"'}
    write(
        folder / "hooks" / "hooks.json", json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
    )
    shutil.copy(RAW_SERVER, folder / "server.py")  # standard library only: it starts as fast as Python
    write(
        folder / "spec.json", json.dumps({"tools": [{"name": "echo", "readOnly": True, "reply": {"text": "echo: hi"}}]})
    )
    server = {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/server.py", "${CLAUDE_PLUGIN_ROOT}/spec.json"]}
    write(folder / ".mcp.json", json.dumps({"mcpServers": {"demo": server}}))
    return folder


def make_marketplace(folder: Path, entries: list[dict[str, Any]], name: str = "test-market") -> Path:
    write(
        folder / ".claude-plugin" / "marketplace.json",
        json.dumps({"name": name, "owner": {"name": "Tests"}, "plugins": entries}),
    )
    return folder


def commit_all(folder: Path, message: str = "plugins") -> str:
    if not (folder / ".git").exists():
        git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", message)
    return git(folder, "rev-parse", "HEAD")


def bare_remote(work: Path, bare: Path) -> Path:
    """A bare clone of the repository `work`: a remote reached by file path, as a server would be."""
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True, capture_output=True)
    return bare


def market_with_greeter(root: Path) -> tuple[Path, Path]:
    """(the marketplace's work tree, its bare remote): one plugin, greeter, under plugins/."""
    work = root / "market"
    make_plugin(work / "plugins" / "greeter")
    make_marketplace(work, [{"name": "greeter", "source": "./plugins/greeter", "description": "Greets"}])
    commit_all(work)
    return work, bare_remote(work, root / "market.git")


def commands(cwd: Path, home: Path, answer: bool | None = True) -> tuple[PluginCommands, list[str]]:
    """The operations with `answer` to every question (None: nobody to ask), and what they said."""
    said: list[str] = []
    ask: Callable[[list[str], str], bool] | None = None
    if answer is not None:

        def ask(lines: list[str], question: str) -> bool:
            said.extend(lines)
            said.append(question)
            return answer

    return PluginCommands(cwd, said.append, ask, home), said
