"""The stub every stdio MCP server is started through: `python -I -S launch.py PARENT_PID COMMAND ARGS...`.

It asks Linux to kill it when the thread that started it ends (`PR_SET_PDEATHSIG`), which
survives the `exec` of the server, then becomes the server. So a server dies with agentcli even
when agentcli cannot stop it (SIGKILL, a crash); on a clean exit agentcli stops it first. If
agentcli is already gone when the stub runs, it exits at once. Elsewhere it only execs.

Run as a script with `-I -S` (no site, no agentcli import): it costs a bare interpreter start.
"""

import os
import signal
import sys

PR_SET_PDEATHSIG = 1
NOT_FOUND = 127


def main(argv: list[str]) -> int:
    parent, command = int(argv[1]), argv[2:]
    if sys.platform == "linux":
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # agentcli died before the request took effect
            return 1
    try:
        os.execvp(command[0], command)
    except OSError as error:
        sys.stderr.write(f"cannot start {command[0]}: {error.strerror}\n")
        return NOT_FOUND


if __name__ == "__main__":
    sys.exit(main(sys.argv))
