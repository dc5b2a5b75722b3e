"""A batch's tasks, read and checked whole before anything runs.

TASKS is a JSONL file, one task a line (blank lines are skipped):

- `id` (required): the task's name, letters, digits, `.`, `_` and `-` (its folder under
  `DIR/tasks/`), unique in the file;
- `prompt` (required): what the agent is asked;
- where it works, one of: `workdir`, a folder copied for the task (a relative path is read from
  the TASKS file's folder); `repo`, a git repository (a local path or a URL) cloned for the
  task, with `commit` (default `HEAD`) checked out;
- `setup`: a shell command run in the workspace before the agent (if it fails, the task ends as
  `error` before any model call); `check`: one run after it, whose exit code is the verdict;
- `model`, `max_turns`, `timeout` (seconds for the agent), `permission_mode`, `allowed_tools`
  (a list of rules, or one string of them): the batch's options for this task alone.

Or TASKS is a folder of tasks in Harbor's format (`agentcli.batch.harbor`): each sub-folder with an
`instruction.md` is a task.

`load_tasks` reads all of it and raises one `UsageError` listing every problem with its line
(at most `MAX_PROBLEMS`), so nothing runs until the whole file is right. A field agentcli does
not know is a problem too: this is agentcli's own format, read strictly.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentcli.bounds import JSON_DIGITS, MAX_TURNS_LIMIT, SECONDS, Range, shown
from agentcli.cli.options import PERMISSION_MODES
from agentcli.errors import UsageError

MAX_PROBLEMS = 20
"""Problems listed before the rest are counted only."""
ID_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
TURNS = Range("turns", MAX_TURNS_LIMIT, low=1, whole=True)
CHECK_TIMEOUT_S = 600.0
"""How long a setup or check command may run by default (a Harbor task's verifier says its own)."""
FIELDS = {
    "id": "the task's name",
    "prompt": "what the agent is asked",
    "workdir": "a folder copied for the task",
    "repo": "a git repository (path or URL) cloned for the task",
    "commit": "what to check out of `repo` (default HEAD)",
    "setup": "a shell command run before the agent",
    "check": "a shell command run after it; its exit code is the verdict",
    "model": "the model",
    "max_turns": "the turn limit",
    "timeout": "seconds the agent may take",
    "permission_mode": "the permission mode",
    "allowed_tools": "rules to allow",
}


@dataclass(frozen=True)
class Task:
    """One task of a batch, checked."""

    id: str
    prompt: str
    workdir: Path | None = None
    repo: str | None = None
    """A local path (absolute) or a URL."""
    commit: str = "HEAD"
    setup: str | None = None
    check: str | None = None
    model: str | None = None
    max_turns: int | None = None
    timeout: float | None = None
    permission_mode: str | None = None
    allowed_tools: tuple[str, ...] = ()
    check_timeout: float = CHECK_TIMEOUT_S
    check_env: dict[str, str] = field(default_factory=dict)
    """Variables the check gets besides the workspace's (a Harbor task's `[verifier].env`)."""
    tests: Path | None = None
    """A Harbor task's `tests/` folder: its `test.sh` is the check (`agentcli.batch.harbor`)."""
    leave_out: tuple[str, ...] = ()
    """Names in `workdir`'s top folder that are not copied (a Harbor task's Dockerfile)."""


def task_json(task: Task) -> dict[str, Any]:
    """`task` as JSON, for a worker in another process (`task_from_json` reads it back)."""
    raw = asdict(task)
    for key in ("workdir", "tests"):
        raw[key] = None if raw[key] is None else str(raw[key])
    return raw


def task_from_json(raw: dict[str, Any]) -> Task:
    fields = dict(raw)
    for key in ("workdir", "tests"):
        fields[key] = None if fields[key] is None else Path(fields[key])
    fields["allowed_tools"] = tuple(fields["allowed_tools"])
    fields["leave_out"] = tuple(fields["leave_out"])
    return Task(**fields)


def load_tasks(source: Path) -> list[Task]:
    """The tasks of a JSONL file, or of a folder of Harbor tasks; UsageError listing every problem."""
    if source.is_dir():
        from agentcli.batch.harbor import harbor_tasks

        return harbor_tasks(source)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"Cannot read the tasks file {source}: {error}.") from None
    tasks: list[Task] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task = _task(_object(line), source.parent)
        except _Problem as problem:
            problems.append(f"line {number}: {problem}")
            continue
        if task.id in seen:
            problems.append(f"line {number}: id {task.id!r} is already the id of line {seen[task.id]}.")
            continue
        seen[task.id] = number
        tasks.append(task)
    if problems:
        raise UsageError(_listed(source, problems))
    if not tasks:
        raise UsageError(f"{source} holds no task: give one JSON object a line, with at least id and prompt.")
    return tasks


class _Problem(Exception):
    """What is wrong with one line (the caller adds its number)."""


def _listed(source: Path, problems: list[str]) -> str:
    shown_problems = problems[:MAX_PROBLEMS]
    more = len(problems) - len(shown_problems)
    tail = f"\n  … and {more} more." if more else ""
    listing = "\n  ".join(shown_problems)
    return f"{source} has {len(problems)} bad task(s); nothing was run. Fix them and run again:\n  {listing}{tail}"


def _object(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError as error:  # JSONDecodeError, or a number of more than JSON_DIGITS digits
        raise _Problem(f"not JSON ({_reason(error)}).") from None
    if not isinstance(value, dict):
        raise _Problem(f"a task is a JSON object ({{...}}), not {type(value).__name__}.")
    return value


def _reason(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at column {error.colno}"
    return f"a number of more than {JSON_DIGITS:,} digits"


def _task(raw: dict[str, Any], base: Path) -> Task:
    unknown = [key for key in raw if key not in FIELDS]
    if unknown:
        raise _Problem(f"unknown field {shown(unknown[0])} (a task takes: {', '.join(FIELDS)}).")
    task_id = _text(raw, "id", required=True)
    assert task_id is not None
    if not ID_PATTERN.fullmatch(task_id) or task_id in (".", ".."):
        raise _Problem(
            f"id {shown(task_id)} must be 1 to 128 letters, digits, '.', '_' or '-' "
            "(it names the task's folder), not starting with '.' or '-'."
        )
    prompt = _text(raw, "prompt", required=True)
    assert prompt is not None
    workdir, repo = _text(raw, "workdir"), _text(raw, "repo")
    if (workdir is None) == (repo is None):
        raise _Problem("give the task a place to work: workdir (a folder) or repo (a git repository), one of them.")
    commit = _text(raw, "commit")
    if commit is not None and repo is None:
        raise _Problem("commit goes with repo (a git repository); a workdir is copied as it is.")
    folder = None
    if workdir is not None:
        folder = _local(base, workdir)
        if not folder.is_dir():
            raise _Problem(f"workdir {shown(workdir)} is not a folder ({folder}).")
    if repo is not None and not _is_url(repo):
        local = _local(base, repo)
        if not local.exists():
            raise _Problem(f"repo {shown(repo)} is neither a URL nor an existing path ({local}).")
        repo = str(local)
    mode = _text(raw, "permission_mode")
    if mode is not None and mode not in PERMISSION_MODES:
        raise _Problem(f"permission_mode {shown(mode)} is not one of {', '.join(PERMISSION_MODES)}.")
    return Task(
        id=task_id,
        prompt=prompt,
        workdir=folder,
        repo=repo,
        commit=commit or "HEAD",
        setup=_text(raw, "setup"),
        check=_text(raw, "check"),
        model=_text(raw, "model"),
        max_turns=int(_number(raw, "max_turns", TURNS)) if "max_turns" in raw else None,
        timeout=_number(raw, "timeout", SECONDS) if "timeout" in raw else None,
        permission_mode=mode,
        allowed_tools=_rules(raw.get("allowed_tools")),
    )


def _text(raw: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = raw.get(key)
    if value is None:
        if required:
            raise _Problem(f"{key} is missing ({FIELDS[key]}).")
        return None
    if not isinstance(value, str) or not value.strip():
        raise _Problem(f"{key} must be a non-empty string ({FIELDS[key]}), not {shown(value)}.")
    return value


def _number(raw: dict[str, Any], key: str, kind: Range) -> float:
    value = raw[key]
    if not kind.holds(value):
        raise _Problem(f"{key} must be {kind.describe()}, not {shown(value)}.")
    return float(value) if not isinstance(value, int) else value


def _rules(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) and value.strip():
        return (value,)
    if isinstance(value, list) and value and all(isinstance(rule, str) and rule.strip() for rule in value):
        return tuple(value)
    raise _Problem(
        f'allowed_tools must be a list of rules (["Edit", "Bash(pytest:*)"]) or a string, not {shown(value)}.'
    )


def _local(base: Path, path: str) -> Path:
    return (base / Path(path).expanduser()).resolve()


def _is_url(repo: str) -> bool:
    """`https://…`, `ssh://…`, `git://…`, `file://…` or scp-like `git@host:path`."""
    return "://" in repo or re.fullmatch(r"[\w.-]+@[\w.-]+:.*", repo) is not None
