"""Running hook commands: each in its own process group, all of one event at once.

A hook is `bash -c COMMAND` (`/bin/sh` where there is no bash), or with `args` the program
COMMAND run with them and no shell (`${CLAUDE_PROJECT_DIR}` filled into each as plain text), in
the project directory with the event's JSON on stdin and the environment every child of
agentcli gets (`credentials.child_environment`: no API key) plus `CLAUDE_PROJECT_DIR` and
`AGENTCLI_PROJECT_DIR`. When its `timeout` passes, its whole
process group is killed and it counts as a non-blocking failure. What it writes is kept up to
`MAX_OUTPUT_CHARS` characters per stream.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Collection, Sequence
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


Started = Callable[[int], None]
"""Told the process group of each hook as it starts (a background hook's, to stop it at the end)."""


def run_hooks(
    hooks: Sequence[HookCommand],
    payload: JSON,
    project: Path,
    passthrough: Collection[str] = (),
    on_start: Started | None = None,
) -> list[HookRun]:
    """Run `hooks` concurrently with `payload` on stdin; their runs in the order given."""
    data = json.dumps(payload).encode()
    env = child_environment(passthrough)
    env["CLAUDE_PROJECT_DIR"] = env["AGENTCLI_PROJECT_DIR"] = str(project)
    if len(hooks) == 1:
        return [_run_one(hooks[0], data, project, env, on_start)]
    with ThreadPoolExecutor(len(hooks), thread_name_prefix="hook") as pool:
        return list(pool.map(lambda hook: _run_one(hook, data, project, env, on_start), hooks))


def _run_one(hook: HookCommand, data: bytes, project: Path, env: dict[str, str], on_start: Started | None) -> HookRun:
    try:
        proc = subprocess.Popen(
            hook_argv(hook, project),
            cwd=project,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, killed whole at the timeout
        )
    except OSError as error:
        return HookRun(hook, None, "", "", failed_to_start=error.strerror or str(error))
    if on_start is not None:
        on_start(proc.pid)
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


PLACEHOLDERS = ("${CLAUDE_PROJECT_DIR}", "${AGENTCLI_PROJECT_DIR}")


def hook_argv(hook: HookCommand, project: Path) -> list[str]:
    """What runs: the command in bash (or sh), or, with `args`, the program itself."""
    if hook.args is None:
        return [_shell(), "-c", hook.command]
    return [_placed(part, project) for part in (hook.command, *hook.args)]


@functools.cache
def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def _placed(text: str, project: Path) -> str:
    """`text` with the project folder in place of its placeholders (nothing else is expanded)."""
    for placeholder in PLACEHOLDERS:
        text = text.replace(placeholder, str(project))
    return text


def _capped(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace")
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return text[:MAX_OUTPUT_CHARS] + f"\n[… {len(text) - MAX_OUTPUT_CHARS:,} more characters cut]"
