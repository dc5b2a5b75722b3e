"""One running sandbox, seen from agentcli: the bubblewrap process with the supervisor inside it
(`supervisor`), the control socket to it, and each command run inside as a `SandboxProcess`.

`Sandbox.start` launches bwrap and waits for the supervisor's `ready`; when bwrap fails it
raises `SandboxUnavailable` with one line saying why (`bwrap.diagnose`). `Sandbox.spawn` takes
a starter the supervisor made ahead of time, sends it the command with its output pipes, and
hands back the process at once. Leaving `spawn`'s block kills the command if it still runs,
waits until nothing of it is left (`command_end`: a pidfd of it, or the supervisor's report),
and has the next starter made (while the model thinks rather than while a command runs).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

import agentcli
from agentcli.signals import interrupts_deferred
from agentcli.workspace import bwrap, channel, seccomp
from agentcli.workspace.command_end import CommandEnd, PidfdEnd, ReportedEnd, kernel_keeps_exit_status
from agentcli.workspace.contract import Command, WorkspaceError
from agentcli.workspace.sandbox_layout import Layout, RootProtection

READY_TIMEOUT_S = 20.0
"""For the supervisor's first answer (a machine under load may take seconds to start Python)."""
ANSWER_TIMEOUT_S = 20.0
"""For a starter, when the supervisor is asked for one."""
STARTER_DELAY_S = 0.02
"""How long after a command ends the supervisor makes the next command's starter: not while
agentcli is still finishing that command (it is made at once when a command needs it sooner)."""
END_TIMEOUT_S = 30.0
"""For the supervisor to report that nothing of a killed command is left."""
SUPERVISOR = Path(__file__).with_name("supervisor.py")
PACKAGE_ROOT = Path(agentcli.__file__).resolve().parent.parent
RUN_INSIDE_PROXY = str(bwrap.RUN_INSIDE / "proxy.sock")


class SandboxUnavailable(Exception):
    """The sandbox cannot start here; the message says why and how to fix it, in one line."""


class Sandbox:
    """A running bubblewrap sandbox (see the module's docstring). Thread-safe."""

    def __init__(self, proc: subprocess.Popen[bytes], control: socket.socket, *, pidfd_exits: bool) -> None:
        self._proc = proc
        self._control = control
        self._lock = threading.Lock()
        self._sending = threading.Lock()
        """Held while writing to the control socket (a kill may come while a starter is awaited)."""
        self._asked = False
        """A starter was asked for and not yet received."""
        self._pidfd_exits = pidfd_exits
        """The supervisor hands a pidfd with each starter, which tells the command's end (`command_end`)."""
        self._stopped: str | None = None

    @classmethod
    def start(cls, layout: Layout, run_dir: Path, tmp_dir: Path, *, relay_port: int, unix_sockets: bool) -> Sandbox:
        """Launch bwrap and the supervisor; raises SandboxUnavailable. `unix_sockets`: commands may
        open any Unix socket; else only stream sockets, and only when the layout binds some in."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            command_filter = seccomp.program(allow_unix_sockets=unix_sockets, allow_unix_streams=bool(layout.sockets))
        except seccomp.Unsupported as error:
            raise SandboxUnavailable(str(error)) from None
        pidfd_exits = kernel_keeps_exit_status()
        config = {
            "relay": {"port": relay_port, "proxy": RUN_INSIDE_PROXY},
            "filter": command_filter.hex(),
            "pidfd_exits": pidfd_exits,
        }
        command = [
            sys.executable,
            "-I",
            "-S",
            str(SUPERVISOR),
            str(PACKAGE_ROOT),
            str(theirs.fileno()),
            json.dumps(config),
        ]
        log_path = run_dir / "sandbox.log"
        with open(log_path, "wb") as log:
            try:
                proc = subprocess.Popen(
                    bwrap.argv(layout, run_dir, tmp_dir, command),
                    pass_fds=[theirs.fileno()],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
                    start_new_session=True,
                )
            except OSError as error:
                ours.close()
                raise SandboxUnavailable(f"bubblewrap could not be started: {error.strerror or error}") from None
            finally:
                theirs.close()
        sandbox = cls(proc, ours, pidfd_exits=pidfd_exits)
        why = sandbox._wait_ready()
        if why is not None:
            sandbox.close()
            printed = log_path.read_text(errors="replace")
            raise SandboxUnavailable(why or bwrap.diagnose(printed, root=os.geteuid() == 0, container=_in_container()))
        return sandbox

    def _wait_ready(self) -> str | None:
        """None once the supervisor is ready; its error, or "" when it ended without one."""
        try:
            answer = self._answer(READY_TIMEOUT_S)
        except (OSError, ValueError, channel.ChannelClosed):
            return ""
        if answer is None:
            return ""
        message, _fds = answer
        if message.get("ready"):
            self._ask_for_starter(after=0.0)
            return None
        return f"the sandbox's supervisor failed: {message.get('error')}"

    @property
    def stopped(self) -> str | None:
        """Why the sandbox no longer runs (it died, or was closed); None while it runs."""
        if self._stopped is None and self._proc.poll() is not None:
            self._stopped = f"the sandbox ended (bubblewrap exited with {self._proc.returncode})"
        return self._stopped

    @contextlib.contextmanager
    def spawn(
        self, command: Command, env: Mapping[str, str], cwd: Path, protection: RootProtection
    ) -> Iterator[SandboxProcess]:
        """Run `command` inside (see the module's docstring). Raises WorkspaceError when the sandbox is gone."""
        starter, number, pidfd = self._starter()
        end: CommandEnd = PidfdEnd(pidfd) if pidfd is not None else ReportedEnd(starter, lambda: self._kill(number))
        fds: list[int] = []
        ours: list[int] = []
        try:
            out, theirs_out = os.pipe()
            ours.append(out)
            fds.append(theirs_out)
            err = None
            if command.stderr == "pipe":
                err, theirs_err = os.pipe()
                ours.append(err)
                fds.append(theirs_err)
            request = {
                "argv": [str(arg) for arg in command.argv],
                "cwd": str(cwd),
                "env": dict(env),
                "stderr": command.stderr,
                "pinned": list(protection.pinned),
                "read_only": list(protection.read_only),
            }
            with interrupts_deferred():  # once the request is sent, only the process handle can end it
                channel.send(starter, request, fds)
                for fd in fds:
                    os.close(fd)
                fds.clear()
                proc = SandboxProcess(starter, out, err, command.argv, end=end)
        except BaseException:
            for fd in (*fds, *ours):
                os.close(fd)
            end.close()
            starter.close()
            raise
        try:
            yield proc
        finally:
            proc.close()
            self._ask_for_starter()  # made while the model thinks, not while a command runs

    def _starter(self) -> tuple[socket.socket, int, int | None]:
        """A starter, its number and (with `pidfd_exits`) its pidfd, made ahead of time unless
        commands came faster than they are made."""
        with self._lock:
            if self.stopped is not None:
                raise WorkspaceError(_stopped_message(self.stopped))
            try:
                self._send({"hurry": True} if self._asked else {"starter": True})
                self._asked = False
                answer = self._answer(ANSWER_TIMEOUT_S)
                if answer is None or not answer[1] or not isinstance(answer[0].get("starter"), int):
                    raise OSError("the supervisor did not hand over a starter")
                message, fds = answer
                for fd in fds[2:]:
                    os.close(fd)
                pidfd = fds[1] if len(fds) > 1 else None
                if self._pidfd_exits and pidfd is None:
                    os.close(fds[0])
                    raise OSError("a starter ended before it was used")
                return socket.socket(fileno=fds[0]), message["starter"], pidfd
            except (OSError, ValueError, channel.ChannelClosed) as error:
                self._stopped = f"the sandbox stopped answering ({error})"
                raise WorkspaceError(_stopped_message(self._stopped)) from None

    def _ask_for_starter(self, after: float = STARTER_DELAY_S) -> None:
        """Have the next command's starter made `after` seconds from now, unless one is on its way."""
        with self._lock:
            if self._asked or self._stopped is not None:
                return
            try:
                self._send({"starter": True, "after": after})
                self._asked = True
            except OSError as error:
                self._stopped = f"the sandbox stopped answering ({error})"

    def _kill(self, number: int) -> None:
        """Have the supervisor kill starter `number`'s command (nothing if it ended, or the sandbox did)."""
        with contextlib.suppress(OSError):
            self._send({"kill": number})

    def _send(self, message: channel.Message) -> None:
        with self._sending:
            channel.send(self._control, message)

    def _answer(self, timeout: float) -> tuple[channel.Message, list[int]] | None:
        self._control.settimeout(timeout)
        try:
            return channel.receive(self._control)
        except TimeoutError:
            raise OSError("no answer in time") from None

    def close(self) -> None:
        """End the sandbox: the supervisor exits when its control socket closes, and with it everything inside."""
        with self._lock, self._sending:
            self._stopped = self._stopped or "the sandbox was closed"
            self._control.close()
        try:
            self._proc.wait(timeout=END_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, 9)
            self._proc.wait()


class SandboxProcess:
    """A `contract.Process` for a command running in the sandbox, PID 1 of a namespace of its own:
    when it exits, everything it started ends. A program that cannot be started exits with 127,
    saying why on its standard error, as a shell reports it."""

    def __init__(
        self, starter: socket.socket, stdout: int, stderr: int | None, argv: Sequence[str], *, end: CommandEnd
    ) -> None:
        """`end`: tells when the command ended (with everything it started), and ends it early."""
        self._starter = starter
        self._end = end
        self._stdout = io.FileIO(stdout, "rb")
        self._stderr = io.FileIO(stderr, "rb") if stderr is not None else None
        self._argv = list(argv)
        self._status: int | None = None
        self._ended = False
        """Nothing of the command is left, and its status is known."""
        self._lock = threading.Lock()

    @property
    def pid(self) -> int:
        return 1

    @property
    def stdout(self) -> IO[bytes]:
        return self._stdout

    @property
    def stderr(self) -> IO[bytes] | None:
        return self._stderr

    def poll(self) -> int | None:
        self._collect(0)
        return self._status

    def wait(self, timeout: float | None = None) -> int:
        self._collect(timeout)
        if self._status is None:
            raise subprocess.TimeoutExpired(self._argv, timeout or 0)
        return self._status

    def kill(self) -> None:
        with self._lock:
            if not self._ended:
                self._end.kill()

    def close(self) -> None:
        """Kill it unless it ended, wait until nothing of it is left, close its pipes."""
        if self.poll() is None:
            self.kill()
        self._collect(END_TIMEOUT_S)
        self._stdout.close()
        if self._stderr is not None:
            self._stderr.close()
        self._end.close()
        self._starter.close()

    def _collect(self, timeout: float | None) -> None:
        """Take the command's end, waiting up to `timeout` seconds for it."""
        if self._ended or not select.select([self._end], [], [], timeout)[0]:
            return
        with self._lock:
            if self._ended:
                return
            status = self._end.status()
            self._ended = True
            self._status = os.waitstatus_to_exitcode(status) if status is not None else -9


def _stopped_message(why: str) -> str:
    return (
        f"The sandbox could not run this command: {why}. Nothing ran outside it; agentcli starts a "
        "new sandbox for the next command, so you may run it again."
    )


def _in_container() -> bool:
    return any(Path(marker).exists() for marker in ("/.dockerenv", "/run/.containerenv"))
