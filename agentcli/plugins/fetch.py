"""Getting a plugin's or marketplace's files: a git clone, or a copy of a local folder.

git runs with the user's git configuration (their credentials helpers, `url.*.insteadOf`), no
terminal prompt (`GIT_TERMINAL_PROMPT=0`: an unreachable or private repository fails at once
instead of waiting for a password), without agentcli's API keys in its environment, and never
with a value from a marketplace where an option could go (`--` before the URL; refs and shas
are checked in `marketplace`), and only over `PROTOCOLS` (never `ext::`, whatever the git
configuration says). A failure is a `PluginError` of one line: git's own last line.

A copy keeps symlinks as links, leaves out `.git`, and is refused when a link leads out of the
copied folder (`check_links`): an installed plugin's files are all its own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from agentcli.credentials import child_environment
from agentcli.plugins.manifest import PluginError

GIT_TIMEOUT_S = 300.0
PROTOCOLS = "file:git:http:https:ssh"
"""What git may fetch with: never `ext::`, whose URL is a command to run."""


def git(args: list[str], cwd: Path | None = None) -> str:
    """Run git; its stdout, or a PluginError with the last line it wrote to stderr."""
    env = child_environment()
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_ALLOW_PROTOCOL"] = PROTOCOLS
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        raise PluginError("git is not installed; agentcli needs it to fetch plugins from git repositories.") from None
    except subprocess.TimeoutExpired:
        raise PluginError(f"git {args[0]} took over {GIT_TIMEOUT_S:.0f} s and was stopped.") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        raise PluginError(lines[-1] if lines else f"git {args[0]} failed (exit {done.returncode}).")
    return done.stdout.decode("utf-8", "replace").strip()


def clone(url: str, dest: Path, *, ref: str = "", sha: str = "") -> str:
    """Clone `url` into `dest` (which must not exist) at `sha`, `ref` or the default branch; the commit."""
    branch = ["--branch", ref] if ref and not sha else []
    try:
        git(["clone", "--quiet", "--no-recurse-submodules", *branch, "--", url, str(dest)])
        if sha:
            git(["checkout", "--quiet", "--detach", sha], cwd=dest)
        return git(["rev-parse", "HEAD"], cwd=dest)
    except PluginError as error:
        raise PluginError(f"Cannot get {url}: {error}") from None


def head_commit(folder: Path) -> str:
    """The commit checked out in `folder`, if it is a git work tree's top; empty otherwise."""
    if not (folder / ".git").exists():
        return ""
    try:
        return git(["rev-parse", "HEAD"], cwd=folder)
    except PluginError:
        return ""


def copy_folder(source: Path, dest: Path) -> None:
    """Copy `source` to `dest` (links as links, `.git` left out); PluginError if a link leads out."""
    try:
        shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    except (OSError, shutil.Error) as error:
        raise PluginError(f"Cannot copy {source}: {error}") from None
    check_links(dest)


def check_links(root: Path) -> None:
    """PluginError naming the first symlink under `root` that leads outside it (or nowhere it may go)."""
    real_root = root.resolve()
    for folder, dirs, files in os.walk(real_root):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            if path.is_symlink():
                target = path.resolve()
                if target != real_root and real_root not in target.parents:
                    shown = path.relative_to(real_root).as_posix()
                    raise PluginError(
                        f"{shown} is a symlink to {os.readlink(path)}, outside the plugin's folder; "
                        "a plugin's files must be its own."
                    )


def content_digest(root: Path) -> str:
    """SHA-256 of the paths and contents under `root` (for a folder that is not a git commit)."""
    digest = hashlib.sha256()
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            path = Path(folder) / name
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            if path.is_symlink():
                digest.update(os.readlink(path).encode())
            else:
                digest.update(path.read_bytes())
    return digest.hexdigest()
