"""A missing API key is reported at once, and a conversation the model never answered leaves no transcript."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from agentcli.credentials import MISSING_CREDENTIAL
from tests.cli_process import start_cli
from tests.conftest import RunCli, RunMain, StartRepl
from tests.fake_anthropic import FakeAnthropic, http_error, reply, text
from tests.session_helpers import records, transcript_files

NO_KEY = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": ""}


def test_run_without_a_key_says_so_before_loading_anything(
    run_cli: RunCli, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_text("{not json")  # would be exit 2 if it were read

    done = run_cli("run", "hello", env={**NO_KEY, "PYTHONPROFILEIMPORTTIME": "1"})

    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert errors == [
        "Error: No API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a bearer token) in your "
        "environment. A local server that needs no key takes any value, e.g. ANTHROPIC_API_KEY=none."
    ]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "agentcli.cli" in imported  # the measurement works
    assert not {"agentcli.session", "agentcli.runner", "anthropic", "rich"} & imported
    assert fake_api.requests == []
    assert transcript_files(home, project) == []


def test_print_flag_and_piped_input_check_the_key_too(run_main: RunMain, fake_api: FakeAnthropic) -> None:
    for args, stdin in ((("-p", "hello"), ""), ((), "hello from a pipe")):
        done = run_main(*args, input=stdin, env=NO_KEY)
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith("Error: No API key: set ANTHROPIC_API_KEY")
    assert fake_api.requests == []


def test_a_bearer_token_is_enough(run_main: RunMain, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("hi")))

    done = run_main("run", "hello", env={"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "test-key"})

    assert "No API key" not in done.stderr
    assert len(fake_api.requests) == 1


def test_repl_without_a_key_warns_under_the_banner_and_keeps_help_usable(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    repl = start_repl(env=NO_KEY)
    screen = repl.text()
    lines = screen.splitlines()
    banner = next(i for i, line in enumerate(lines) if line.startswith("agentcli "))
    warning = " ".join(line.strip() for line in lines[banner + 1 : banner + 3])
    assert warning.startswith(f"! {MISSING_CREDENTIAL} /help works without one.")

    repl.submit("/help")
    repl.wait_for("/resume")
    repl.submit("hello there")
    repl.wait_for_count("No API key", 2)
    repl.submit("/help")
    repl.wait_for_count("/resume", 2)  # the REPL goes on

    assert fake_api.requests == []
    assert transcript_files(home, project) == []


def test_a_first_request_that_fails_leaves_no_transcript(
    run_main: RunMain, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(http_error(401, {"type": "error", "error": {"type": "authentication_error", "message": "no"}}))

    failed = run_main("run", "first try")

    assert failed.returncode == 1
    assert len(fake_api.requests) == 1
    assert transcript_files(home, project) == []

    unreachable = run_main("run", "nobody there", env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert unreachable.returncode == 1
    assert transcript_files(home, project) == []

    continued = run_main("run", "-c", "again")
    assert continued.returncode == 2
    assert "No earlier session to continue" in continued.stderr


def test_a_failed_first_message_in_the_repl_is_kept_once_the_model_answers(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(
        http_error(404, {"type": "error", "error": {"type": "not_found_error", "message": "model: nope"}}),
        reply(text("Answer-2")),
    )
    repl = start_repl()
    repl.submit("first message")
    repl.wait_for("model: nope")  # not "404": the banner shows the project path, which may hold "pytest-404"
    assert transcript_files(home, project) == []

    repl.submit("second message")
    repl.wait_for_prompt("Answer-2")  # the turn is over: its answer is recorded, not only streamed

    [path] = transcript_files(home, project)
    written = records(path)
    assert [r["type"] for r in written] == ["session", "title", "message", "run", "message", "message", "run"]
    assert written[1]["title"] == "first message"
    assert [written[3]["stop"], written[6]["stop"]] == ["api_error", "done"]
    kept = [r["message"] for r in written if r["type"] == "message"]
    assert [m["role"] for m in kept] == ["user", "user", "assistant"]
    assert "first message" in json.dumps(kept[0]) and "second message" in json.dumps(kept[1])
    assert "Answer-2" in json.dumps(kept[2])


def test_while_the_first_request_is_out_the_prompt_is_on_disk(
    fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    """The guarantee of sessions/transcript.py holds: a run killed mid-turn keeps what was sent."""
    fake_api.script(reply(text("slow answer"), delay=30))
    proc = start_cli(["run", "take your time"], home=home, project=project, api=fake_api)
    try:
        fake_api.wait_for_requests(1, timeout=30)
        [path] = transcript_files(home, project)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
    written = records(path)
    assert written[-1]["message"]["role"] == "user"
    assert "take your time" in json.dumps(written[-1])
