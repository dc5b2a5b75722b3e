"""The sandbox's supervisor: the first process inside the bubblewrap sandbox, which starts each
command as a fresh child, so a command costs a message and a spawn, not a new sandbox.

    python -I -S supervisor.py PACKAGE_ROOT CONTROL_FD CONFIG_JSON

It is PID 1 of the sandbox (no command can signal it) and holds, within the sandbox's own user
namespace, CAP_SYS_ADMIN and CAP_SETPCAP, which no command ever has. It answers agentcli on the
control socket:

- first `{"ready": true}` (or `{"error": …}` and exit), once the network bridge is listening;
- for each `{"zygote": true}`: a starter, passed back as the agentcli end of a socket pair.

A starter ("zygote") is made ahead of the command it will run, so none of this is on the
command's path: it is PID 1 of a new PID namespace, in a mount namespace of its own with a
fresh /proc (a command sees only its own processes). It waits for one request
`{"argv", "cwd", "env", "stderr", "pinned", "read_only"}` with the command's output pipes,
then binds the `pinned` folders onto themselves (so they cannot be moved), mounts the
`read_only` paths read-only, gives up every capability, installs the system-call filter
(`seccomp`), and executes the command (the sandbox has no controlling terminal: bubblewrap
started it in a session of its own). The command is
PID 1 of its namespace, so when it exits the kernel kills every process left there. Its
watcher (the starter's parent) answers `{"exit": waitstatus}` then, or kills it first when
`{"kill": true}` came or agentcli went away. Nothing a command started outlives that answer.

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
from typing import Any

REAP_EVERY_S = 1.0
RELAY_START_S = 10.0


def main(argv: list[str]) -> int:
    sys.path.insert(0, argv[1])
    from agentcli.workspace import channel, linux, seccomp

    control = socket.socket(fileno=int(argv[2]))
    config: dict[str, Any] = json.loads(argv[3])
    try:
        linux.undumpable()
        filter_program = seccomp.program(allow_unix_sockets=bool(config.get("allow_unix_sockets")))
        if config.get("relay"):
            _start_relay(config["relay"]["port"], config["relay"]["proxy"])
    except (OSError, seccomp.Unsupported) as error:
        channel.send(control, {"error": str(error)})
        return 1
    channel.send(control, {"ready": True})
    while True:
        readable, _, _ = select.select([control], [], [], REAP_EVERY_S)
        _reap()
        if not readable:
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
        if message.get("zygote"):
            ours = _make_zygote(control, filter_program)
            try:
                channel.send(control, {"zygote": True}, [ours.fileno()])
            finally:
                ours.close()


def _reap() -> None:
    """Collect every exited child and orphan (as PID 1 of the sandbox, they are all ours)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _start_relay(port: int, proxy_path: str) -> None:
    """The bridge from the sandbox's loopback `port` to the proxy's socket at `proxy_path`:
    socat (`TCP-LISTEN,fork` to `UNIX-CONNECT`, as Claude Code bridges its sandbox), or, where
    socat is not installed, the same in Python (`relay`). Returns once it listens."""
    import shutil

    from agentcli.workspace import linux, relay

    socat = shutil.which("socat")
    if socat is None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
        if os.fork() == 0:
            try:
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


def _make_zygote(control: socket.socket, filter_program: bytes) -> socket.socket:
    """A starter waiting in namespaces of its own, and its watcher (see the module's docstring);
    returns agentcli's end of their socket."""
    from agentcli.workspace import linux

    ours, its = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.fork() == 0:  # the watcher
        code = 1
        try:
            ours.close()
            control.close()
            linux.unshare(linux.CLONE_NEWPID | linux.CLONE_NEWNS)
            linux.mount(None, "/", None, linux.MS_REC | linux.MS_SLAVE)
            taken, took = os.pipe()  # closed by the starter once it holds the request (at its exec, or its end)
            os.set_inheritable(took, False)
            starter = os.fork()
            if starter == 0:  # PID 1 of the new namespace
                os.close(taken)
                _start(its, took, filter_program)
            os.close(took)
            code = _watch(its, taken, starter)
        finally:
            os._exit(code)
    its.close()
    return ours


def _start(sock: socket.socket, took: int, filter_program: bytes) -> None:
    """The starter: wait for the request, then become the command (exec). Never returns."""
    from agentcli.workspace import channel

    try:
        _mount_proc()
        keep = {sock.fileno(), took}
        for low, high in _gaps(keep):
            os.closerange(low, high)
        received = channel.receive(sock)
        if received is None:
            os._exit(0)
        request, fds = received
        _become(request, fds, filter_program)
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


def _become(request: dict[str, Any], fds: list[int], filter_program: bytes) -> None:
    """Protect the project, give up every capability, filter system calls, and exec the command."""
    from agentcli.workspace import linux, seccomp

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
    linux.drop_capabilities()
    linux.undumpable()
    seccomp.install(filter_program)
    env: dict[str, str] = request["env"]
    os.chdir(request["cwd"])
    program = _find(request["argv"][0], env.get("PATH", os.defpath))
    os.setsid()
    for number in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them, and an exec keeps that
        signal.signal(number, signal.SIG_DFL)
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


def _watch(sock: socket.socket, taken: int, starter: int) -> int:
    """The watcher: once the starter holds the request, wait for the command (PID 1 of its
    namespace: when it ends, the kernel ends everything else there) or for agentcli to ask for
    its end (or go away); then answer `{"exit": waitstatus}`."""
    from agentcli.workspace import channel

    os.read(taken, 1)
    os.close(taken)
    pidfd = os.pidfd_open(starter)
    while True:
        readable, _, _ = select.select([sock.fileno(), pidfd], [], [])
        if pidfd in readable:
            break
        try:
            received = channel.receive(sock)
        except (OSError, ValueError, channel.ChannelClosed):
            received = None
        if received is None or received[0].get("kill"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(starter, signal.SIGKILL)
            if received is None:
                break
    _, status = os.waitpid(starter, 0)
    os.close(pidfd)
    with contextlib.suppress(OSError):
        channel.send(sock, {"exit": status})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
