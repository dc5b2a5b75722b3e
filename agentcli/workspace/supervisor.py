"""The sandbox's supervisor: the first process inside the bubblewrap sandbox, and the parent of
every command run in it, so a command costs a message and an exec, not a new sandbox.

    python -I -S supervisor.py PACKAGE_ROOT CONTROL_FD CONFIG_JSON

It is PID 1 of the sandbox (no command can signal it) and holds, within the sandbox's own user
namespace, CAP_SYS_ADMIN, CAP_SETPCAP and CAP_SYS_CHROOT (to go back to its own mount
namespace, `setns`), which no command ever has. It answers agentcli on the
control socket:

- first `{"ready": true}` (or `{"error": …}` and exit), once the network bridge is listening;
- for each `{"starter": true, "after": S}`: a starter, made S seconds later (or at once on a
  `{"hurry": true}`), passed back as agentcli's end of a socket pair, with its number
  (`{"starter": N}`) and, with `pidfd_exits`, a pidfd of it. agentcli asks for the next one as
  a command ends, with a short delay: woken at once, the supervisor would fork while agentcli
  is still finishing that command (on a busy machine, in its place);
- for `{"kill": N}`: it kills starter N's command (nothing, once that ended).

A starter is the supervisor's own child, made ahead of the command it will run, so this is not
on the command's path: PID 1 of a new PID namespace, in a mount namespace of its own with a
fresh /proc (a command sees only its own processes), its capability bounding set emptied, the
system-call filter (`seccomp`) installed. It waits for one request
`{"argv", "cwd", "env", "stderr", "pinned", "read_only"}` with the command's output pipes, then
binds the `pinned` paths onto themselves (so they can be neither moved nor replaced), mounts
the `read_only` paths read-only (which needs the capabilities it kept), gives up those, and
executes the command (the sandbox has no controlling terminal: bubblewrap started it in a
session of its own). The command is PID 1 of its namespace, so when it exits the kernel kills
every process left there before the command itself is gone. Nothing a command started outlives
its end. How agentcli learns of that end (`command_end`): where the kernel keeps a reaped
process's exit status for its pidfds (Linux 6.15 and later: config `pidfd_exits`), the supervisor
leaves its children to the kernel to reap and agentcli waits on the pidfd, so nothing in the
sandbox wakes up for it; elsewhere the supervisor, the command's parent, collects it and answers
`{"exit": waitstatus}` on the starter's socket. (A watcher process per command used to sit
between the two; the supervisor as the direct parent saves its fork and its wake-ups.) The
supervisor makes each starter's mount namespace and holds it until the command ended, so that
its teardown (unmounting every mount of the sandbox, waiting for the kernel's read-copy-update)
happens in the supervisor, after the end agentcli waits for, not in the command's exit.

The network bridge (socat, or `relay` where socat is missing) is a child of the supervisor,
outside every command's namespace.
When agentcli closes the control socket the supervisor exits, and with PID 1 the sandbox ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing, like every module not needed here, would weigh on each command's exec
    from typing import Any

RELAY_START_S = 10.0


def main(argv: list[str]) -> int:
    sys.path.insert(0, argv[1])
    from agentcli.workspace import channel, linux

    control = socket.socket(fileno=int(argv[2]))
    config: dict[str, Any] = json.loads(argv[3])
    try:
        linux.undumpable()
        filter_program = bytes.fromhex(config["filter"])
        own_pids = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        own_mounts = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        if config.get("relay"):
            _start_relay(config["relay"]["port"], config["relay"]["proxy"])
    except (OSError, ValueError, KeyError) as error:
        channel.send(control, {"error": str(error)})
        return 1
    pidfd_exits = config.get("pidfd_exits") is True
    watched = [control.fileno()]
    if pidfd_exits:
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps children at once
    else:
        watched.append(_woken_by_child_exits())
    channel.send(control, {"ready": True})
    starters: dict[int, tuple[int, socket.socket]] = {}
    """Starter process id → (its number, the supervisor's copy of its socket), to report its end."""
    held: dict[int, int] = {}
    """A starter's pidfd → its mount namespace, let go of once the command ended, when the next
    starter is made (not as the command ends, while agentcli finishes it)."""
    made = 0
    asked = 0
    due = 0.0
    """Starters asked for and not made yet, and when to make them."""
    while True:
        wait = max(0.0, due - time.monotonic()) if asked else None
        readable, _, _ = select.select(watched, [], [], wait)
        if len(watched) > 1 and watched[1] in readable:
            with contextlib.suppress(BlockingIOError):
                os.read(watched[1], 4096)
            _collect(starters)
        if asked and time.monotonic() >= due:
            _let_go(held)
        while asked and time.monotonic() >= due:
            asked -= 1
            made += 1
            ours, its, pid, mounts = _make_starter(own_pids, own_mounts, filter_program)
            try:
                held[os.pidfd_open(pid)] = mounts
            except OSError:  # it died getting ready
                os.close(mounts)
            handed = [ours.fileno()]
            if pidfd_exits:
                its.close()
                with contextlib.suppress(OSError):  # it died getting ready: agentcli sees no pidfd
                    handed.append(os.pidfd_open(pid))
            else:
                starters[pid] = (made, its)
            try:
                channel.send(control, {"starter": made}, handed)
            finally:
                ours.close()
                for fd in handed[1:]:
                    os.close(fd)
        if control.fileno() not in readable:
            continue
        try:
            received = channel.receive(control)
        except (OSError, ValueError, channel.ChannelClosed):
            received = None
        if received is None:
            return 0
        message, fds = received
        for fd in fds:
            os.close(fd)
        if message.get("starter"):
            later = time.monotonic() + float(message.get("after") or 0)
            due = min(due, later) if asked else later
            asked += 1
        elif message.get("hurry"):
            due = time.monotonic()
        elif "kill" in message:
            for pid, (number, _its) in starters.items():
                if number == message["kill"]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)


def _let_go(held: dict[int, int]) -> None:
    """Close the mount namespaces of the commands that ended (their teardown happens here)."""
    if not held:
        return
    ended, _, _ = select.select(list(held), [], [], 0)
    for pidfd in ended:
        os.close(held.pop(pidfd))
        os.close(pidfd)


def _woken_by_child_exits() -> int:
    """A descriptor that becomes readable when a child exits (SIGCHLD, through Python's wake-up fd)."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end)
    signal.signal(signal.SIGCHLD, lambda number, frame: None)
    return read_end


def _collect(starters: dict[int, tuple[int, socket.socket]]) -> None:
    """Reap every exited child (as PID 1 of the sandbox, orphans are ours too); answer each
    starter's socket with its command's wait status."""
    from agentcli.workspace import channel

    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in starters:
            _number, its = starters.pop(pid)
            with contextlib.suppress(OSError):  # agentcli gave up on it (a starter it never used)
                channel.send(its, {"exit": status})
            its.close()


def _start_relay(port: int, proxy_path: str) -> None:
    """The bridge from the sandbox's loopback `port` to the proxy's socket at `proxy_path`:
    socat (`TCP-LISTEN,fork` to `UNIX-CONNECT`, as Claude Code bridges its sandbox), or, where
    socat is not installed, the same in Python (`relay`). Returns once it listens."""
    from agentcli.workspace import linux

    socat = _which("socat")
    if socat is None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
        if os.fork() == 0:
            try:
                from agentcli.workspace import relay

                linux.drop_capabilities()
                relay.serve(listener, proxy_path)
            finally:
                os._exit(0)
        listener.close()
        return
    pid = os.fork()
    if pid == 0:
        try:
            linux.drop_capabilities()
            listen = f"TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork"
            os.execv(socat, ["socat", listen, f"UNIX-CONNECT:{proxy_path}"])
        finally:
            os._exit(127)
    _wait_listening(port, pid)


def _which(program: str) -> str | None:
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder, program)
        if folder and os.access(candidate, os.X_OK):
            return candidate
    return None


def _wait_listening(port: int, pid: int) -> None:
    """Wait until something listens on the sandbox's loopback `port` (raises OSError if `pid` ends first)."""
    wanted = f"0100007F:{port:04X}"
    for _ in range(int(RELAY_START_S / 0.005)):
        with open("/proc/net/tcp") as table:
            if any(line.split()[1] == wanted and line.split()[3] == "0A" for line in list(table)[1:]):
                return
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            raise OSError(f"socat, the sandbox's network bridge, exited with {os.waitstatus_to_exitcode(status)}")
        time.sleep(0.005)
    raise OSError(f"socat, the sandbox's network bridge, did not listen within {RELAY_START_S:g} s")


def _make_starter(
    own_pids: int, own_mounts: int, filter_program: bytes
) -> tuple[socket.socket, socket.socket, int, int]:
    """A starter waiting in namespaces of its own (see the module's docstring): agentcli's end of
    its socket, the supervisor's copy of the starter's end, its process id, and its mount
    namespace (which the supervisor holds)."""
    from agentcli.workspace import linux

    ours, its = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    linux.unshare(linux.CLONE_NEWNS | linux.CLONE_NEWPID)  # a PID namespace for the next child only
    pid = -1
    mounts = -1
    try:
        mounts = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        pid = os.fork()
        if pid == 0:
            _start(its, filter_program)
    finally:
        if pid != 0:  # back home: later children (the relay's) stay in the sandbox's namespaces
            linux.setns(own_pids, linux.CLONE_NEWPID)
            linux.setns(own_mounts, linux.CLONE_NEWNS)
            if pid < 0 and mounts >= 0:
                os.close(mounts)
    return ours, its, pid, mounts


def _start(sock: socket.socket, filter_program: bytes) -> None:
    """The starter: get ready, wait for the request, then become the command (exec). Never returns."""
    from agentcli.workspace import channel, linux

    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for low, high in _gaps({sock.fileno()}):
            os.closerange(low, high)
        linux.mount(None, "/", None, linux.MS_REC | linux.MS_SLAVE)
        _mount_proc()
        linux.drop_bounding_set()
        linux.undumpable()
        linux.install_filter(filter_program)
        os.setsid()
        for number in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them, and an exec keeps that
            signal.signal(number, signal.SIG_DFL)
        received = channel.receive(sock)
        if received is None:  # agentcli did not need this one
            os._exit(0)
        request, fds = received
        _become(request, fds)
    except BaseException as error:  # before the exec: say why in the command's output
        message = f"agentcli sandbox: the command could not be started: {error}\n".encode(errors="replace")
        with contextlib.suppress(OSError):
            os.write(2, message)
    os._exit(127)


def _mount_proc() -> None:
    """A /proc of the new PID namespace: the command sees its own processes only."""
    from agentcli.workspace import linux

    linux.mount("proc", "/proc", "proc", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC)


def _gaps(keep: set[int]) -> list[tuple[int, int]]:
    """Ranges of descriptors from 3 up that leave out `keep`."""
    ranges, low = [], 3
    for fd in sorted(keep):
        ranges.append((low, fd))
        low = fd + 1
    return [*ranges, (low, 1 << 16)]


def _become(request: dict[str, Any], fds: list[int]) -> None:
    """Protect the project's root, give up the last capabilities, and exec the command."""
    from agentcli.workspace import linux

    out = fds[0]
    err = fds[1] if len(fds) > 1 else (out if request.get("stderr") == "stdout" else None)
    os.dup2(out, 1)
    if err is not None:
        os.dup2(err, 2)
    else:
        null = os.open("/dev/null", os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)
    stdin = os.open("/dev/null", os.O_RDONLY)
    os.dup2(stdin, 0)
    os.close(stdin)
    for fd in fds:
        os.close(fd)
    for path in request["pinned"]:
        linux.bind(path, path, read_only=False)
    for path in request["read_only"]:
        linux.bind(path, path, read_only=True)
    linux.drop_capabilities(bounding_set=False)
    env: dict[str, str] = request["env"]
    os.chdir(request["cwd"])
    program = _find(request["argv"][0], env.get("PATH", os.defpath))
    os.execve(program, request["argv"], env)


def _find(program: str, path: str) -> str:
    """`program` as the shell finds it: a path as it is, else the first executable file of that name on `path`."""
    if "/" in program:
        return program
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder or ".", program)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    raise FileNotFoundError(2, f"No such file or directory: {program!r} (not found on PATH)")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
