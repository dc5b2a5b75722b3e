"""The Notification hooks' `idle_prompt`: once the REPL's prompt has waited for the user a while
after an answer (`idleNotificationSeconds`, default 60), as in Claude Code. The decision is
checked with a clock the test moves; the REPL's wiring with a threshold of 0 and a hook whose
log the test waits for."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from agentcli.errors import UsageError
from agentcli.repl.idle import IdleWait, IdleWatch, idle_threshold
from tests.conftest import AGENTCLI, StartRepl, cli_env
from tests.fake_anthropic import FakeAnthropic, reply, text
from tests.hooks_helpers import hook_command, hook_entry, logged
from tests.terminal import Terminal
from tests.waiting import wait_until


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_wait_after_an_answer_passes_its_threshold_once() -> None:
    clock = Clock()
    watch = IdleWait(60, clock)
    watch.answered()
    watch.waiting()
    clock.now += 59
    assert not watch.due()
    clock.now += 1
    assert watch.due()
    clock.now += 600
    assert not watch.due()  # once per wait


def test_a_key_restarts_the_wait_and_a_prompt_gone_ends_it() -> None:
    clock = Clock()
    watch = IdleWait(60, clock)
    watch.answered()
    watch.waiting()
    clock.now += 50
    watch.typed()
    clock.now += 50
    assert not watch.due()
    clock.now += 10
    assert watch.due()

    watch.answered()
    watch.waiting()
    watch.busy()  # the user sent a message
    clock.now += 600
    assert not watch.due()


def test_a_prompt_that_follows_no_answer_waits_for_nothing() -> None:
    clock = Clock()
    watch = IdleWait(60, clock)
    watch.waiting()  # the session's first prompt
    clock.now += 600
    assert not watch.due()
    watch.answered()
    watch.waiting()
    watch.busy()
    watch.waiting()  # after a built-in command: no turn ended since the last prompt
    clock.now += 600
    assert not watch.due()


def test_the_watching_thread_calls_once_the_threshold_has_passed() -> None:
    fired = threading.Event()
    calls: list[int] = []

    def on_idle() -> None:
        calls.append(1)
        fired.set()

    watch = IdleWatch(0, on_idle)
    watch.answered()
    watch.waiting()
    assert fired.wait(10)
    watch.close()
    assert calls == [1]


def test_the_threshold_setting_is_checked() -> None:
    assert idle_threshold(None) == 60
    assert idle_threshold(0) == 0
    with pytest.raises(UsageError, match=r"idleNotificationSeconds in settings.json must be a number of seconds"):
        idle_threshold(-1, "settings.json")
    with pytest.raises(UsageError):
        idle_threshold(float("nan"))


def test_the_repl_runs_the_idle_prompt_hooks_after_an_answer(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path, project: Path, tmp_path: Path
) -> None:
    idle_log, permission_log = tmp_path / "idle.log", tmp_path / "permission.log"
    settings = {
        "idleNotificationSeconds": 0,
        "hooks": {
            "Notification": [
                hook_entry(hook_command(tmp_path, idle_log), matcher="idle_prompt"),
                hook_entry(hook_command(tmp_path, permission_log), matcher="permission_prompt"),
            ]
        },
    }
    (home / ".agentcli" / "settings.json").write_text(json.dumps(settings))
    fake_api.script(reply(text("Hello!")))
    repl = start_repl()

    repl.submit("hi")
    repl.wait_for("Hello!")
    wait_until(lambda: len(logged(idle_log)) == 1, "the idle_prompt hook ran")

    [heard] = logged(idle_log)
    assert heard["hook_event_name"] == "Notification"
    assert heard["notification_type"] == "idle_prompt"
    assert heard["message"] == "agentcli is waiting for your input"
    assert heard["cwd"] == str(project) and heard["session_id"]
    assert logged(permission_log) == []  # the matcher picks the kind


def test_a_bad_threshold_stops_the_repl_naming_the_setting(fake_api: FakeAnthropic, home: Path, project: Path) -> None:
    settings = {"idleNotificationSeconds": "soon", "hooks": {"Notification": [hook_entry("true")]}}
    (home / ".agentcli" / "settings.json").write_text(json.dumps(settings))
    terminal = Terminal([AGENTCLI], env=cli_env(home, fake_api.url), cwd=project)
    try:
        assert terminal.wait_exit() == 2
        assert "idleNotificationSeconds" in terminal.text() and "must be a number of seconds" in terminal.text()
    finally:
        terminal.close()


def test_what_an_idle_hook_says_goes_above_the_prompt_and_leaves_its_line_intact(
    start_repl: StartRepl, fake_api: FakeAnthropic, home: Path, tmp_path: Path
) -> None:
    log, go = tmp_path / "idle.log", tmp_path / "go"
    said = json.dumps({"systemMessage": "time for tea"})
    hook = hook_command(tmp_path, log, **{"await": str(go), "stdout": said})
    settings = {"idleNotificationSeconds": 0, "hooks": {"Notification": [hook_entry(hook, matcher="idle_prompt")]}}
    (home / ".agentcli" / "settings.json").write_text(json.dumps(settings))
    fake_api.script(reply(text("Hello!")))
    repl = start_repl()
    repl.submit("hi")
    repl.wait_for_prompt("Hello!")
    wait_until(lambda: len(logged(log)) == 1, "the idle_prompt hook started")  # and waits for `go`
    repl.type("draft words")
    repl.wait_for("> draft words")

    go.touch()  # the hook answers while the prompt is up, with text typed on it
    screen = repl.wait_for("time for tea")
    repl.type(" more")
    screen = repl.wait_for("> draft words more")

    lines = screen.splitlines()
    [notice] = [line for line in lines if "time for tea" in line]
    [prompt] = [index for index, line in enumerate(lines) if line.startswith("> draft words")]
    assert lines[prompt] == "> draft words more", screen
    assert notice.endswith("time for tea") and lines.index(notice) < prompt, screen
    assert lines.index(notice) > max(index for index, line in enumerate(lines) if "Hello!" in line), screen
