"""What the sandbox tests share: whether bubblewrap can run here, and folders outside the project.

The tests run the real bubblewrap. Where it cannot run (not installed, user namespaces off),
they skip with the reason, except on CI (`CI=true`), which installs it: there they fail.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from agentcli.workspace.contract import Command, Finished
from agentcli.workspace.sandbox_settings import SandboxSettings
from agentcli.workspace.sandboxed import SandboxedWorkspace, SandboxUnavailable
from tests.waiting import CEILING

NEVER = threading.Event()
PYTHON = os.path.realpath(sys.executable)
"""A Python a sandboxed command runs directly (`python3` on PATH may be a shim, slow to start)."""
_checked: list[str | None] = []


def sandbox_unavailable() -> str | None:
    """Why a sandbox cannot start on this machine (found once, by starting one), or None."""
    if not _checked:
        folder = Path(tempfile.mkdtemp(prefix="agentcli-probe-"))
        try:
            with SandboxedWorkspace(folder, SandboxSettings(enabled=True)):
                _checked.append(None)
        except SandboxUnavailable as error:
            _checked.append(str(error))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return _checked[0]


def require_sandbox() -> None:
    """Skip (fail on CI) when bubblewrap cannot run here."""
    why = sandbox_unavailable()
    if why is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"the sandbox must run on CI: {why}")
    pytest.skip(f"the sandbox cannot run here: {why}")


def run_in(workspace: SandboxedWorkspace, script: str, **command: object) -> Finished:
    """`bash -c script` as the agent's command, to its end."""
    return workspace.run(Command(["bash", "-c", script], **command), timeout=CEILING, cancel=NEVER)  # type: ignore[arg-type]
