"""Helpers for the session tests: transcripts on disk, big files, settings that make compaction due."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.context.paths import project_state_dir
from agentcli.providers.scripted import ScriptedModel, reply, text
from tests.conftest import RunAgent, RunCli, RunMain
from tests.fake_anthropic import FakeAnthropic
from tests.fake_anthropic import reply as fake_reply
from tests.fake_anthropic import text as fake_text


def transcript_files(home: Path, project: Path) -> list[Path]:
    folder = project_state_dir(project, home / ".agentcli")
    return sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def big_file(path: Path, chars: int) -> None:
    line = "0123456789" * 9 + "\n"
    path.write_text(line * (chars // len(line)))


def model_settings(project: Path, **values: Any) -> None:
    (project / ".agentcli").mkdir(exist_ok=True)
    (project / ".agentcli" / "settings.json").write_text(json.dumps(values))


def auto_compact_over_the_wire_at(run_main: RunMain, fake_api: FakeAnthropic, project: Path, above_base: int) -> None:
    """`auto_compact_at` for a test that runs the command line against the fake server."""
    fake_api.script(fake_reply(fake_text("ok")))
    assert run_main("run", "hi").returncode == 0
    usage = fake_api.usage_log[-1]
    base = usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
    window = 2 * (base + above_base)
    model_settings(project, models={"claude-sonnet-5-5": {"context_window": window}}, autoCompactPercent=50)


def auto_compact_at(run_agent: RunAgent, model: ScriptedModel, project: Path, above_base: int) -> None:
    """Set the auto-compaction threshold to `above_base` tokens more than an empty conversation
    takes (system prompt and tools, as the model counts them), so growing either does not break the test."""
    model.script(reply(text("ok")))
    done = run_agent("hi", output_format="json")
    assert done.returncode == 0, done.stderr
    usage = json.loads(done.stdout)["usage"]
    base = usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
    window = 2 * (base + above_base)
    model_settings(project, models={"claude-sonnet-5-5": {"context_window": window}}, autoCompactPercent=50)


def two_files_compacting_at_the_second_read(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    """one.txt and two.txt of about 5.6k tokens each, and auto-compaction due once both were read."""
    big_file(project / "one.txt", 20_000)
    big_file(project / "two.txt", 20_000)
    auto_compact_at(run_agent, model, project, 8_400)


def continues_after_a_killed_call(run_cli: RunCli, fake_api: FakeAnthropic, call_id: str) -> None:
    """`-c` after a run stopped mid-tool-call: the conversation sent is valid and the call is answered."""
    fake_api.script(fake_reply(fake_text("Picked up again.")))
    done = run_cli("run", "-c", "go on")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Picked up again.\n"
    request = fake_api.requests[-1]
    assert request.status == 200  # the fake found the conversation valid
    messages = request.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "user"]
    result = messages[2]["content"][0]
    assert result["tool_use_id"] == call_id and result["is_error"] is True
    assert "go on" in json.dumps(messages[3])
