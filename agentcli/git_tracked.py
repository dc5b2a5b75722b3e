"""Which of a few files git tracks: a "local" settings file that is tracked comes with the repository.

`.agentcli/settings.local.json` and `.claude/settings.local.json` are meant to stay on the
user's machine (Claude Code's `.gitignore` advice, agentcli's saved answers). A repository that
commits one would have it read as the user's own, and so approve itself: its MCP servers, its
hooks, its credential passthrough. `tracked_by_git` asks git (`git ls-files`, which reads only
the index) so that such a file is read as the checked-in settings it is.

Git is run with the repository's fsmonitor turned off (a hostile `.git/config` could name a
program there), without credentials in its environment, and bounded in time and output. When
git cannot say (it timed out, or refused a repository owned by someone else), the files are
counted as tracked: failing closed costs the user a question, the other way a repository its say.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentcli.capped_output import run_capped
from agentcli.credentials import child_environment

GIT_TIMEOUT_S = 3.0
OUTPUT_LIMIT = 64 << 10
NOT_A_REPOSITORY = b"not a git repository"


def tracked_by_git(cwd: Path, paths: Sequence[Path]) -> frozenset[Path]:
    """Those of `paths` (inside `cwd`) that git tracks; none when `cwd` is not in a git
    repository or git is not installed."""
    if not paths:
        return frozenset()
    named = {path.relative_to(cwd).as_posix(): path for path in paths}
    env = child_environment()
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")  # C: its messages untranslated
    argv = ["git", "-c", "core.fsmonitor=false", "-c", "core.quotepath=off", "ls-files", "-z", "--", *named]
    try:
        done = run_capped(argv, cwd=cwd, env=env, limit=OUTPUT_LIMIT, timeout=GIT_TIMEOUT_S)
    except OSError:  # no git: nothing can be known to be tracked
        return frozenset()
    if done.exit_code == 0:
        listed = {name.decode("utf-8", "surrogateescape") for name in done.stdout.split(b"\0") if name}
        return frozenset(path for name, path in named.items() if name in listed)
    if done.exit_code is not None and NOT_A_REPOSITORY in done.stderr:
        return frozenset()
    return frozenset(paths)  # git could not say: fail closed
