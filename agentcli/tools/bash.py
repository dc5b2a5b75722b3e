"""Bash: run a shell command in the project directory, in its own process group."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time

from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.tools.base import BuiltinTool

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000


class BashTool(BuiltinTool):
    name = "Bash"
    description = (
        "Run a command with `bash -c` in the project directory (stdin closed). Each call starts "
        "a fresh shell in the project directory: `cd` and variables do not persist between "
        "calls, so chain with && instead. stdout and stderr come back interleaved with the exit "
        "code. timeout is in milliseconds (default 120000, max 600000). Prefer Read, Grep and "
        "Glob over cat, grep and find."
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command, e.g. `pytest -q tests/`"},
            "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_MS},
            "description": {"type": "string", "description": "5-10 words on what it does"},
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        timeout = tool_input.get("timeout", DEFAULT_TIMEOUT_MS) / 1000
        proc = subprocess.Popen(
            ["bash", "-c", tool_input["command"]],
            cwd=ctx.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        chunks: list[bytes] = []
        reader = threading.Thread(target=_drain, args=(proc, chunks), daemon=True)
        reader.start()
        outcome = "done"
        try:
            outcome = _wait(proc, timeout, ctx.cancel)
        finally:
            if proc.poll() is None:
                _kill_group(proc)
            reader.join(timeout=2)
        output = b"".join(chunks).decode("utf-8", errors="replace").rstrip("\n")
        code = proc.returncode
        if outcome == "timeout":
            note = f"Command timed out after {timeout:g} s; its process group was killed."
            return ToolResult(_join(output, note), is_error=True, summary=note)
        if outcome == "cancelled":
            note = "Command interrupted by the user; its process group was killed."
            return ToolResult(_join(output, note), is_error=True, summary=note)
        status = f"Exit code {code}"
        return ToolResult(_join(output, status), is_error=code != 0, summary=_last_lines(output, status))


def _drain(proc: subprocess.Popen[bytes], chunks: list[bytes]) -> None:
    assert proc.stdout is not None
    stream = proc.stdout
    while chunk := os.read(stream.fileno(), 65536):
        chunks.append(chunk)


def _wait(proc: subprocess.Popen[bytes], timeout: float, cancel: threading.Event) -> str:
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        if cancel.is_set():
            return "cancelled"
        if time.monotonic() >= deadline:
            return "timeout"
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.05)
    return "done"


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _join(output: str, note: str) -> str:
    return f"{output}\n{note}" if output else note


def _last_lines(output: str, status: str) -> str:
    lines = output.splitlines()[-3:]
    return "\n".join([*lines, status])
