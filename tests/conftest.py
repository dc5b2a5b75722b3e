"""Shared fixtures: a fake Anthropic server, a temporary project, and the real CLI as a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fake_anthropic import FakeAnthropic
from tests.terminal import Terminal

AGENTCLI = shutil.which("agentcli", path=str(Path(sys.executable).parent)) or "agentcli"
TEST_KEY = "test-key"

RunCli = Callable[..., subprocess.CompletedProcess[str]]
StartRepl = Callable[..., Terminal]


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=TEST_KEY) as api:
        yield api


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    (path / ".agentcli").mkdir(parents=True)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty git repository to run in."""
    path = tmp_path / "project"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    return path


def cli_env(home: Path, api_url: str | None) -> dict[str, str]:
    """A clean environment: temp HOME, no real credentials, the fake server as the API."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "AGENTCLI_", "CLAUDE")) and k not in ("COLUMNS", "LINES")
    }
    env.update(
        HOME=str(home),
        AGENTCLI_HOME=str(home / ".agentcli"),
        ANTHROPIC_API_KEY=TEST_KEY,
        NO_COLOR="1",
        TERM="dumb",
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.com",
    )
    if api_url:
        env["ANTHROPIC_BASE_URL"] = api_url
    return env


@pytest.fixture
def run_cli(fake_api: FakeAnthropic, home: Path, project: Path) -> RunCli:
    """Run the installed `agentcli` against the fake server; returns the CompletedProcess."""

    def run(
        *args: str,
        input: str | None = "",
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        full_env = cli_env(home, fake_api.url)
        full_env.update(env or {})
        return subprocess.run(
            [AGENTCLI, *args],
            input=input,
            cwd=cwd or project,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run


@pytest.fixture
def start_repl(fake_api: FakeAnthropic, home: Path, project: Path) -> Iterator[StartRepl]:
    """Start the REPL in a pseudo-terminal (colour on) and wait until its prompt is up."""
    started: list[Terminal] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Terminal:
        extra = env or {}
        env = cli_env(home, fake_api.url)
        env.pop("NO_COLOR")
        env["TERM"] = "xterm-256color"
        env.update(extra)
        terminal = Terminal([AGENTCLI, *args], env=env, cwd=project, cols=160)
        started.append(terminal)
        terminal.wait_for("(shift-tab)")  # the prompt and its toolbar are up
        return terminal

    yield start
    for terminal in started:
        terminal.close()
