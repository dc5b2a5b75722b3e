"""Helpers for the session tests: transcripts on disk, big files, settings that make compaction due."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.context.paths import project_state_dir
from tests.conftest import RunCli
from tests.fake_anthropic import FakeAnthropic, reply, text


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


def auto_compact_at(run_cli: RunCli, fake_api: FakeAnthropic, project: Path, above_base: int) -> None:
    """Set the auto-compaction threshold to `above_base` tokens more than an empty conversation
    takes (system prompt and tools, as the fake counts them), so growing either does not break the test."""
    fake_api.script(reply(text("ok")))
    assert run_cli("run", "hi").returncode == 0
    usage = fake_api.usage_log[-1]
    base = usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
    window = 2 * (base + above_base)
    model_settings(project, models={"claude-sonnet-5-5": {"context_window": window}}, autoCompactPercent=50)
