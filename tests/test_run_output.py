"""What `agentcli run` prints: progress lines, and stdout that cannot be written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import IO

import pytest

from tests.cli_process import start_cli
from tests.conftest import AGENTCLI, RunCli, cli_env
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.session_helpers import records, transcript_files


def test_progress_lines_name_files_relative_to_the_project(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("print('hi')\n")
    fake_api.script(
        reply(
            tool_use("Read", {"file_path": str(project / "src" / "app.py")}),
            tool_use("Grep", {"pattern": "hi", "path": str(project / "src")}),
            tool_use("Read", {"file_path": "/elsewhere/notes.txt"}),
        ),
        reply(text("done")),
    )

    done = run_cli("run", "look at the app")

    assert done.returncode == 0, done.stderr
    assert "● Read(src/app.py) — Read 1 line" in done.stderr
    assert "● Grep(hi)" in done.stderr
    assert str(project) not in done.stderr
    assert "✗ Read(/elsewhere/notes.txt)" in done.stderr  # outside the project: the full path


# ------------------------------------------------------------ stdout that cannot be written


def run_into(
    stdout: IO[str], args: list[str], *, home: Path, project: Path, api: FakeAnthropic
) -> subprocess.CompletedProcess[str]:
    proc = start_cli(args, home=home, project=project, api=api, stdout=stdout)
    _, stderr = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", stderr)


def one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_an_answer_that_cannot_be_written_is_one_line_and_exit_1(
    fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(reply(text("The answer.")))
    with open("/dev/full", "w") as full:
        done = run_into(full, ["run", "hi"], home=home, project=project, api=fake_api)

    assert done.returncode == 1
    assert one_error_line(done.stderr) == (
        "Error: Could not write to standard output: No space left on device. "
        "The session is saved: agentcli run -c continues it."
    )
    assert len(fake_api.requests) == 1


def test_stream_json_into_a_full_device_stops_before_any_request(
    fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(reply(text("never asked")))
    with open("/dev/full", "w") as full:
        args = ["run", "hi", "--output-format", "stream-json"]
        done = run_into(full, args, home=home, project=project, api=fake_api)

    assert done.returncode == 1
    assert one_error_line(done.stderr) == "Error: Could not write to standard output: No space left on device."
    assert fake_api.requests == []
    assert transcript_files(home, project) == []


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["run", "--help"]])
def test_help_and_version_into_a_full_device(
    args: list[str], fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    with open("/dev/full", "w") as full:
        done = run_into(full, args, home=home, project=project, api=fake_api)

    assert done.returncode == 1
    assert one_error_line(done.stderr) == "Error: Could not write to standard output: No space left on device."


@pytest.mark.parametrize("args", [["run", "hi"], ["--version"], ["-p", "hi", "--output-format", "json"]])
def test_a_closed_stdout_is_one_line_and_exit_1(
    args: list[str], fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(reply(text("never asked")))
    done = subprocess.run(
        ["bash", "-c", 'exec "$0" "$@" >&-', AGENTCLI, *args],
        cwd=project,
        env=cli_env(home, fake_api.url),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 1
    assert one_error_line(done.stderr) == (
        "Error: Standard output is closed, so there is nowhere to show the answer. "
        "Run agentcli with stdout open, e.g. redirected to a file."
    )
    assert fake_api.requests == []


WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.02; done"
"""A Bash call that holds the run until the test has closed its end of the pipe."""


@pytest.mark.parametrize("output_format", ["text", "stream-json"])
def test_a_reader_that_goes_away_ends_the_run_quietly_with_141(
    output_format: str, fake_api: FakeAnthropic, run_cli: RunCli, home: Path, project: Path
) -> None:
    fake_api.script(
        reply(tool_use("Bash", {"command": WAIT_FOR_GO}, id="toolu_wait")),
        reply(text("line one\nline two")),
        reply(text("never asked")),
    )
    args = ["run", "go on", "--allowed-tools", "Bash", "--output-format", output_format]
    proc = start_cli(args, home=home, project=project, api=fake_api)
    assert proc.stdout is not None and proc.stderr is not None
    if output_format == "stream-json":
        assert json.loads(proc.stdout.readline())["type"] == "system"  # what `| head -1` would read
    fake_api.wait_for_requests(1, timeout=30)
    proc.stdout.close()  # the reader is gone
    (project / "go").touch()
    with proc.stderr:
        stderr = proc.stderr.read()
    proc.wait(timeout=30)

    assert proc.returncode == 141, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr and "Error" not in stderr
    [path] = transcript_files(home, project)
    assert records(path)[1]["title"] == "go on"
    fake_api.script(reply(text("continued")))
    assert run_cli("run", "-c", "and then?").returncode == 0
    assert fake_api.requests[-1].status == 200
