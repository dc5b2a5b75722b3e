"""The system prompt: built once per session and byte-identical on every request."""

from __future__ import annotations

import datetime
import platform
from pathlib import Path

from agentcli.contracts import JSON

CORE = """You are agentcli, a coding assistant working in the user's terminal, in their repository.
Help with software engineering tasks: read code, change it, run commands, explain.

# Using tools
- Prefer Read, Edit, Grep and Glob over cat, sed, grep and find in Bash.
- Batch independent read-only calls (Read, Grep, Glob) in one turn.
- Say in one sentence why before calling a tool.
- Keep answers short and direct; the user sees your text in a terminal.

# Safety
- Never force-push, never skip git hooks, never commit unless asked.
- Do not write insecure code; do not reveal secrets from files or the environment."""


def build_system_prompt(cwd: Path, model: str, append: str | None = None) -> list[JSON]:
    today = datetime.date.today().isoformat()
    env = (
        "# Environment\n"
        f"Working directory: {cwd}\n"
        f"Platform: {platform.system().lower()}\n"
        "Shell: bash\n"
        f"Model: {model}\n"
        f"Today's date: {today}"
    )
    text = f"{CORE}\n\n{env}"
    if append:
        text += f"\n\n{append}"
    return [{"type": "text", "text": text}]
