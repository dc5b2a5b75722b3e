"""Which of a few files git tracks: a "local" settings file that is tracked comes with the repository.

`.agentcli/settings.local.json` and `.claude/settings.local.json` are meant to stay on the
user's machine (Claude Code's `.gitignore` advice, agentcli's saved answers). A repository that
commits one would have it read as the user's own, and so approve itself: its MCP servers, its
hooks, its credential passthrough. `tracked_by_git` asks git (`git ls-files`, which reads only
the index) so that such a file is read as the checked-in settings it is. A file reached through
a symlink (a tracked `.claude` pointing at a tracked folder) is asked about where it really is too.

Git is run with the repository's fsmonitor turned off (a hostile `.git/config` could name a
program there), without credentials in its environment, and bounded in time and output. When
git cannot say (it timed out, or refused a repository owned by someone else), the files are
counted as tracked: failing closed costs the user a question, the other way a repository its say.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentcli.capped_output import Captured, run_capped
from agentcli.credentials import child_environment

GIT_TIMEOUT_S = 3.0
OUTPUT_LIMIT = 64 << 10
NOT_A_REPOSITORY = b"not a git repository"


@dataclass(frozen=True)
class Tracked:
    """git's answer about some files."""

    files: frozenset[Path] = frozenset()
    """Those it tracks (or, when `unsure`, all of them)."""
    unsure: str = ""
    """Why git could not say (then every file counts as tracked)."""


def tracked_by_git(cwd: Path, paths: Sequence[Path]) -> Tracked:
    """Those of `paths` (inside `cwd`) that git tracks, as named or where their symlinks lead;
    none when `cwd` is not in a git repository or git is not installed."""
    if not paths:
        return Tracked()
    asked = {path.relative_to(cwd).as_posix(): path for path in paths}
    if moved := {path.resolve(): path for path in paths if path.resolve() != path.absolute()}:
        top = _git(cwd, "rev-parse", "--show-toplevel")
        if isinstance(top, Captured) and top.exit_code == 0:
            root = Path(os.fsdecode(top.stdout.strip())).resolve()
            asked |= {os.path.relpath(real, cwd): path for real, path in moved.items() if real.is_relative_to(root)}
    done = _git(cwd, "ls-files", "-z", "--", *asked)
    if isinstance(done, str):
        return Tracked() if done == "no git" else Tracked(frozenset(paths), done)
    if done.exit_code == 0:
        listed = {os.fsdecode(name) for name in done.stdout.split(b"\0") if name}
        return Tracked(frozenset(path for name, path in asked.items() if os.path.normpath(name) in listed))
    if NOT_A_REPOSITORY in done.stderr:
        return Tracked()
    why = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return Tracked(frozenset(paths), why[-1] if why else f"git ls-files exited with {done.exit_code}")


def _git(cwd: Path, *args: str) -> Captured | str:
    """git's run, or why it did not finish ("no git" when it is not installed)."""
    env = child_environment()
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")  # C: its messages untranslated
    argv = ["git", "-c", "core.fsmonitor=false", "-c", "core.quotepath=off", *args]
    try:
        done = run_capped(argv, cwd=cwd, env=env, limit=OUTPUT_LIMIT, timeout=GIT_TIMEOUT_S)
    except OSError:
        return "no git"
    return f"git took over {GIT_TIMEOUT_S:g} s" if done.timed_out else done
