"""Running git for agentcli's own work (fetching plugins, building batch task workspaces).

git runs with no terminal prompt (`GIT_TERMINAL_PROMPT=0`: a private or unreachable repository
fails at once instead of waiting for a password), without agentcli's API keys in its environment,
with stdin closed, within a time limit, and only over `PROTOCOLS`: never `ext::`, whose URL is a
command to run, whatever the git configuration says. A failure is a `GitFailed` of one line.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentcli.credentials import child_environment

PROTOCOLS = "file:git:http:https:ssh"
"""What git may fetch with."""


NOT_INSTALLED = "git is not installed"


class GitFailed(Exception):
    """git could not start, ran out of time or failed: one line saying why (git's own last line)."""


def run_git(args: Sequence[str], cwd: Path | None, *, timeout_s: float, env: Mapping[str, str] = {}) -> bytes:
    """git's stdout; `env`: variables added to the child environment described above."""
    child = child_environment()
    child.update({"GIT_TERMINAL_PROMPT": "0", "GIT_ALLOW_PROTOCOL": PROTOCOLS, **env})
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=child,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except FileNotFoundError:
        raise GitFailed(NOT_INSTALLED) from None
    except OSError as error:
        raise GitFailed(f"git {args[0]} could not start: {error}") from None
    except subprocess.TimeoutExpired:
        raise GitFailed(f"git {args[0]} took over {timeout_s:.0f} s and was stopped") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        raise GitFailed(lines[-1] if lines else f"git {args[0]} failed (exit {done.returncode})")
    return done.stdout
