"""The sandboxed workspace: the agent's commands run in one bubblewrap sandbox per session.

From `__enter__` to `close` it holds a sandbox (`sandbox_process.Sandbox`), the proxy its
network goes through (`proxy`), and a private folder (the sandbox's `/tmp`, the proxy's
socket). Each command the agent runs (origin `agent`: Bash, a skill's `!`) is a fresh process
inside it, in a PID namespace of its own that ends with it, under the layout of
`sandbox_layout` and the environment of `sandbox_env`. What runs outside it, as the local
workspace runs it:

- agentcli's own programs (origin `harness`: ripgrep, git for the session's facts), which only
  read what the permission gate judged;
- a command that says `outside_sandbox` (one of `sandbox.excludedCommands`, or one the model
  asked to run unsandboxed): the permission gate asked about it as about any command;
- reading and writing files for Read, Write and Edit, which the gate judges path by path.

A command that needs what the sandbox forbids fails inside it; its result carries a note saying
what the sandbox refused (the hosts, with the reason) or allows, so the model can ask the user
for the right thing. It is never retried outside. When the sandbox itself has died, a command
is refused (WorkspaceError) and the next one starts a new sandbox.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from agentcli.workspace.contract import (
    OUTPUT_LIMIT,
    Change,
    Command,
    Finished,
    Folder,
    OpenFile,
    Process,
    Verb,
    WorkspaceError,
)
from agentcli.workspace.local import LocalWorkspace
from agentcli.workspace.network import AsksAboutHost, NetworkPolicy
from agentcli.workspace.proxy import SandboxProxy
from agentcli.workspace.running import run_to_end
from agentcli.workspace.sandbox_env import RELAY_PORT, inside_environment
from agentcli.workspace.sandbox_layout import Layout, RootGuard, plan_layout
from agentcli.workspace.sandbox_process import Sandbox, SandboxUnavailable
from agentcli.workspace.sandbox_settings import SandboxSettings

__all__ = ["SandboxUnavailable", "SandboxedWorkspace"]

FILESYSTEM_SIGNS = ("Read-only file system", "Operation not permitted", "Permission denied")
NETWORK_SIGNS = (
    "Could not resolve host",
    "Name or service not known",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "getaddrinfo",
)


class SandboxedWorkspace:
    """Implements `contract.Workspace` with the agent's commands in a sandbox (see the module's docstring)."""

    def __init__(
        self,
        root: Path,
        settings: SandboxSettings,
        *,
        passthrough: Collection[str] = (),
        ask_host: AsksAboutHost | None = None,
        excluded: Callable[[str], bool] = lambda command: False,
        home: Path | None = None,
        homes: Sequence[Path] = (),
    ) -> None:
        """`excluded`: whether a shell command is one of `sandbox.excludedCommands`; `homes`: agentcli's
        and Claude Code's home folders, hidden with the other secret places of `home`."""
        self._local = LocalWorkspace(root, passthrough=passthrough)
        self._settings = settings
        self._passthrough = frozenset(passthrough)
        self._excluded = excluded
        self._home = home or Path.home()
        self._homes = tuple(homes)
        self.policy = NetworkPolicy(settings.allowed_domains, ask_host)
        self._lock = threading.Lock()
        self._sandbox: Sandbox | None = None
        self._run_dir: Path | None = None
        self._proxy: SandboxProxy | None = None
        self._layout: Layout | None = None
        self._guard: RootGuard | None = None

    @property
    def root(self) -> Path:
        return self._local.root

    @property
    def layout(self) -> Layout | None:
        """The sandbox's mounts, once it has started."""
        return self._layout

    def confines(self, shell_command: str) -> bool:
        return not self._excluded(shell_command)

    def run(
        self, command: Command, *, timeout: float, cancel: threading.Event, output_limit: int = OUTPUT_LIMIT
    ) -> Finished:
        if self._outside(command):
            return self._local.run(command, timeout=timeout, cancel=cancel, output_limit=output_limit)
        began = time.monotonic()
        with self.start(command) as proc:
            finished = run_to_end(proc, timeout, cancel, output_limit)
        return dataclasses.replace(finished, notes=self._notes(finished, began))

    @contextlib.contextmanager
    def start(self, command: Command) -> Iterator[Process]:
        if self._outside(command):
            with self._local.start(command) as proc:
                yield proc
            return
        sandbox = self._running()
        assert self._guard is not None
        env = inside_environment(command.env, self._passthrough, self._settings.allowed_domains)
        with (
            self._guard.for_command() as protection,
            sandbox.spawn(command, env, command.cwd or self.root, protection) as proc,
        ):
            yield proc

    def read_file(self, real: Path) -> contextlib.AbstractContextManager[OpenFile]:
        return self._local.read_file(real)

    def open_folder(self, real: Path, verb: Verb, *, create: bool = False) -> contextlib.AbstractContextManager[Folder]:
        return self._local.open_folder(real, verb, create=create)

    def before_change(self, change: Change) -> None:
        pass

    def __enter__(self) -> Self:
        """Start the sandbox. Raises SandboxUnavailable (one line: why, and how to fix it)."""
        with self._lock:
            self._start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _outside(self, command: Command) -> bool:
        return command.origin == "harness" or command.outside_sandbox

    def _running(self) -> Sandbox:
        """The sandbox, started again if it died (raises WorkspaceError when it cannot be)."""
        with self._lock:
            if self._sandbox is None or self._sandbox.stopped is not None:
                self._stop()
                try:
                    self._start()
                except SandboxUnavailable as error:
                    raise WorkspaceError(
                        f"The sandbox could not be started again ({error}); nothing ran outside it."
                    ) from None
            assert self._sandbox is not None
            return self._sandbox

    def _start(self) -> None:
        from agentcli.workspace import bwrap

        if why := bwrap.unavailable():
            raise SandboxUnavailable(why)
        try:
            run_dir = Path(tempfile.mkdtemp(prefix="agentcli-sandbox-"))
        except OSError as error:
            raise SandboxUnavailable(f"it could not make its folder: {error}") from None
        self._run_dir = run_dir
        try:
            (run_dir / "tmp").mkdir(mode=0o700)
            project = self.root.resolve()
            self._layout = plan_layout(project, self._settings, self._home, self._homes)
            self._guard = RootGuard(project, self._layout.writable)
            self._proxy = SandboxProxy(run_dir / "proxy.sock", self.policy)
            self._proxy.start()
            self._sandbox = Sandbox.start(
                self._layout,
                run_dir,
                run_dir / "tmp",
                relay_port=RELAY_PORT,
                unix_sockets=self._settings.allow_unix_sockets,
            )
        except OSError as error:  # e.g. the proxy's socket path too long for a Unix socket (a long TMPDIR)
            self._stop()
            raise SandboxUnavailable(f"it could not be set up: {error}") from None
        except BaseException:
            self._stop()
            raise

    def _stop(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None
        if self._run_dir is not None:
            shutil.rmtree(self._run_dir, ignore_errors=True)
            self._run_dir = None

    def _notes(self, finished: Finished, began: float) -> tuple[str, ...]:
        """What the sandbox refused or forbids that this command's failure may come from."""
        notes = []
        refused = {(r.host, r.port): r.reason for r in self.policy.refusals_since(began)}
        for (host, port), reason in refused.items():
            notes.append(f"The sandbox refused network access to {host}:{port}: {reason}.")
        if finished.exit_code == 0 and finished.outcome == "done":
            return tuple(notes)
        if any(sign in finished.output for sign in FILESYSTEM_SIGNS):
            notes.append(
                "This command ran in agentcli's sandbox, which lets commands write only the project (not its "
                "protected paths: .git/hooks, .git/config, agentcli's and Claude Code's configuration, skills, "
                ".mcp.json) and /tmp, shows secret places (~/.ssh, ~/.aws, ...) as empty, and refuses Unix "
                "sockets. If the task needs more, tell the user what and why (they can add a path to "
                "sandbox.filesystem.allowWrite or exclude the command); do not try to get around the sandbox."
            )
        if not refused and any(sign in finished.output for sign in NETWORK_SIGNS):
            notes.append(
                "This command ran in agentcli's sandbox, which has no network of its own: programs reach hosts "
                "only through the proxy in HTTP_PROXY/HTTPS_PROXY, and only hosts the user allows "
                "(sandbox.network.allowedDomains). If the task needs a host, tell the user which and why."
            )
        return tuple(notes)
