"""`DIR/results.jsonl`: one line per finished task, written by the batch's driver alone.

Each line is one JSON object (`TaskResult.line`), appended with a single `write()` on a file
opened `O_APPEND` as soon as the task ends: once `append` returns, the line is the kernel's, so
killing the driver (even `kill -9`) loses no result written, only the tasks still running,
which have no line and run again next time. A line is never written twice: a task with a line
is finished, and `ResultLog.open` reads which ones are before anything starts.

A driver killed within a `write()` could leave a torn last line (no newline at the end): it is
cut off when the log is opened again, and its task runs again. Only one driver may use a
folder at a time: `open` takes an exclusive lock (`flock` on `DIR/.lock`, which the kernel
drops when the process dies) and refuses a second one.

Fields of a line: `id`, `status` (`passed`, `failed`, `error`, `timeout`, `budget`),
`check_exit_code` (null without a check, or when it did not run), `turns`, `tool_calls`,
`tokens` (`input`, `output`, `cache_read`, `cache_creation`), `cost_usd`, `wall_s`,
`error_class` (null, or what ended it: `setup_failed`, `workspace`, `crashed`,
`model_unavailable`, `model_error`, `task_budget`, `timeout`, `check_timeout`, `usage`, the
name of the exception that stopped the agent…), `error` (a message),
`attempts`, `model`, `reward` (a Harbor verifier's), `sandboxed` (whether the agent's commands
ran in the sandbox), `finished` (ISO time).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

from agentcli.errors import UsageError

RESULTS = "results.jsonl"
LOCK = ".lock"
Status = Literal["passed", "failed", "error", "timeout", "budget"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "error", "timeout", "budget")


@dataclass
class Tokens:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0


@dataclass
class TaskResult:
    """What one task came to (a line of results.jsonl)."""

    id: str
    status: Status
    check_exit_code: int | None = None
    turns: int = 0
    tool_calls: int = 0
    tokens: Tokens = field(default_factory=Tokens)
    cost_usd: float = 0.0
    wall_s: float = 0.0
    error_class: str | None = None
    error: str | None = None
    attempts: int = 1
    model: str | None = None
    reward: float | None = None
    sandboxed: bool = False
    """Whether the agent's commands (and the check) ran in the sandbox."""
    finished: str = ""

    def line(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(", ", ": ")) + "\n"

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> TaskResult:
        """A result as the worker sent it (or a line read back); KeyError/TypeError when malformed."""
        fields = {key: raw[key] for key in cls.__dataclass_fields__ if key in raw}
        fields["tokens"] = Tokens(**fields.get("tokens", {}))
        return cls(**fields)


class ResultLog:
    """The batch folder's results, open for appending; use as a context manager."""

    def __init__(self, folder: Path, lock_fd: int, fd: int, finished: dict[str, Status], spent: float) -> None:
        self.folder = folder
        self._lock_fd = lock_fd
        self._fd = fd
        self.finished = finished
        """The id of each task with a line, and its status."""
        self.spent = spent
        """Dollars the finished tasks cost (earlier runs of this batch included)."""

    @classmethod
    def open(cls, folder: Path) -> ResultLog:
        """Lock `folder` (made if needed), repair a torn last line, and read what is finished.
        UsageError when another driver holds the folder or a line is not a result."""
        try:
            folder.mkdir(parents=True, exist_ok=True)
            lock_fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise UsageError(f"Cannot use {folder} for the batch's results: {error}.") from None
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            raise UsageError(
                f"Another agentcli batch is running with --out {folder}: wait for it to end, or give another folder."
            ) from None
        try:
            path = folder / RESULTS
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            finished, spent = _read(fd, path)
        except BaseException:
            os.close(lock_fd)
            raise
        return cls(folder, lock_fd, fd, finished, spent)

    def append(self, result: TaskResult) -> None:
        """Write `result`'s line at once (one `write`); a task is written once only."""
        if result.id in self.finished:
            raise ValueError(f"task {result.id} already has a result")
        data = result.line().encode()
        written = os.write(self._fd, data)
        while written < len(data):  # a regular file takes it whole; a full disk may not
            written += os.write(self._fd, data[written:])
        self.finished[result.id] = result.status
        self.spent += result.cost_usd

    def close(self) -> None:
        for fd in (self._fd, self._lock_fd):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _read(fd: int, path: Path) -> tuple[dict[str, Status], float]:
    """The finished tasks and their cost; a torn last line (no newline) is cut off first."""
    with os.fdopen(os.dup(fd), "rb") as file:
        data = file.read()
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        os.ftruncate(fd, keep)  # the task whose line it was runs again
        data = data[:keep]
    finished: dict[str, Status] = {}
    spent = 0.0
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            result = TaskResult.from_json(json.loads(raw))
        except (ValueError, KeyError, TypeError):
            raise UsageError(
                f"{path} line {number} is not a task's result: remove the line (its task then runs again)."
            ) from None
        finished[result.id] = result.status
        spent += result.cost_usd
    return finished, spent


def read_results(folder: Path) -> Iterator[TaskResult]:
    """The results in `folder/results.jsonl`, in order, skipping lines that are not results."""
    try:
        with (folder / RESULTS).open("rb") as file:
            for raw in file:
                if not raw.endswith(b"\n"):
                    return  # torn: not a result yet
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    yield TaskResult.from_json(json.loads(raw))
    except FileNotFoundError:
        return
