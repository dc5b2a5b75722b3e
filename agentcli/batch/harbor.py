"""Tasks in Harbor's format: a folder of task folders, each read as one batch task.

A Harbor task folder holds `instruction.md` (the prompt), `task.toml` (`[agent] timeout_sec`,
`[verifier] timeout_sec` and `env`; the rest, metadata and resources, is not used),
`environment/` (a Dockerfile and its build context) and `tests/test.sh` (the verifier).

agentcli does not build the Docker environment: the task works on this machine, in a copy of
its `environment/` folder (the build context, without the Dockerfile and compose files), and
`tests/test.sh` runs in that workspace as the check once the agent is done. Harbor's tests read
`/tests` and write their reward to `/logs/verifier/reward.txt` (or `reward.json`); where
bubblewrap is installed, the check sees the task's `tests/` at `/tests`, a folder of the
task's at `/logs/verifier` and the workspace at `/app`, and a reward of 1 passes the task
(the reward is recorded). Without bubblewrap, or without a reward file, the exit code decides.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import tomllib
from pathlib import Path
from typing import Any

from agentcli.batch.tasks import CHECK_TIMEOUT_S, ID_PATTERN, MAX_PROBLEMS, Task
from agentcli.bounds import SECONDS, shown
from agentcli.errors import UsageError

INSTRUCTION = "instruction.md"
NOT_COPIED = ("Dockerfile", "docker-compose.yaml", "docker-compose.yml")
OUTSIDE_THE_SANDBOX = (
    "Harbor tasks: tests/test.sh runs outside the sandbox, in a bubblewrap namespace of its own that "
    "gives it /tests and /app (the sandbox allows none inside it): it runs what the agent wrote with your authority."
)
NOTICE = (
    "Harbor tasks: their Docker environment is not built. Each task works on this machine in a copy of "
    "its environment/ folder, and tests/test.sh runs there as the check."
)


def harbor_tasks(folder: Path) -> list[Task]:
    """Every task folder under `folder` (or `folder` itself, when it is one); UsageError listing
    every problem, nothing run."""
    folders = [folder] if (folder / INSTRUCTION).is_file() else sorted(p for p in folder.iterdir() if p.is_dir())
    tasks: list[Task] = []
    problems: list[str] = []
    for task_folder in folders:
        try:
            tasks.append(_task(task_folder.resolve()))
        except _Problem as problem:
            problems.append(f"{task_folder.name}: {problem}")
    if problems:
        listing = "\n  ".join(problems[:MAX_PROBLEMS])
        more = f"\n  … and {len(problems) - MAX_PROBLEMS} more." if len(problems) > MAX_PROBLEMS else ""
        raise UsageError(f"{folder} has {len(problems)} bad Harbor task(s); nothing was run:\n  {listing}{more}")
    if not tasks:
        raise UsageError(
            f"{folder} is a folder but holds no Harbor task (a folder with {INSTRUCTION}, task.toml and "
            "tests/test.sh). Give a JSONL file of tasks, or a folder of Harbor tasks."
        )
    return tasks


class _Problem(Exception):
    pass


def _task(folder: Path) -> Task:
    if not ID_PATTERN.fullmatch(folder.name):
        raise _Problem("the folder's name is the task's id: letters, digits, '.', '_' or '-'.")
    try:
        prompt = (folder / INSTRUCTION).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise _Problem(f"cannot read {INSTRUCTION} ({error}).") from None
    if not prompt.strip():
        raise _Problem(f"{INSTRUCTION} is empty.")
    config = _config(folder / "task.toml")
    tests = folder / "tests"
    if not (tests / "test.sh").is_file():
        raise _Problem("tests/test.sh is missing (the verifier).")
    verifier = _table(config, "verifier")
    environment = folder / "environment"
    return Task(
        id=folder.name,
        prompt=prompt,
        workdir=environment if environment.is_dir() else None,
        timeout=_seconds(_table(config, "agent"), "agent"),
        check_timeout=_seconds(verifier, "verifier") or CHECK_TIMEOUT_S,
        check_env=_env(verifier),
        tests=tests,
        leave_out=NOT_COPIED,
    )


def _config(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except FileNotFoundError:
        raise _Problem("task.toml is missing.") from None
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise _Problem(f"task.toml cannot be read: {error}.") from None


def _table(config: dict[str, Any], name: str) -> dict[str, Any]:
    table = config.get(name, {})
    if not isinstance(table, dict):
        raise _Problem(f"task.toml: [{name}] must be a table.")
    return table


def _seconds(table: dict[str, Any], name: str) -> float | None:
    value = table.get("timeout_sec")
    if value is None:
        return None
    if not SECONDS.holds(value):
        raise _Problem(f"task.toml: [{name}] timeout_sec must be {SECONDS.describe()}, not {shown(value)}.")
    return float(value)


def _env(verifier: dict[str, Any]) -> dict[str, str]:
    """`[verifier] env`, taken literally: a checked-in task never expands the user's variables
    (`${API_KEY}` stays those characters)."""
    env = verifier.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise _Problem("task.toml: [verifier] env must be a table of strings.")
    return dict(env)


def check_argv(tests: Path, workspace: Path, logs: Path) -> list[str]:
    """How to run a Harbor task's `tests/test.sh` in `workspace`: inside bubblewrap, where it
    is installed, with `/tests`, `/logs/verifier` and `/app` where Harbor's tests look for
    them (the machine's own folders are left untouched: the sandbox's root is a fresh one with
    each of the machine's top-level folders mounted in it); else plain bash in the workspace."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return ["bash", str(tests / "test.sh")]
    argv = [bwrap, "--die-with-parent", "--tmpfs", "/"]
    for entry in sorted(os.scandir("/"), key=lambda entry: entry.name):
        if entry.name in _MOUNTED_APART:
            continue
        if entry.is_symlink():
            argv += ["--symlink", os.readlink(entry.path), entry.path]
        elif entry.is_dir():
            argv += ["--dev-bind", entry.path, entry.path]
    argv += ["--proc", "/proc", "--dev-bind", "/dev", "/dev"]
    argv += ["--ro-bind", str(tests), "/tests", "--bind", str(logs), "/logs/verifier"]
    argv += ["--bind", str(workspace), "/app", "--chdir", "/app", "bash", "/tests/test.sh"]
    return argv


_MOUNTED_APART = {"proc", "dev", "tests", "logs", "app"}


def reward(logs: Path) -> float | None:
    """The reward a Harbor verifier wrote (`reward.txt`, or `reward.json`'s `reward`), if any."""
    with contextlib.suppress(OSError, ValueError):
        return _finite(float((logs / "reward.txt").read_text().strip()))
    with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
        value = json.loads((logs / "reward.json").read_text()).get("reward")
        return _finite(float(value))
    return None


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
