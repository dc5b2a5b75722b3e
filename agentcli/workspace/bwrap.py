"""Starting bubblewrap around the sandbox's supervisor, and saying why it cannot start.

`argv` is the one bwrap command of a session: new user, PID, network, IPC and UTS namespaces
(the system-call filter forbids further user namespaces to commands), the machine read-only
(`/dev` and `/proc` fresh, `/run` empty but for the proxy's socket), the layout's writable,
hidden, pinned and read-only paths (`sandbox_layout`), a private `/tmp`, and the supervisor as
PID 1 with the only capabilities any process inside ever holds (which it keeps from the
commands, `supervisor`).

`unavailable()` checks what can be checked without starting anything (Linux, bwrap installed,
an architecture the system-call filter knows); `diagnose` turns what bwrap printed when it
failed into one line saying why and how to fix it.
"""

from __future__ import annotations

import platform
import shutil
from pathlib import Path

from agentcli.workspace import seccomp
from agentcli.workspace.sandbox_layout import Layout

RUN_INSIDE = Path("/run/agentcli")
"""Where the sandbox sees agentcli's run folder (the proxy's socket)."""
INSTALL_HINT = "install bubblewrap (apt install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap)"


def unavailable() -> str | None:
    """Why the sandbox cannot run on this machine, found without starting it; None when it may."""
    if platform.system() != "Linux":
        return f"the sandbox runs on Linux only (with bubblewrap), not on {platform.system()}"
    if shutil.which("bwrap") is None:
        return f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}"
    try:
        seccomp.program()
    except seccomp.Unsupported as error:
        return str(error)
    return None


def argv(layout: Layout, run_dir: Path, tmp_dir: Path, command: list[str]) -> list[str]:
    """The bwrap command line that runs `command` (the supervisor) in the sandbox."""
    args = [
        shutil.which("bwrap") or "bwrap",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--cap-drop",
        "ALL",
        "--cap-add",
        "CAP_SYS_ADMIN",
        "--cap-add",
        "CAP_SETPCAP",
        "--cap-add",
        "CAP_SYS_CHROOT",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/run",
        "--ro-bind",
        str(run_dir),
        str(RUN_INSIDE),
        "--bind",
        str(tmp_dir),
        "/tmp",
    ]
    for path in layout.writable:
        args += ["--bind", str(path), str(path)]
    for path in layout.hidden:
        if path.is_dir():
            args += ["--tmpfs", str(path)]
            for shown in (*layout.shown, *layout.sockets):
                if path in shown.parents:
                    args += ["--ro-bind", str(shown), str(shown)]
            for writable in layout.writable:  # the project inside a hidden folder: only it shows there
                if path in writable.parents:
                    args += ["--bind", str(writable), str(writable)]
            args += ["--remount-ro", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    for path in layout.shown:  # in the machine's /tmp (those in hidden folders are bound above)
        if not any(hidden in path.parents for hidden in layout.hidden):
            args += ["--ro-bind", str(path), str(path)]
    for path in layout.pinned:
        args += ["--bind", str(path), str(path)]
    for path in layout.read_only:
        args += ["--ro-bind", str(path), str(path)]
    for path in layout.sockets:  # after /run and /tmp are replaced; read-only still lets a command connect
        if not any(hidden in path.parents for hidden in layout.hidden):
            args += ["--ro-bind", str(path), str(path)]
    return [*args, "--chdir", str(layout.project), "--", *command]


def diagnose(printed: str, *, root: bool, container: bool) -> str:
    """One line: why bwrap could not start the sandbox (from what it `printed`), and what to do."""
    text = printed.strip()
    first = text.splitlines()[-1] if text else "it exited without saying why"
    lowered = text.lower()
    namespaces = "namespace" in lowered or "uid map" in lowered or "setting up uid" in lowered
    if namespaces and container:
        return (
            f"bubblewrap cannot make namespaces inside this container ({first}): run the container with "
            "user namespaces allowed (e.g. docker run --security-opt seccomp=unconfined --security-opt "
            "apparmor=unconfined), or treat the container itself as the sandbox and turn sandbox.enabled off"
        )
    if namespaces and not root:
        reason = _userns_setting()
        return f"bubblewrap cannot make namespaces ({first}): {reason}"
    return f"bubblewrap failed: {first}"


def _userns_setting() -> str:
    """What keeps unprivileged user namespaces off here, and the command that turns them on."""
    checks = (
        ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1", (
            "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10 and later): give bwrap an AppArmor "
            "profile that allows them (see docs/sandbox.md), or run: sudo sysctl -w "
            "kernel.apparmor_restrict_unprivileged_userns=0"
        )),
        ("/proc/sys/kernel/unprivileged_userns_clone", "0", (
            "unprivileged user namespaces are off: sudo sysctl -w kernel.unprivileged_userns_clone=1"
        )),
        ("/proc/sys/user/max_user_namespaces", "0", (
            "user namespaces are off: sudo sysctl -w user.max_user_namespaces=15000"
        )),
    )  # fmt: skip
    for path, value, advice in checks:
        try:
            if Path(path).read_text().strip() == value:
                return advice
        except OSError:
            continue
    return "user namespaces are not allowed for your user on this system (see docs/sandbox.md)"
