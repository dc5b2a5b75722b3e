"""`agentcli stats`: figures from the transcripts, exact on generated ones, unknown (not zero) on
older ones; and end to end, a scripted run's tool calls reported as they happened."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.catalog import model_info
from agentcli.contracts import Usage
from tests.conftest import RunCli
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use

UTC = {"TZ": "UTC"}
ONE = {"input_tokens": 1000, "output_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
"""The usage every scripted reply reports, so the token figures are exact."""


def stats(run_cli: RunCli, *args: str, cwd: Path | None = None) -> dict[str, Any]:
    done = run_cli("stats", "--json", *args, cwd=cwd, env=UTC)
    assert done.returncode == 0, done.stderr
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def test_a_scripted_runs_tool_calls_are_reported_exactly(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "notes.txt").write_text("hello\n")
    fake_api.script(
        reply(tool_use("Read", {"file_path": "notes.txt"}, id="t1"), usage=ONE),
        reply(
            tool_use("Edit", {"file_path": "notes.txt", "old_string": "absent", "new_string": "x"}, id="t2"), usage=ONE
        ),
        reply(
            tool_use("Edit", {"file_path": "notes.txt", "old_string": "hello", "new_string": "hi"}, id="t3"), usage=ONE
        ),
        reply(tool_use("Bash", {"command": "rm -rf build"}, id="t4"), usage=ONE),
        reply(tool_use("Frobnicate", {}, id="t5"), tool_use("Read", {"path": "notes.txt"}, id="t6"), usage=ONE),
        reply(text("Done."), usage=ONE),
    )
    ran = run_cli("run", "tidy up the notes", "--permission-mode", "acceptEdits")
    assert ran.returncode == 0, ran.stderr
    assert (project / "notes.txt").read_text() == "hi\n"

    figures = stats(run_cli)

    assert (figures["sessions"], figures["turns"], figures["tasks"]) == (1, 6, 1)
    assert figures["turns_per_task"] == {"finished": 1, "median": 6, "p90": 6}
    assert figures["stops"] == {
        "done": 1, "max_turns": 0, "budget": 0, "no_progress": 0, "interrupted": 0, "api_error": 0,
        "model_stopped": 0, "hook": 0, "error": 0,
    }  # fmt: skip
    tools = {name: {k: v for k, v in tool.items() if k != "median_ms"} for name, tool in figures["tools"].items()}
    assert tools == {
        "Read": {"calls": 2, "errors": 1, "error_share": 0.5, "denied": 0, "denial_share": 0.0,
                 "failures": {"invalid_input": 1}},
        "Edit": {"calls": 2, "errors": 1, "error_share": 0.5, "denied": 0, "denial_share": 0.0,
                 "failures": {"not_found": 1}},
        "Bash": {"calls": 1, "errors": 1, "error_share": 1.0, "denied": 1, "denial_share": 1.0,
                 "failures": {"denied": 1}},
        "Frobnicate": {"calls": 1, "errors": 1, "error_share": 1.0, "denied": 0, "denial_share": 0.0,
                       "failures": {"unknown_tool": 1}},
    }  # fmt: skip
    assert isinstance(figures["tools"]["Read"]["median_ms"], int)  # the valid Read ran; the others never did
    assert figures["tools"]["Bash"]["median_ms"] is None
    assert figures["edit"] == {
        "calls": 2, "applied": 1, "not_found": 1, "not_unique": 0, "stale": 0, "not_read": 0,
        "other_errors": 0, "unrecorded_errors": 0, "apply_rate": 0.5,
    }  # fmt: skip
    model = figures["models"]["claude-sonnet-5-5"]
    assert {k: model[k] for k in ("requests", "tool_calls", "invalid_input", "invalid_input_rate", "unknown_tool")} == {
        "requests": 6, "tool_calls": 6, "invalid_input": 1, "invalid_input_rate": 0.1667, "unknown_tool": 1,
    }  # fmt: skip
    assert model["cut_off"] == 0 and figures["cut_off"] == 0
    assert all(isinstance(model[key][p], int) for key in ("first_token_ms", "request_ms") for p in ("p50", "p90"))
    assert figures["tokens"] == {"input": 6000, "cache_creation": 0, "cache_read": 0, "output": 600, "total": 6600}
    spent = Usage(input_tokens=6000, output_tokens=600)
    assert figures["cost_usd"] == round(model_info("claude-sonnet-5-5").cost_usd(spent), 6)
    [session] = figures["per_session"]
    assert (session["title"], session["turns"], session["tokens"]) == ("tidy up the notes", 6, 6600)
