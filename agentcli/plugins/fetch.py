"""Getting a plugin's or marketplace's files: a git clone, or a copy of a local folder.

git runs as `agentcli.git_runner` runs it (no prompt, no API keys, never `ext::`), with the
user's git configuration (their credential helpers, `url.*.insteadOf`), and never with a value
from a marketplace where an option could go (`--` before the URL; refs and shas are checked in
`marketplace`). A failure is a `PluginError` of one line: git's own last line.

A copy keeps symlinks as links, leaves out `.git`, and is refused when a link leads out of the
copied folder (`check_links`): an installed plugin's files are all its own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from agentcli.git_runner import NOT_INSTALLED, GitFailed, run_git
from agentcli.plugins.manifest import PluginError

GIT_TIMEOUT_S = 300.0


def git(args: list[str], cwd: Path | None = None) -> str:
    """Run git; its stdout, or a PluginError with the last line it wrote to stderr."""
    try:
        output = run_git(args, cwd, timeout_s=GIT_TIMEOUT_S, env={"GIT_SSH_COMMAND": _ssh_command()})
    except GitFailed as error:
        if str(error) == NOT_INSTALLED:
            raise PluginError(f"{NOT_INSTALLED}; agentcli needs it to fetch plugins from git repositories.") from None
        raise PluginError(str(error)) from None
    return output.decode("utf-8", "replace").strip()


def _ssh_command() -> str:
    """The user's own `GIT_SSH_COMMAND`, or ssh that never prompts."""
    return os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")


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
