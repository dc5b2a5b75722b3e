"""Running hook commands: each in its own process group, all of one event at once.

A hook is `bash -c COMMAND` (`/bin/sh` where there is no bash), or with `args` the program
COMMAND run with them and no shell (`${CLAUDE_PROJECT_DIR}` filled into each as plain text), in
the project directory with the event's JSON on stdin and the environment every child of
agentcli gets (`credentials.child_environment`: no API key) plus `CLAUDE_PROJECT_DIR` and
`AGENTCLI_PROJECT_DIR`, and for a plugin's hook `CLAUDE_PLUGIN_ROOT` (its folder: bash expands
`${CLAUDE_PLUGIN_ROOT}` in the command; in `args` it is filled in as plain text). When its `timeout` passes, its whole
process group is killed and it counts as a non-blocking failure. What it writes is kept up to
`MAX_OUTPUT_CHARS` characters per stream, the rest dropped as it is read (`capped_output`): a
hook printing 200 MB does not grow agentcli's memory.
"""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from agentcli.capped_output import run_capped
from agentcli.contracts import JSON
from agentcli.credentials import child_environment
from agentcli.hooks.config import HookCommand

MAX_OUTPUT_CHARS = 10_000
MAX_OUTPUT_BYTES = 4 * MAX_OUTPUT_CHARS
"""Read per stream: MAX_OUTPUT_CHARS characters of any UTF-8."""


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
    if hook.plugin_root is not None:
        env = {**env, PLUGIN_ROOT: str(hook.plugin_root)}
    try:
        done = run_capped(
            hook_argv(hook, project),
            cwd=project,
            env=env,
            limit=MAX_OUTPUT_BYTES,
            timeout=hook.timeout,
            stdin=data,
            own_group=True,  # killed whole at the timeout
            on_start=on_start,
        )
    except OSError as error:
        return HookRun(hook, None, "", "", failed_to_start=error.strerror or str(error))
    stdout, stderr = _capped(done.stdout, done.stdout_cut), _capped(done.stderr, done.stderr_cut)
    return HookRun(hook, done.exit_code, stdout, stderr, timed_out=done.timed_out)


PLACEHOLDERS = ("${CLAUDE_PROJECT_DIR}", "${AGENTCLI_PROJECT_DIR}")
PLUGIN_ROOT = "CLAUDE_PLUGIN_ROOT"


def hook_argv(hook: HookCommand, project: Path) -> list[str]:
    """What runs: the command in bash (or sh), or, with `args`, the program itself."""
    if hook.args is None:
        return [_shell(), "-c", hook.command]
    return [_placed(part, project, hook.plugin_root) for part in (hook.command, *hook.args)]


@functools.cache
def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def _placed(text: str, project: Path, plugin_root: Path | None) -> str:
    """`text` with the project (and plugin) folder in place of its placeholders (nothing else is expanded)."""
    for placeholder in PLACEHOLDERS:
        text = text.replace(placeholder, str(project))
    if plugin_root is not None:
        text = text.replace(f"${{{PLUGIN_ROOT}}}", str(plugin_root))
    return text


def _capped(raw: bytes, dropped: int) -> str:
    text = raw.decode("utf-8", errors="replace")
    if len(text) <= MAX_OUTPUT_CHARS and not dropped:
        return text
    kept = text[:MAX_OUTPUT_CHARS]
    more = len(raw) - len(kept.encode("utf-8", errors="replace")) + dropped
    return kept + f"\n[… {more:,} more bytes cut]"
