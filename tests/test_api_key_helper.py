"""`apiKeyHelper`: the key a command of your own settings prints is sent as Claude Code sends it,
kept, fetched again after a 401; a helper that fails says so in one line, never showing the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.errors import ModelAPIError
from agentcli.providers.key_helper import KeyHelper, KeyHelperCommand, run_helper, ttl_from_environment
from tests.conftest import RunMain
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, reply, text, tool_use
from tests.session_helpers import transcript_files
from tests.waiting import alive, wait_until

KEY = "helper-key-0123456789-FIRST"
NEW_KEY = "helper-key-9876543210-SECOND"
OTHER_KEY = "sk-openai-test-9876543210-ANOTHER-SECRET"


def helper_settings(home: Path, script: str) -> Path:
    """`apiKeyHelper` in the user's ~/.claude/settings.json: `sh` running `script`; returns the log of its runs."""
    runs = home / "helper-runs.log"
    path = home / "helper.sh"
    path.write_text(f'echo "ran openai=${{OPENAI_API_KEY:-none}}" >> {runs}\n{script}\n')
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"apiKeyHelper": f"sh {path}"}))
    return runs


@pytest.fixture
def no_key(in_process_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key in the environment (which would win over the helper), another provider's key there."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", OTHER_KEY)


def run_lines(runs: Path) -> list[str]:
    return runs.read_text().splitlines() if runs.exists() else []


def test_the_helpers_key_is_sent_both_ways_kept_and_redacted(
    run_main: RunMain, fake_api: FakeAnthropic, no_key: None, home: Path, project: Path
) -> None:
    fake_api.api_key = KEY
    runs = helper_settings(home, f"echo {KEY}")
    (project / "notes.txt").write_text(f"key: {KEY}\n")
    fake_api.script(reply(tool_use("Bash", {"command": "cat notes.txt"}, id="toolu_1")), reply(text("Done.")))

    done = run_main("run", "go", "--allowed-tools", "Bash")

    assert done.returncode == 0, done.stderr
    assert [(r.headers["x-api-key"], r.headers["authorization"]) for r in fake_api.requests] == [
        (KEY, f"Bearer {KEY}"),
        (KEY, f"Bearer {KEY}"),
    ]
    assert run_lines(runs) == ["ran openai=none"]  # run once, kept; no credential in its environment
    [result] = [b for b in fake_api.requests[1].body["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert "key: [REDACTED]" in str(result["content"])
    assert KEY not in json.dumps(fake_api.requests[1].body)
    for path in transcript_files(home, project):
        assert KEY not in path.read_text()
    assert KEY not in done.stdout + done.stderr


def test_a_refused_key_is_fetched_again_once(
    run_main: RunMain, fake_api: FakeAnthropic, no_key: None, home: Path
) -> None:
    key_file = home / "key.txt"
    key_file.write_text(KEY)
    runs = helper_settings(home, f"cat {key_file}")
    fake_api.api_key = KEY

    def rotate(request: RecordedRequest) -> Reply:
        """The server moves on to a new key after the first answer, as short-lived keys do."""
        fake_api.api_key = NEW_KEY
        key_file.write_text(NEW_KEY)
        return reply(tool_use("Bash", {"command": "true"}, id="toolu_1"))

    fake_api.script(rotate, reply(text("Done.")))

    done = run_main("run", "go", "--allowed-tools", "Bash")

    assert done.returncode == 0, done.stderr
    assert [(r.headers["x-api-key"], r.status) for r in fake_api.requests] == [(KEY, 200), (KEY, 401), (NEW_KEY, 200)]
    assert len(run_lines(runs)) == 2


def test_a_key_refused_again_ends_the_run_with_what_to_check(
    run_main: RunMain, fake_api: FakeAnthropic, no_key: None, home: Path
) -> None:
    runs = helper_settings(home, f"echo {KEY}")  # the server wants another: test-key
    fake_api.script(reply(text("never sent")))

    done = run_main("run", "go")

    assert done.returncode == 1
    assert [r.status for r in fake_api.requests] == [401, 401]
    assert len(run_lines(runs)) == 2
    assert "refused the key apiKeyHelper printed" in done.stderr
    assert KEY not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("script", "said"),
    [
        (
            f'echo "vault: permission denied" >&2; echo {KEY}; exit 3',
            "The API key helper failed with exit code 3 (apiKeyHelper in {settings}): vault: permission denied.",
        ),
        (
            'echo "looked everywhere" >&2',
            "The API key helper printed no key (apiKeyHelper in {settings}): looked everywhere.",
        ),
        (f"echo {KEY}; echo {NEW_KEY}", "The API key helper printed more than a key"),
        (f"echo 'key: {KEY}'", "The API key helper printed more than a key"),
    ],
)
def test_a_failing_helper_is_one_line_without_its_output(
    run_main: RunMain, fake_api: FakeAnthropic, no_key: None, home: Path, script: str, said: str
) -> None:
    helper_settings(home, script)
    fake_api.script(reply(text("never sent")))

    done = run_main("run", "go")

    assert done.returncode == 1  # as for a missing key
    assert fake_api.requests == []
    assert said.format(settings=home / ".claude" / "settings.json") in done.stderr
    assert KEY not in done.stdout + done.stderr and NEW_KEY not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if "helper" in line]) == 1


def test_a_checked_in_helper_never_runs(
    run_main: RunMain, fake_api: FakeAnthropic, no_key: None, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"apiKeyHelper": f"touch {project / 'ran'}; echo {KEY}"}))
    fake_api.api_key = KEY
    fake_api.script(reply(text("Done.")))

    without_key = run_main("run", "go")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    fake_api.api_key = "test-key"
    with_key = run_main("run", "go")

    assert without_key.returncode == 1 and "No API key" in without_key.stderr
    assert with_key.returncode == 0, with_key.stderr
    assert f"Ignored apiKeyHelper in {settings}" in with_key.stderr
    assert not (project / "ran").exists()
    assert [r.headers["x-api-key"] for r in fake_api.requests] == ["test-key"]


def test_a_helper_that_hangs_is_stopped(tmp_path: Path) -> None:
    command = KeyHelperCommand(f"sleep 600 & echo $! > {tmp_path / 'pid'}; wait", None, tmp_path, timeout_s=0.5)

    with pytest.raises(ModelAPIError) as stopped:
        run_helper(command)

    assert str(stopped.value) == "The API key helper did not finish within 0.5 s (apiKeyHelper)."
    child = int((tmp_path / "pid").read_text())
    wait_until(lambda: not alive(child), "the helper's own child being stopped with it")


def test_the_key_is_kept_for_its_time_to_live(tmp_path: Path) -> None:
    now = [0.0]
    counter = tmp_path / "count"
    command = f'n=$(( $(cat {counter} 2>/dev/null || echo 0) + 1 )); echo $n > {counter}; echo "key-number-$n"'
    helper = KeyHelper(KeyHelperCommand(command, None, tmp_path, ttl_s=300), clock=lambda: now[0])

    first = helper.key()
    now[0] = 299.0
    kept = helper.key()
    now[0] = 300.0
    renewed = helper.key()
    refreshed = helper.refreshed(renewed)
    not_again = helper.refreshed(renewed)  # another thread refused the same key: it was fetched already

    assert (first, kept, renewed, refreshed, not_again) == (
        "key-number-1",
        "key-number-1",
        "key-number-2",
        "key-number-3",
        "key-number-3",
    )


def test_the_time_to_live_comes_from_claude_codes_variable() -> None:
    notices: list[str] = []
    variable = "CLAUDE_CODE_API_KEY_HELPER_TTL_MS"

    assert ttl_from_environment(notices.append, {variable: "120000"}) == 120.0
    assert ttl_from_environment(notices.append, {}) == 300.0
    assert ttl_from_environment(notices.append, {variable: "soon"}) == 300.0
    assert notices == [
        f"Ignored {variable}='soon': it must be a whole number of milliseconds from 1 to 86,400,000. Using 300,000."
    ]
