"""Running hook commands: each in its own process group, all of one event at once.

A hook is `/bin/sh -c COMMAND` in the project directory with the event's JSON on stdin and
the environment every child of agentcli gets (`credentials.child_environment`: no API key)
plus `CLAUDE_PROJECT_DIR` and `AGENTCLI_PROJECT_DIR`. When its `timeout` passes, its whole
process group is killed and it counts as a non-blocking failure. What it writes is kept up to
`MAX_OUTPUT_CHARS` characters per stream.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from agentcli.contracts import JSON
from agentcli.credentials import child_environment
from agentcli.hooks.config import HookCommand

MAX_OUTPUT_CHARS = 10_000
KILL_WAIT_S = 5.0


@dataclass(frozen=True)
class HookRun:
    """How one hook process ended and what it wrote."""

    hook: HookCommand
    exit_code: int | None
    """None when it could not be started or was killed at its timeout."""
    stdout: str
    stderr: str
    timed_out: bool = False
    failed_to_start: str = ""


def run_hooks(
    hooks: Sequence[HookCommand], payload: JSON, project: Path, passthrough: Collection[str] = ()
) -> list[HookRun]:
    """Run `hooks` concurrently with `payload` on stdin; their runs in the order given."""
    data = json.dumps(payload).encode()
    env = child_environment(passthrough)
    env["CLAUDE_PROJECT_DIR"] = env["AGENTCLI_PROJECT_DIR"] = str(project)
    if len(hooks) == 1:
        return [_run_one(hooks[0], data, project, env)]
    with ThreadPoolExecutor(len(hooks), thread_name_prefix="hook") as pool:
        return list(pool.map(lambda hook: _run_one(hook, data, project, env), hooks))


def _run_one(hook: HookCommand, data: bytes, project: Path, env: dict[str, str]) -> HookRun:
    try:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", hook.command],
            cwd=project,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, killed whole at the timeout
        )
    except OSError as error:
        return HookRun(hook, None, "", "", failed_to_start=error.strerror or str(error))
    try:
        out, err = proc.communicate(data, timeout=hook.timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = b"", b""
        with contextlib.suppress(subprocess.TimeoutExpired):
            out, err = proc.communicate(timeout=KILL_WAIT_S)
        return HookRun(hook, None, _capped(out), _capped(err), timed_out=True)
    return HookRun(hook, proc.returncode, _capped(out), _capped(err))


def _capped(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace")
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return text[:MAX_OUTPUT_CHARS] + f"\n[… {len(text) - MAX_OUTPUT_CHARS:,} more characters cut]"
