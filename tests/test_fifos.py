"""A FIFO (or any non-regular file) where agentcli reads a file on its own is skipped with a notice, never waited on.

Each case runs with a ceiling (a thread, or the CLI as a subprocess with a timeout), so a
regression fails instead of hanging the suite. A reader left blocked is released by
opening the FIFO for writing.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from agentcli.context.instructions import load_instructions, render_instructions
from agentcli.contracts import ToolContext, ToolResult
from agentcli.regular_file import NotRegularFile, read_regular_file
from agentcli.settings import load_settings
from agentcli.skills.loader import load_skills
from agentcli.tools.glob import GlobTool
from agentcli.tools.grep import RIPGREP_BLOCKED, GrepTool
from agentcli.workspace.local import LocalWorkspace
from tests.conftest import RunCli
from tests.fake_anthropic import FakeAnthropic, reply, text
from tests.tools.helpers import needs_rg

CEILING = 30.0
T = TypeVar("T")


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def finishes(work: Callable[[], T], *fifos: Path) -> T:
    """`work()`'s value (or exception), which must come within CEILING seconds (blocked readers are then released)."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(work())
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(CEILING)
    if thread.is_alive():
        for path in fifos:  # a writer lets a blocked open return, so the thread can end
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"still waiting after {CEILING:g} s: a FIFO was opened blocking")
    if failure:
        raise failure[0]
    return outcome[0]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git" / "info").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("needle = 1\n")
    return root


def test_the_shared_reader_refuses_a_fifo_at_once(tmp_path: Path) -> None:
    pipe = fifo(tmp_path / "pipe")
    with pytest.raises(NotRegularFile) as raised:
        finishes(lambda: read_regular_file(pipe, 100), pipe)
    assert raised.value.strerror == "it is a FIFO (named pipe), not a regular file"


@pytest.mark.parametrize("ignore_file", [".gitignore", "src/.gitignore", ".git/info/exclude"])
def test_glob_skips_a_fifo_ignore_file_and_says_so(repo: Path, ignore_file: str) -> None:
    pipe = fifo(repo / ignore_file)
    result: ToolResult = finishes(
        lambda: GlobTool().run({"pattern": "**/*.py"}, ToolContext(LocalWorkspace(repo))), pipe
    )
    assert not result.is_error
    assert result.content.startswith("src/app.py")
    notice = (
        f"Skipped {ignore_file}: it is a FIFO (named pipe), not a regular file, so its ignore rules were not applied."
    )
    assert f"[{notice}]" in result.content  # the model is told
    assert result.summary == f"Found 1 file\n{notice}"  # and so is the user (the summary is what the terminal shows)


@pytest.mark.parametrize(
    "use_ripgrep", [pytest.param(None, marks=needs_rg, id="ripgrep"), pytest.param(False, id="python")]
)
@pytest.mark.parametrize("ignore_file", [".gitignore", "src/.gitignore", ".git/info/exclude"])
def test_grep_skips_a_fifo_ignore_file_and_says_so(repo: Path, ignore_file: str, use_ripgrep: bool | None) -> None:
    pipe = fifo(repo / ignore_file)
    grep = GrepTool(use_ripgrep=use_ripgrep)
    result: ToolResult = finishes(
        lambda: grep.run({"pattern": "needle", "output_mode": "content"}, ToolContext(LocalWorkspace(repo))), pipe
    )
    assert not result.is_error
    assert result.content.startswith("src/app.py:1:needle = 1")
    notice = (
        f"Skipped {ignore_file}: it is a FIFO (named pipe), not a regular file, so its ignore rules were not applied."
    )
    assert notice in (result.summary or "") and f"[{notice}]" in result.content
    assert (RIPGREP_BLOCKED in result.content) == (use_ripgrep is None)


def test_an_instruction_import_that_is_a_fifo_is_noted_not_waited_on(repo: Path, tmp_path: Path) -> None:
    (repo / "CLAUDE.md").write_text("Rules: @notes.md\n")
    pipe = fifo(repo / "notes.md")
    text = finishes(lambda: render_instructions(load_instructions(repo, tmp_path / "home")), pipe)
    assert "Rules: @notes.md" in text
    assert f"Contents of {pipe} (imported by {repo / 'CLAUDE.md'}):\n\n(could not be read: it is a FIFO" in text


def test_instruction_files_that_are_fifos_are_skipped_and_reported(repo: Path, tmp_path: Path) -> None:
    pipes = [fifo(repo / name) for name in ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md")]
    (tmp_path / "home").mkdir()
    files = finishes(lambda: load_instructions(repo, tmp_path / "home"), *pipes)
    assert [f.path for f in files] == pipes
    assert all(f.unreadable == "it is a FIFO (named pipe), not a regular file" for f in files)


def test_the_user_is_told_about_an_instruction_file_that_is_a_fifo(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    fifo(project / "CLAUDE.md")
    fake_api.script(reply(text("ok")))
    done = run_cli("run", "hi", timeout=CEILING)
    assert done.returncode == 0, done.stderr
    assert f"Skipped the instruction file {project / 'CLAUDE.md'}: it is a FIFO (named pipe)" in done.stderr
    assert done.stderr.count("Skipped the instruction file") == 1


def test_a_skill_file_that_is_a_fifo_is_listed_as_unusable(repo: Path, tmp_path: Path) -> None:
    pipe = fifo(repo / ".commands" / "deploy.md")
    (repo / ".commands" / "review.md").write_text("Review the diff")
    catalog = finishes(lambda: load_skills(repo, tmp_path / "home"), pipe)
    assert list(catalog.skills) == ["review"]
    assert (
        str(catalog.errors["deploy"])
        == f"Cannot read skill file {pipe}: it is a FIFO (named pipe), not a regular file."
    )


def test_a_settings_file_that_is_a_fifo_is_skipped_with_a_notice(repo: Path) -> None:
    pipe = fifo(repo / ".agentcli" / "settings.json")
    (repo / ".agentcli" / "settings.local.json").write_text('{"model": "local-model"}')
    settings = finishes(lambda: load_settings(repo), pipe)
    assert settings.get("model") == "local-model"
    assert settings.notices == [f"Skipped settings file {pipe}: it is a FIFO (named pipe), not a regular file."]


def test_the_cli_runs_past_fifo_settings_and_shows_the_notice(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    pipe = fifo(project / ".agentcli" / "settings.json")
    fake_api.script(reply(text("hello")))
    done = run_cli("run", "hi", timeout=CEILING)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello\n"
    assert f"! Skipped settings file {pipe}: it is a FIFO (named pipe), not a regular file." in done.stderr


def test_running_a_skill_that_is_a_fifo_says_why_and_sends_nothing(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    pipe = fifo(project / ".commands" / "deploy.md")
    done = run_cli("run", "/deploy", timeout=CEILING)
    assert done.returncode == 2
    assert f"Cannot read skill file {pipe}: it is a FIFO (named pipe), not a regular file." in done.stderr
    assert fake_api.requests == []


def test_a_skill_attaching_a_fifo_says_why_and_sends_nothing(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / ".commands").mkdir()
    (project / ".commands" / "look.md").write_text("Look at @pipe.txt")
    fifo(project / "pipe.txt")
    done = run_cli("run", "/look", timeout=CEILING)
    assert done.returncode == 2
    assert "/look: cannot read @pipe.txt: it is a FIFO (named pipe), not a regular file." in done.stderr
    assert fake_api.requests == []


def test_an_import_that_is_a_fifo_is_noted_in_what_the_model_is_sent(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "CLAUDE.md").write_text("Project rules. @notes.md\n")
    fifo(project / "notes.md")
    fake_api.script(reply(text("ok")))
    done = run_cli("run", "hi", timeout=CEILING)
    assert done.returncode == 0, done.stderr
    instructions = fake_api.requests[0].body["messages"][0]["content"][0]["text"]
    assert "Project rules." in instructions
    assert "(could not be read: it is a FIFO (named pipe), not a regular file)" in instructions
