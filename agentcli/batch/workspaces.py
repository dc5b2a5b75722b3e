"""A task's own workspace: made before the agent starts, its commands, its final diff.

- `make_workspace`: a copy of the task's `workdir` (symlinks copied as links, never followed),
  or a clone of its `repo` at `commit` (a local repository is cloned `--shared`, without
  copying its objects; a URL is first cloned once per machine into a bare cache under
  `cache`, which later tasks of the batch clone from). Either way the task gets a folder that
  no other task sees.
- `baseline` / `final_diff`: what the workspace held at the start is recorded in a git
  repository of the task's own, outside the workspace (so a workspace that is a repository
  keeps its own index and history untouched), and the final diff is taken against it:
  every change, new and deleted files included (what `.gitignore` ignores is left out).
- `run_shell`: a setup or check command, `bash -c` in the workspace, its output to a file of
  the task's, killed with its process group when its time is up. It and agentcli's own git
  runs get agentcli's environment without the API credentials. `run_logged`: the same through
  the session's workspace, for a check that runs in the agent's sandbox.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path

from agentcli.batch.tasks import Task
from agentcli.credentials import child_environment
from agentcli.git_runner import GitFailed, run_git
from agentcli.workspace.contract import Command, Workspace

GIT_TIMEOUT_S = 600.0
LOG_LIMIT = 1_000_000
"""Characters of a sandboxed check's output kept in its log (its start and its end)."""


class WorkspaceFailed(Exception):
    """The workspace could not be made (a clone or a copy failed): the message says why."""


def make_workspace(task: Task, where: Path, cache: Path, left_out: Collection[Path] = ()) -> Path:
    """The task's workspace at `where` (which must not exist yet); a copied `workdir` leaves out
    the folders `left_out` (the batch's own, when it is inside: no task sees another's results)."""
    if task.repo is not None:
        source = _cached(task.repo, cache) if _is_remote(task.repo) else task.repo
        commit = _git(["rev-parse", "--verify", f"{task.commit}^{{commit}}"], Path(source)).strip()
        _git(["clone", "--quiet", "--shared", "--no-checkout", source, str(where)], where.parent)
        _git(["checkout", "--quiet", "--detach", commit], where)
        return where
    if task.workdir is None:
        where.mkdir()
        return where
    top_names = set(task.leave_out)
    folders = set(left_out)

    def ignored(folder: str, names: list[str]) -> set[str]:
        top = top_names if Path(folder) == task.workdir else set()
        return {name for name in names if name in top or Path(folder, name) in folders}

    try:
        shutil.copytree(task.workdir, where, symlinks=True, ignore=ignored)
    except (OSError, shutil.Error) as error:
        raise WorkspaceFailed(f"copying {task.workdir} failed: {error}") from None
    return where


def _is_remote(repo: str) -> bool:
    return not Path(repo).is_absolute()


def _cached(url: str, cache: Path) -> str:
    """A bare clone of `url` under `cache`, made by the first task that needs it (the others wait)."""
    cache.mkdir(parents=True, exist_ok=True)
    bare = cache / f"{hashlib.sha256(url.encode()).hexdigest()[:16]}.git"
    with _locked(cache / f"{bare.name}.lock"):
        if not (bare / "HEAD").exists():
            partial = bare.with_suffix(".partial")
            shutil.rmtree(partial, ignore_errors=True)
            _git(["clone", "--quiet", "--bare", url, str(partial)], cache)
            partial.rename(bare)
    return str(bare)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def baseline(workspace: Path, git_dir: Path) -> None:
    """Record what `workspace` holds now, in the repository `git_dir` (made here)."""
    _git(["init", "--quiet", "--bare", str(git_dir)], workspace)
    _snapshot(workspace, git_dir)
    _git([*_tree_args(workspace, git_dir), "commit", "--quiet", "--allow-empty", "-m", "start"], workspace)


def final_diff(workspace: Path, git_dir: Path) -> str:
    """Every change to `workspace` since `baseline`, as a patch (binary files included)."""
    _snapshot(workspace, git_dir)
    return _git([*_tree_args(workspace, git_dir), "diff", "--cached", "--binary", "HEAD"], workspace)


def _snapshot(workspace: Path, git_dir: Path) -> None:
    _git([*_tree_args(workspace, git_dir), "add", "--all", "."], workspace)


def _tree_args(workspace: Path, git_dir: Path) -> list[str]:
    return [
        f"--git-dir={git_dir}",
        f"--work-tree={workspace}",
        "-c",
        "user.name=agentcli batch",
        "-c",
        "user.email=batch@agentcli.invalid",
        "-c",
        "core.hooksPath=/dev/null",
    ]


def _git(args: Sequence[str], cwd: Path) -> str:
    """git's output; WorkspaceFailed with its message when it fails."""
    try:
        output = run_git(args, cwd, timeout_s=GIT_TIMEOUT_S, env={"GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"})
    except GitFailed as error:
        raise WorkspaceFailed(f"git {' '.join(args[:2])} failed: {error}") from None
    return output.decode(errors="surrogateescape")


def run_shell(
    argv: Sequence[str], cwd: Path, log: Path, timeout: float, env: Mapping[str, str] | None = None
) -> int | None:
    """Run `argv` in `cwd` with its output (both streams) to `log`; its exit code (negative: a
    signal), or None when it ran out of time and was killed with its process group."""
    environment = child_environment()
    environment.update(env or {})
    with log.open("wb") as out:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # what it left running in the background too
            proc.wait()


def run_logged(
    workspace: Workspace, argv: Sequence[str], log: Path, timeout: float, env: Mapping[str, str] | None = None
) -> int | None:
    """`run_shell` as one of the agent's own commands in `workspace` (its sandbox, where it has
    one), in its root; its output (both streams, head and tail of at most `LOG_LIMIT` characters)
    to `log`. Raises WorkspaceError when the workspace refuses to run it."""
    finished = workspace.run(
        Command(list(argv), env=dict(env or {})), timeout=timeout, cancel=threading.Event(), output_limit=LOG_LIMIT
    )
    log.write_text(finished.output + "\n" if finished.output else "", encoding="utf-8", errors="surrogateescape")
    return None if finished.outcome == "timeout" else finished.exit_code


def shell(command: str) -> list[str]:
    return ["bash", "-c", command]
