"""Bash: run a shell command in the project directory, in its own process group."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from types import FrameType

from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.credentials import child_environment
from agentcli.tools.base import BuiltinTool, prose

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
OUTPUT_LIMIT = 29_000
"""Characters kept (head + tail); with the status lines this stays under the 30,000 result cap."""
EXIT_GRACE = 0.5
"""Seconds to keep reading after the shell exits (a background job may still hold the output)."""
_KEEP_BYTES = 4 * OUTPUT_LIMIT // 2
"""Bytes buffered at each end: enough for OUTPUT_LIMIT/2 characters of any UTF-8."""


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

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        timeout = min(int(tool_input.get("timeout") or DEFAULT_TIMEOUT_MS), MAX_TIMEOUT_MS) / 1000
        output = HeadTail()
        proc: subprocess.Popen[bytes] | None = None
        try:
            with _ctrl_c_after_spawn():  # a Ctrl-C while the command starts must still find it to kill
                proc = subprocess.Popen(
                    ["bash", "-c", tool_input["command"]],
                    cwd=ctx.cwd,
                    env=child_environment(ctx.env_passthrough),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            outcome = _pump(proc, output, timeout, ctx.cancel)
        except BaseException:  # KeyboardInterrupt included: never leave the command running
            if proc is not None:
                _kill_group(proc)
            raise
        finally:
            if proc is not None and proc.stdout is not None:
                proc.stdout.close()
        if outcome != "done":
            _kill_group(proc)
        text = output.render()
        if outcome == "timeout":
            note = f"Command timed out after {timeout:g} s and was killed (with its child processes)."
            return ToolResult(_join(text, note), is_error=True, summary=note)
        if outcome == "cancelled":
            note = "Command interrupted by the user; it was killed (with its child processes)."
            return ToolResult(_join(text, note), is_error=True, summary=note)
        code = proc.returncode
        status = f"Exit code {code}"
        if code < 0:
            status += f" (killed by signal {_signal_name(-code)})"
        if outcome == "lingering":
            status += (
                "; background processes still writing to the output were killed (to keep one running, "
                "redirect its output: `cmd > log 2>&1 &`)"
            )
        return ToolResult(_join(text, status), is_error=code != 0, summary=_summary(text, status))


def _pump(proc: subprocess.Popen[bytes], output: HeadTail, timeout: float, cancel: threading.Event) -> str:
    """Read output until EOF, the deadline or a cancel; returns how it ended."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            if cancel.is_set():
                return "cancelled"
            now = time.monotonic()
            if now >= deadline:
                return "timeout"
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE:
                return "lingering"
            if selector.select(min(0.05, deadline - now)):
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                output.add(chunk)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    if proc.poll() is None:  # the shell closed its output but keeps running
        while proc.poll() is None:
            if cancel.is_set():
                return "cancelled"
            if time.monotonic() >= deadline:
                return "timeout"
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.05)
    return "done"


@contextlib.contextmanager
def _ctrl_c_after_spawn() -> Iterator[None]:
    """Hold back a SIGINT that arrives while the block runs, and deliver it when the block is done.

    Popen returns only after the child has exec'd, and a KeyboardInterrupt raised inside it
    loses the Popen object: the command, in a session of its own, would run on unkilled.
    Deferred to the end of the block, the interrupt meets the code that kills the group.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # signals are handled in the main thread only: nothing to hold back here
        return
    held: list[FrameType | None] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held and callable(previous):
            previous(signal.SIGINT, held[0])


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


class HeadTail:
    """Output kept in bounded memory: the first and last bytes, counting what fell in between."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped_bytes = 0
        self.dropped_lines = 0

    def add(self, chunk: bytes) -> None:
        room = _KEEP_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        excess = len(self.tail) - _KEEP_BYTES
        if excess > _KEEP_BYTES:  # trim in big steps so appends stay cheap
            self.dropped_bytes += excess
            self.dropped_lines += self.tail.count(b"\n", 0, excess)
            del self.tail[:excess]

    def render(self) -> str:
        head = self.head.decode("utf-8", errors="surrogateescape")  # undecodable bytes: shown escaped later
        tail = self.tail.decode("utf-8", errors="surrogateescape")
        if not self.dropped_bytes and len(head) + len(tail) <= OUTPUT_LIMIT:
            return (head + tail).rstrip("\n")
        half = OUTPUT_LIMIT // 2
        text = head + tail if not self.dropped_bytes else None
        if text is not None:
            kept_head, kept_tail = text[:half], text[len(text) - half :]
            cut_chars = len(text) - 2 * half
            cut_lines = text.count("\n", half, len(text) - half)
        else:
            kept_head, kept_tail = head[:half], tail[max(0, len(tail) - half) :]
            cut_chars = len(head) - len(kept_head) + len(tail) - len(kept_tail) + self.dropped_bytes
            cut_lines = head.count("\n", half) + tail.count("\n", 0, len(tail) - len(kept_tail)) + self.dropped_lines
        note = f"\n\n[... output truncated: {cut_chars:,} characters ({cut_lines:,} lines) cut from the middle ...]\n\n"
        return (kept_head + note + kept_tail).rstrip("\n")


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
