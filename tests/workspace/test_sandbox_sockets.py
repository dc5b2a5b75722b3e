"""`sandbox.network.allowUnixSockets`, with the real bubblewrap: a listed socket is bound into
the sandbox and reachable even inside a hidden place (as Docker Desktop's `~/.docker/run`
is), one beside it that is not listed stays out of reach, and a listed path that is not a
socket opens nothing."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentcli.workspace.sandbox_settings import SandboxSettings
from agentcli.workspace.sandboxed import SandboxedWorkspace
from tests.sandbox_support import PYTHON, require_sandbox, run_in
from tests.waiting import CEILING

CONNECT = """{python} - <<'EOF'
import socket
for path in {paths!r}:
    try:
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
            client.sendall(b"hello")
        print(path, "reached")
    except OSError as error:
        print(path, "failed:", error)
EOF"""


STOP = b"the test is over"


@contextmanager
def daemon(path: Path) -> Iterator[list[bytes]]:
    """A Unix socket server at `path` (as a daemon's would be), and what clients sent it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    received: list[bytes] = []
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(4)
    server.settimeout(CEILING)

    def serve() -> None:
        try:
            while True:
                client, _ = server.accept()
                with client:
                    message = client.recv(100)
                if message == STOP:
                    return
                received.append(message)
        except OSError:
            return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        with socket.socket(socket.AF_UNIX) as stop:  # accepted after every client before it
            stop.connect(str(path))
            stop.sendall(STOP)
        thread.join(CEILING)
        server.close()


def test_a_listed_socket_is_reachable_and_the_one_beside_it_is_not(project: Path, outside: Path) -> None:
    require_sandbox()
    home = outside / "home"
    allowed = home / ".docker" / "run" / "docker.sock"
    other = home / ".docker" / "run" / "other.sock"
    settings = SandboxSettings(enabled=True, unix_sockets=("~/.docker/run/docker.sock",))
    with daemon(allowed) as to_allowed, daemon(other) as to_other:
        with SandboxedWorkspace(project, settings, home=home) as workspace:
            assert workspace.layout is not None and workspace.layout.sockets == (allowed,)
            done = run_in(workspace, CONNECT.format(python=PYTHON, paths=[str(allowed), str(other)]))

        assert f"{allowed} reached" in done.output
        assert f"{other} failed" in done.output
    assert to_allowed == [b"hello"] and to_other == []


def test_a_listed_path_that_is_not_a_socket_opens_nothing(project: Path, outside: Path) -> None:
    require_sandbox()
    (project / "not-a-socket").write_text("")
    settings = SandboxSettings(enabled=True, unix_sockets=("not-a-socket",))
    with daemon(project / "daemon.sock") as received:
        with SandboxedWorkspace(project, settings, home=outside) as workspace:
            assert workspace.layout is not None and workspace.layout.sockets == ()
            assert workspace.layout.unresolved == ("not-a-socket",)
            done = run_in(workspace, CONNECT.format(python=PYTHON, paths=["daemon.sock"]))

        assert "daemon.sock failed" in done.output
    assert received == []
