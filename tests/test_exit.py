"""agentcli ends when its work ends: the interpreter is not torn down (no atexit handler runs),
and nothing is lost for it: the output, the transcript, the history, the exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RunCli, StartRepl
from tests.fake_anthropic import FakeAnthropic, http_error, reply, text
from tests.session_helpers import records, transcript_files

TEARDOWN_MARKER = "torn-down"


@pytest.fixture
def teardown_watch(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose interpreter registers an atexit handler at start-up (a
    sitecustomize on PYTHONPATH), and the file that handler would write."""
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / TEARDOWN_MARKER
    (site / "sitecustomize.py").write_text(
        f"import atexit\natexit.register(lambda: open({str(marker)!r}, 'w').close())\n"
    )
    return {"PYTHONPATH": str(site)}, marker


def test_the_watch_sees_an_interpreter_that_is_torn_down(teardown_watch: tuple[dict[str, str], Path]) -> None:
    env, marker = teardown_watch

    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)

    assert marker.exists()


@pytest.mark.parametrize(
    ("args", "script", "code"),
    [
        (("run", "hi"), reply(text("Hello.")), 0),
        (("-p", "hi"), reply(text("Hello.")), 0),
        (
            ("run", "hi"),
            http_error(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}),
            1,
        ),
        (("run", "--max-turns", "0", "hi"), None, 2),  # a usage error, reported by typer
        (("--version",), None, 0),
        (("--help",), None, 0),
    ],
)
def test_a_run_exits_with_its_code_without_tearing_the_interpreter_down(
    args: tuple[str, ...],
    script: object,
    code: int,
    run_cli: RunCli,
    fake_api: FakeAnthropic,
    teardown_watch: tuple[dict[str, str], Path],
) -> None:
    env, marker = teardown_watch
    if script is not None:
        fake_api.script(script)  # type: ignore[arg-type]

    done = run_cli(*args, env=env)

    assert done.returncode == code, done.stderr
    assert not marker.exists()
    if code == 0 and script is not None:
        assert done.stdout == "Hello.\n"


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_a_long_answer_and_the_transcript_are_complete_when_the_run_ends(
    output_format: str, run_cli: RunCli, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    answer = "\n".join(f"line {n} of a long answer" for n in range(20_000))  # far more than a pipe holds
    fake_api.script(reply(text(answer), chunk=4096))  # its size is the point here, not its 70,000 deltas

    done = run_cli("run", "--output-format", output_format, "write a lot")

    assert done.returncode == 0, done.stderr
    if output_format == "text":
        assert done.stdout == answer + "\n"
    elif output_format == "json":
        assert json.loads(done.stdout)["result"] == answer
    else:
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        assert lines[-1]["type"] == "result" and lines[-1]["result"] == answer
    [transcript] = transcript_files(home, project)
    assert transcript.read_text().endswith("\n")
    kinds = [(r["type"], r.get("message", {}).get("role")) for r in records(transcript)]
    assert kinds[0] == ("session", None)
    assert kinds[-3:] == [("message", "user"), ("message", "assistant"), ("run", None)]
    assert records(transcript)[-2]["message"]["content"][0]["text"] == answer
    assert records(transcript)[-1]["stop"] == "done"


def test_the_repl_ends_without_teardown_and_keeps_its_transcript_and_history(
    start_repl: StartRepl,
    fake_api: FakeAnthropic,
    home: Path,
    project: Path,
    teardown_watch: tuple[dict[str, str], Path],
) -> None:
    env, marker = teardown_watch
    fake_api.script(reply(text("Hello from the model.")))
    repl = start_repl(env=env)
    repl.submit("hi there")
    repl.wait_for_prompt("Hello from the model.")

    repl.press("ctrl-d")

    assert repl.wait_exit() == 0
    assert not marker.exists()
    [transcript] = transcript_files(home, project)
    assert [r["message"]["role"] for r in records(transcript) if r["type"] == "message"] == ["user", "assistant"]
    assert "+hi there" in (home / ".agentcli" / "history").read_text()
