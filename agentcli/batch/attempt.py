"""One attempt at one task, wherever it runs (a local worker process, a Ray worker).

`run_attempt` makes the task's workspace under a scratch folder of its own, runs `setup`,
the agent (a `Session` rooted at the workspace, its requests through the batch's gate, its
transcripts in the scratch folder, no checkpoints: the workspace is thrown away), then the
check, and takes the workspace's final diff. With the sandbox on, the session's sandbox has
the workspace as its project and hides the batch's folder; the check runs in it too (it runs
what the agent wrote), the setup (the batch author's command, before the agent) outside. It
writes nothing of the batch's output folder: it returns the result, the files for
`DIR/tasks/ID/` and the session's notices (`Finished`), which the driver alone writes and
shows. The scratch folder is removed.

The verdict (`results.TaskResult.status`): `error` when the workspace or `setup` failed, or
the agent could not run (a model error after the loop's own retries, bad settings, a sandbox
required and unavailable: `sandbox_unavailable`); `budget`
when the task's or the batch's budget stopped it; `timeout` when the agent ran out of time
(the task's `timeout`); else the check's exit code decides (`passed` on 0, `failed` otherwise;
a Harbor verifier's reward of 1 passes), and without a check an agent that finished passes.
An agent stopped by its turn limit, by hooks or for making no progress still has its check run.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentcli.batch.admission import BatchAdmission, BatchBudgetSpent, Link
from agentcli.batch.results import Status, TaskResult, Tokens
from agentcli.batch.tasks import CHECK_TIMEOUT_S, Task
from agentcli.batch.workspaces import (
    WorkspaceFailed,
    baseline,
    final_diff,
    make_workspace,
    run_logged,
    run_shell,
    shell,
)
from agentcli.contracts import Usage
from agentcli.errors import (
    AgentcliError,
    Cancelled,
    CostBudgetExceeded,
    ModelAPIError,
    StopRun,
    TransientModelError,
    UsageError,
)
from agentcli.events import AgentEvent, Notice
from agentcli.loop import LoopConfig
from agentcli.session import Session, SessionOptions
from agentcli.session.sandbox import SandboxRequired
from agentcli.workspace.contract import Workspace, WorkspaceError

BATCH_BUDGET = "batch_budget"
"""`error_class` of a task the batch's budget stopped: no result is written, it runs again."""
RETRYABLE = ("crashed", "model_unavailable", "workspace", "sandbox_unavailable")
"""`error_class`es of failures of the infrastructure, not of the task: retried up to `--retries`."""


@dataclass(frozen=True)
class Defaults:
    """What the batch's command line says for every task (a task's own fields override them)."""

    session: SessionOptions = field(default_factory=SessionOptions)
    task_budget_usd: float | None = None
    batch_budget_usd: float | None = None
    retry_base_delay: float = LoopConfig.retry_base_delay
    hidden: tuple[str, ...] = ()
    """Folders no task may see: the batch's own (`--out`), left out of a copied `workdir` and
    hidden from the task's sandbox."""

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "session": asdict(self.session)}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Defaults:
        return cls(**{**raw, "session": SessionOptions(**raw["session"]), "hidden": tuple(raw.get("hidden", ()))})

    def options_for(self, task: Task) -> SessionOptions:
        """The session's options for `task`: the batch's, with the task's own fields instead."""
        options = replace(self.session, continue_session=False, resume=None, max_budget_usd=self.task_budget_usd)
        if task.model is not None:
            options.model = task.model
        if task.max_turns is not None:
            options.max_turns = task.max_turns
        if task.permission_mode is not None:
            options.permission_mode = task.permission_mode
        if task.allowed_tools:
            options.allowed_tools = list(task.allowed_tools)
        return options


@dataclass
class Finished:
    """An attempt's result, the files for `DIR/tasks/ID/` (name relative to it: text), and what
    its session had to tell the user (`events.Notice`: the sandbox that could not start…)."""

    result: TaskResult
    files: dict[str, str] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"result": asdict(self.result), "files": self.files, "notices": self.notices}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Finished:
        return cls(TaskResult.from_json(raw["result"]), dict(raw["files"]), [str(n) for n in raw.get("notices", [])])


def run_attempt(task: Task, defaults: Defaults, scratch: Path, cache: Path, link: Link, attempt: int = 1) -> Finished:
    """Run `task` once in `scratch` (made here, removed after); never raises for the task's own failures.
    `scratch`'s parent holds the other attempts' scratch folders on this machine: hidden from the
    task's sandbox, wherever the temporary folder is (only `/tmp` is private there anyway)."""
    attempt_run = _Attempt(task, defaults, scratch, cache, link)
    try:
        result = attempt_run.run()
    except Exception as error:  # a bug of ours: the task ends in error, the batch goes on
        result = attempt_run.result("error", type(error).__name__, f"Internal error: {type(error).__name__}: {error}")
    finally:
        files = attempt_run.files()
        shutil.rmtree(scratch, ignore_errors=True)
    result.attempts = attempt
    return Finished(result, files, attempt_run.notices)


class _Attempt:
    def __init__(self, task: Task, defaults: Defaults, scratch: Path, cache: Path, link: Link) -> None:
        self.task = task
        self.defaults = defaults
        self.scratch = scratch
        self.cache = cache
        self.link = link
        self.started = time.monotonic()
        self.workspace = scratch / "workspace"
        self.transcripts = scratch / "transcripts"
        self.usage = Usage()
        self.cost = 0.0
        self.turns = 0
        self.tool_calls = 0
        self.model: str | None = None
        self.check_exit_code: int | None = None
        self.reward: float | None = None
        self.diff: str | None = None
        self.sandboxed = False
        self.notices: list[str] = []

    def result(self, status: Status, error_class: str | None = None, error: str | None = None) -> TaskResult:
        return TaskResult(
            id=self.task.id,
            status=status,
            check_exit_code=self.check_exit_code,
            turns=self.turns,
            tool_calls=self.tool_calls,
            tokens=Tokens(
                self.usage.input_tokens,
                self.usage.output_tokens,
                self.usage.cache_read_input_tokens,
                self.usage.cache_creation_input_tokens,
            ),
            cost_usd=round(self.cost, 6),
            wall_s=round(time.monotonic() - self.started, 3),
            error_class=error_class,
            error=error,
            model=self.model,
            reward=self.reward,
            sandboxed=self.sandboxed,
            finished=datetime.now(UTC).isoformat(timespec="seconds"),
        )

    def run(self) -> TaskResult:
        self.scratch.mkdir(parents=True)
        try:
            make_workspace(self.task, self.workspace, self.cache, [Path(folder) for folder in self.defaults.hidden])
            baseline(self.workspace, self.scratch / "baseline.git")
        except WorkspaceFailed as error:
            return self.result("error", "workspace", f"The task's workspace could not be made: {error}.")
        if self.task.setup is not None:  # the batch author's command, before the agent: never sandboxed
            code = run_shell(shell(self.task.setup), self.workspace, self.scratch / "setup.log", CHECK_TIMEOUT_S)
            if code != 0:
                said = f"exited with {code}" if code is not None else f"ran out of time ({CHECK_TIMEOUT_S:g} s)"
                return self.result("error", "setup_failed", f"setup {said}: see setup.log; no model call was made.")
        holder: list[Session] = []
        try:
            session = self._session(holder)
        except SandboxRequired as error:
            return self.result("error", "sandbox_unavailable", str(error))
        except AgentcliError as error:
            self._take_diff()
            return self.result("error", "usage" if isinstance(error, UsageError) else type(error).__name__, str(error))
        with contextlib.closing(session):  # its sandbox, if any, runs the check too
            stopped = self._agent(session)
            if stopped is not None and stopped.status != "failed":
                self._take_diff()
                return stopped
            verdict = self._check(session.sandbox.workspace)
        self._take_diff()
        if stopped is not None:  # stopped early (turn limit, hooks…): only a passing check passes it
            if verdict is not None and verdict.status == "passed":
                return verdict
            return self.result("failed", stopped.error_class, stopped.error)  # with the check's exit code
        return verdict or self.result("passed")

    def _session(self, holder: list[Session]) -> Session:
        """The task's session, rooted at its workspace: checkpoints off (the workspace is thrown
        away), the batch's folder and the other tasks' workspaces hidden from its sandbox, its
        notices kept for the driver."""
        admission = BatchAdmission(self.link, self.defaults.batch_budget_usd, lambda: self._spent(holder))
        session = Session(
            self.defaults.options_for(self.task),
            self.workspace,
            self._on_event,
            admission=admission,
            transcripts=self.transcripts,
            retry_base_delay=self.defaults.retry_base_delay,
            record_checkpoints=False,
            hidden=[*(Path(folder) for folder in self.defaults.hidden), self.scratch.parent],
            shown=[self.cache],  # a repository cloned from a URL borrows the cached clone's objects
        )
        holder.append(session)
        self.sandboxed = session.sandbox.active
        return session

    def _on_event(self, event: AgentEvent) -> None:
        if isinstance(event, Notice) and event.text not in self.notices:
            self.notices.append(event.text)

    def _agent(self, session: Session) -> TaskResult | None:
        """Run the agent; None when it finished, else how it stopped (`failed`: stopped early,
        the check still decides)."""
        try:
            self.model = session.model_name
            stopped = self._converse(session)
        finally:
            self._account(session)
        return None if stopped is None else self.result(*stopped)

    def _converse(self, session: Session) -> tuple[Status, str, str] | None:
        """The task's prompt through the session; None when the agent finished, else how it stopped."""
        try:
            with _deadline(session, self.task.timeout):
                session.run(session.prepare(self.task.prompt))
            return None
        except Cancelled:
            return "timeout", "timeout", f"The agent ran out of time ({self.task.timeout:g} s)."
        except BatchBudgetSpent as error:
            return "budget", BATCH_BUDGET, str(error)
        except CostBudgetExceeded as error:
            return "budget", "task_budget", str(error)
        except StopRun as error:
            return "failed", type(error).__name__, str(error)
        except TransientModelError as error:
            return "error", "model_unavailable", str(error)
        except AgentcliError as error:
            return "error", "model_error" if isinstance(error, ModelAPIError) else type(error).__name__, str(error)

    def _spent(self, holder: list[Session]) -> float:
        if not holder:
            return 0.0
        return holder[0].cost_usd(holder[0].usage)

    def _account(self, session: Session) -> None:
        self.usage = session.usage
        self.cost = session.cost_usd(session.usage)
        for message in session.agent.messages:
            if message["role"] != "assistant":
                continue
            self.turns += 1
            content = message["content"]
            if isinstance(content, list):
                self.tool_calls += sum(1 for block in content if block.get("type") == "tool_use")

    def _check(self, sandbox: Workspace | None) -> TaskResult | None:
        """Run the check (in `sandbox`, the agent's, when it has one: the check runs what the
        agent wrote); its verdict, or None without one."""
        task = self.task
        log = self.scratch / "check.log"
        if task.tests is not None:  # in a bubblewrap of its own (/tests, /app), which the sandbox cannot nest
            from agentcli.batch.harbor import OUTSIDE_THE_SANDBOX, check_argv, reward

            if sandbox is not None:
                self._on_event(Notice(OUTSIDE_THE_SANDBOX))

            logs = self.scratch / "verifier"
            logs.mkdir()
            code = run_shell(
                check_argv(task.tests, self.workspace, logs), self.workspace, log, task.check_timeout, task.check_env
            )
            self.reward = reward(logs)
        elif task.check is not None and sandbox is not None:
            try:
                code = run_logged(sandbox, shell(task.check), log, task.check_timeout, task.check_env)
            except WorkspaceError as error:
                return self.result("error", "sandbox", f"The check could not run in the sandbox: {error}")
        elif task.check is not None:
            code = run_shell(shell(task.check), self.workspace, log, task.check_timeout, task.check_env)
        else:
            return None
        self.check_exit_code = code
        if code is None:
            return self.result("timeout", "check_timeout", f"The check ran out of time ({task.check_timeout:g} s).")
        passed = self.reward >= 1.0 if self.reward is not None else code == 0
        return self.result("passed" if passed else "failed")

    def _take_diff(self) -> None:
        with contextlib.suppress(WorkspaceFailed):
            self.diff = final_diff(self.workspace, self.scratch / "baseline.git")

    def files(self) -> dict[str, str]:
        """What goes to `DIR/tasks/ID/`: the diff, the setup and check output, the transcripts."""
        files: dict[str, str] = {}
        if self.diff is not None:
            files["diff.patch"] = self.diff
        for name in ("setup.log", "check.log"):
            with contextlib.suppress(OSError):
                files[name] = (self.scratch / name).read_text(encoding="utf-8", errors="replace")
        if self.transcripts.is_dir():
            for path in sorted(self.transcripts.rglob("*.jsonl")):
                with contextlib.suppress(OSError):
                    name = path.relative_to(self.transcripts).as_posix()
                    files[f"transcripts/{name}"] = path.read_text(encoding="utf-8", errors="replace")
        return files


@contextlib.contextmanager
def _deadline(session: Session, seconds: float | None) -> Iterator[None]:
    """Within: once `seconds` have passed, the agent is cancelled (as on Ctrl-C: a running
    command's process group is killed, the transcript stays valid) until the block ends."""
    if seconds is None:
        yield
        return
    ended = threading.Event()

    def watch() -> None:
        if ended.wait(seconds):
            return
        while not ended.is_set():  # set again: a turn starting clears it
            session.agent.ctx.cancel.set()
            ended.wait(0.05)

    watcher = threading.Thread(target=watch, name="agentcli-batch-deadline", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        ended.set()
        watcher.join()
