"""Bash: run a shell command in the project directory, through the workspace (`Workspace.run`:
in its own process group, killed with it on a timeout or an interrupt, its output capped at
`workspace.contract.OUTPUT_LIMIT` characters, which with the status lines stays under the
30,000-character result cap)."""

from __future__ import annotations

import signal

from agentcli.access import Access
from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.tools.base import BuiltinTool, prose
from agentcli.workspace.contract import Command

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000


class BashTool(BuiltinTool):
    name = "Bash"
    description = prose(
        """\
Run a shell command with `bash -c` in the project directory; stdin is closed, so nothing
  interactive. Each call is a fresh shell that starts in the project directory: `cd`, variables and
  aliases do NOT persist between calls, so chain with && (e.g. `cd web && npm test`). Returns stdout
  and stderr interleaved, then the exit code; non-zero exit is an error. Long output keeps its start
  and end. timeout is in ms (default 120000, max 600000); on timeout the command and its children
  are killed.
- Prefer Read, Grep, Glob, Edit and Write over cat, grep, find, sed and echo >. Quote paths that
  contain spaces.
- Do not start servers or watchers in the foreground: they never exit. Run tests and builds in
  their non-interactive, non-watch form (e.g. `CI=1 npm test`, `pytest -q`).
- Never use interactive flags (`git rebase -i`, `git add -p`, editors, pagers: pass `--no-pager`
  or `| cat` when a command would page).

Committing (only when the user asks):
1. In one turn, run `git status`, `git diff` (staged and unstaged) and `git log -5 --oneline` to see
  the change and the repository's message style.
2. Stage the files you mean by name; leave out stray files and anything that may hold secrets
  (.env, keys, credentials), and say so if the user asked to commit them.
3. Write a message that says why, in the repository's style, and pass it with a heredoc:
  git commit -F - <<'EOF' ... EOF
4. If a pre-commit hook changes files, stage them and commit again; if it fails, fix the cause.
  Never --no-verify, never amend a commit you did not just make, never push or force-push unless
  asked.

Opening a pull request (only when asked; use `gh`):
1. Find the base branch, then look at every commit and the whole diff that will go in (`git log
  base..HEAD`, `git diff base...HEAD`), not only the last commit.
2. Push the branch with `git push -u origin HEAD` if it has no upstream.
3. Create it with a title under 70 characters and a body passed by heredoc: a short summary of
  the change and how it was tested: gh pr create --title "..." --body-file - <<'EOF' ... EOF
4. Reply with the pull request's URL."""
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command, e.g. `pytest -q tests/`"},
            "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_MS, "description": "Milliseconds"},
            "description": {"type": "string", "description": "What it does, in 5-10 words"},
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        command = tool_input.get("command")
        return Access(command=command if isinstance(command, str) else "")

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        timeout = min(int(tool_input.get("timeout") or DEFAULT_TIMEOUT_MS), MAX_TIMEOUT_MS) / 1000
        command = Command(["bash", "-c", tool_input["command"]])
        finished = ctx.workspace.run(command, timeout=timeout, cancel=ctx.cancel)
        text = finished.output
        if finished.outcome == "timeout":
            note = f"Command timed out after {timeout:g} s and was killed (with its child processes)."
            return ToolResult(_join(text, note), is_error=True, summary=note, output=text)
        if finished.outcome == "cancelled" or finished.exit_code is None:
            note = "Command interrupted by the user; it was killed (with its child processes)."
            return ToolResult(_join(text, note), is_error=True, summary=note, output=text)
        code = finished.exit_code
        status = f"Exit code {code}"
        if code < 0:
            status += f" (killed by signal {_signal_name(-code)})"
        if finished.outcome == "lingering":
            status += (
                "; background processes still writing to the output were killed (to keep one running, "
                "redirect its output: `cmd > log 2>&1 &`)"
            )
        return ToolResult(_join(text, status), is_error=code != 0, summary=_summary(text, status), output=text)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _join(output: str, note: str) -> str:
    return f"{output}\n{note}" if output else note


def _summary(output: str, status: str) -> str:
    lines = output.count("\n") + 1 if output else 0
    return f"{status.split(';')[0]}, {lines:,} line{'s' if lines != 1 else ''} of output"
