"""Shared fixtures: a temporary project and home, and the two ways to drive agentcli.

- In-process (most tests): `run_agent` runs `agentcli run`'s code (`run_once`) in this
  process with `model`, a `ScriptedModel` that checks each request as the fake server does.
- The command line in-process: `run_main` runs `agentcli ARGS`'s own code here against
  `fake_api`, the fake Anthropic server on 127.0.0.1.
- End to end: `run_cli` runs the installed CLI as a subprocess and `start_repl` starts the
  REPL in a pty, both against `fake_api`; for what only a process or the screen shows.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentcli import settings_env
from agentcli.cli import commands, exit_code
from agentcli.contracts import Model
from agentcli.providers.anthropic import AnthropicModel
from agentcli.providers.scripted import ScriptedModel
from agentcli.runner import RunOptions, run_once
from tests import warm_start
from tests.fake_anthropic import FakeAnthropic, validation_error
from tests.terminal import Terminal

AGENTCLI = shutil.which("agentcli", path=str(Path(sys.executable).parent)) or "agentcli"
TEST_KEY = "test-key"

RunCli = Callable[..., subprocess.CompletedProcess[str]]
StartRepl = Callable[..., Terminal]


def pytest_configure(config: pytest.Config) -> None:
    # A shell starts a background job (`scripts/test &`) with SIGINT ignored, and every child
    # inherits that: Ctrl-C and Esc would then interrupt nothing in the tests that press them.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def no_claude_code_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code's user folder (`~/.claude`, read beside $AGENTCLI_HOME) is an empty one of the
    test's: a developer's own ~/.claude/settings.json never changes what a test sees. Tests with
    a temporary HOME (`in_process_env`, subprocesses) use HOME/.claude instead."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-code-home"))


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=TEST_KEY) as api:
        yield api


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    (path / ".agentcli").mkdir(parents=True)
    return path


@pytest.fixture(scope="session")
def empty_git_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `.git` of a new repository (branch main, no sample hooks), made once per worker."""
    path = tmp_path_factory.mktemp("git-template")
    subprocess.run(["git", "init", "-q", "-b", "main", "--template=", str(path)], check=True)
    return path / ".git"


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the project and outside /tmp (which is private in the sandbox), so a
    write there by a sandboxed command would reach the machine's own disk."""
    path = Path(tempfile.mkdtemp(prefix="agentcli-outside-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def project(tmp_path: Path, empty_git_dir: Path) -> Path:
    """An empty git repository to run in: a copy of `empty_git_dir`, which is what `git init`
    makes there, without starting git for every test."""
    path = tmp_path / "project"
    path.mkdir()
    shutil.copytree(empty_git_dir, path / ".git")
    return path


def _foreign(name: str) -> bool:
    """Variables of the caller's own setup that must not reach agentcli under test."""
    return name.startswith(("ANTHROPIC_", "AGENTCLI_", "CLAUDE", "OPENAI_", "GEMINI_", "OLLAMA_")) or name in (
        "COLUMNS",
        "LINES",
        "GOOGLE_API_KEY",
        "ENABLE_TOOL_SEARCH",
    )


def isolated_env(home: Path) -> dict[str, str]:
    """What the tests set: temp HOME and AGENTCLI_HOME, no colour, a fixed git identity."""
    return dict(
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


def cli_env(home: Path, api_url: str | None) -> dict[str, str]:
    """A clean environment for a subprocess: isolated_env, no real credentials, the fake server as the API."""
    env = {k: v for k, v in os.environ.items() if not _foreign(k)}
    env.update(isolated_env(home))
    if api_url:
        env["ANTHROPIC_BASE_URL"] = api_url
    return env


@dataclass(frozen=True)
class Ran:
    """How an in-process run ended: the fields of the CompletedProcess `run_cli` returns."""

    returncode: int
    stdout: str
    stderr: str


RunAgent = Callable[..., Ran]
RunMain = Callable[..., Ran]


@pytest.fixture
def model() -> ScriptedModel:
    """The in-process model double; every request is checked as the fake server checks it."""
    return ScriptedModel(check=validation_error)


@pytest.fixture
def in_process_env(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as `run_cli` sets up a subprocess: `isolated_env`, no credentials, in `project`."""
    for name in [name for name in os.environ if _foreign(name)]:
        monkeypatch.delenv(name)
    for name, value in isolated_env(home).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(project)


def _runner(model: Model, project: Path, capsys: pytest.CaptureFixture[str]) -> RunAgent:
    def run(prompt: str, *, cwd: Path | None = None, **options: Any) -> Ran:
        capsys.readouterr()  # what ran before is not this run's output
        code = run_once(RunOptions(prompt=prompt, **options), model, cwd or project, retry_base_delay=0)
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


@pytest.fixture
def run_agent(
    model: ScriptedModel, in_process_env: None, project: Path, capsys: pytest.CaptureFixture[str]
) -> RunAgent:
    """`agentcli run PROMPT` in-process with `model`, in `project`.

    Options are `RunOptions` fields: `run_agent("go", permission_mode="acceptEdits",
    allowed_tools=["Bash(ls:*)"], output_format="json")`. Retries of a broken stream do not wait.
    """
    return _runner(model, project, capsys)


@pytest.fixture
def run_wire(
    fake_api: FakeAnthropic, in_process_env: None, project: Path, capsys: pytest.CaptureFixture[str]
) -> Iterator[RunAgent]:
    """`run_agent` with the real Anthropic provider against `fake_api`: the wire, without a subprocess."""
    wire = AnthropicModel(api_key=TEST_KEY, base_url=fake_api.url)
    yield _runner(wire, project, capsys)
    wire.close()


@pytest.fixture
def run_main(
    fake_api: FakeAnthropic,
    in_process_env: None,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> RunMain:
    """`run_cli` in this process: `agentcli ARGS`'s own code, from reading the command line to its
    exit code, against `fake_api`, with `input` on a pipe as stdin. What only a process shows
    (its start, its exit, signals, a closed stdout) needs `run_cli`."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)

    def run(*args: str, input: str = "", cwd: Path | None = None, env: dict[str, str] | None = None) -> Ran:
        environment = dict(os.environ)  # the run sets the `env` of its settings here, as a process would in its own
        with monkeypatch.context() as scoped:
            scoped.setattr(settings_env, "_applied", frozenset())  # and records their names, for this run only
            for name, value in (env or {}).items():
                scoped.setenv(name, value)
            time.tzset()  # a process reads TZ as it starts
            scoped.chdir(cwd or project)
            scoped.setattr(sys, "argv", ["agentcli", *args])
            read, write = os.pipe()
            os.write(write, input.encode())  # a pipe holds 64 KB: plenty for a prompt
            os.close(write)
            with open(read) as stdin:
                scoped.setattr(sys, "stdin", stdin)
                commands._stdin.cache_clear()  # read once per process: this is a new one
                capsys.readouterr()  # what ran before is not this run's output
                code = exit_code()
        os.environ.clear()
        os.environ.update(environment)
        time.tzset()
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


@pytest.fixture
def run_cli(fake_api: FakeAnthropic, home: Path, project: Path) -> RunCli:
    """Run `agentcli` against the fake server; returns the CompletedProcess. It starts warm
    (`tests.warm_start`: forked with agentcli imported) unless `warm=False`, for a test of the
    start itself."""

    def run(
        *args: str,
        input: str | None = "",
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 60,
        warm: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        full_env = cli_env(home, fake_api.url)
        full_env.update(env or {})
        if warm and warm_start.can_start([AGENTCLI], full_env):
            return warm_start.run([AGENTCLI, *args], input=input, cwd=cwd or project, env=full_env, timeout=timeout)
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
