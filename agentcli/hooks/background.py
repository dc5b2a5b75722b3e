"""Hooks with `async: true` (or `asyncRewake: true`): started without waiting, heard from later.

As in Claude Code, such a hook cannot block or decide anything (the action it would have
controlled has gone ahead); once it has exited, the `additionalContext` and `systemMessage` of
its JSON output go to the model with the agent's next tool results or the user's next message
(`take`), not to the user. An `asyncRewake` hook that exits with 2 tells the model its stderr
(or stdout) the same way. A hook that fails is reported to the user in one line. `close` kills
every background hook still running, with its process group: nothing outlives the session.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from agentcli.contracts import JSON
from agentcli.hooks.config import HookCommand
from agentcli.hooks.decisions import describe_failure, json_object, text_of
from agentcli.hooks.runner import HookRun, run_hooks

JOIN_WAIT_S = 2.0


class BackgroundHooks:
    """The background hooks of one agent (the session's, or a sub-agent's while it runs)."""

    def __init__(self, project: Path, passthrough: Collection[str], on_notice: Callable[[str], None]) -> None:
        self._project = project
        self._passthrough = passthrough
        self._on_notice = on_notice
        self._lock = threading.Lock()
        self._said: list[str] = []
        self._groups: set[int] = set()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def start(self, event: str, hooks: Sequence[HookCommand], payload: JSON) -> None:
        """Run `hooks` on their own thread; this returns at once."""
        with self._lock:
            if self._closed:
                return
            thread = threading.Thread(target=self._run, args=(event, hooks, payload), daemon=True, name="async-hook")
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def take(self) -> list[str]:
        """What the hooks that finished since the last call said to the model."""
        with self._lock:
            said, self._said = self._said, []
        return said

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the hooks running now to finish; True if they did."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)
        return not any(thread.is_alive() for thread in threads)

    def close(self) -> None:
        """Kill every background hook still running (its whole process group)."""
        with self._lock:
            self._closed = True
            groups, threads = set(self._groups), list(self._threads)
        for group in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
        for thread in threads:
            thread.join(JOIN_WAIT_S)

    def _run(self, event: str, hooks: Sequence[HookCommand], payload: JSON) -> None:
        started: list[int] = []

        def on_start(group: int) -> None:
            with self._lock:
                self._groups.add(group)
                started.append(group)
                closed = self._closed
            if closed:  # started while the session was closing: stop it too
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(group, signal.SIGKILL)

        try:
            runs = run_hooks(hooks, payload, self._project, self._passthrough, on_start)
        finally:
            with self._lock:
                self._groups.difference_update(started)
        for run in runs:
            self._heard(event, run)

    def _heard(self, event: str, run: HookRun) -> None:
        said: list[str] = []
        if run.exit_code == 0:
            output = json_object(run.stdout) or {}
            specific = output.get("hookSpecificOutput")
            for value in (
                specific.get("additionalContext") if isinstance(specific, dict) else None,
                output.get("systemMessage"),
            ):
                if text := text_of(value):
                    said.append(text)
        elif run.exit_code == 2 and run.hook.rewake:
            if text := (run.stderr.strip() or run.stdout.strip()):
                said.append(text)
        else:
            with self._lock:
                closed = self._closed
            if not closed and run.exit_code != 2:
                self._on_notice(describe_failure(event, run))
            return
        with self._lock:
            self._said.extend(f"An async {event} hook (`{_short(run.hook.command)}`) said:\n{text}" for text in said)


def _short(command: str) -> str:
    line = " ".join(command.split())
    return line if len(line) <= 60 else line[:59] + "…"
