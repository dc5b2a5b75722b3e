"""The built-in tools through the loop: `agentcli run` in-process, the model scripted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent


def results(model: ScriptedModel, request: int) -> list[dict[str, Any]]:
    """The tool_result blocks of the newest user message in request number `request`."""
    content = model.requests[request].messages[-1]["content"]
    return [block for block in content if block["type"] == "tool_result"]


def test_read_then_edit_changes_the_file(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    (project / "app.py").write_text("def greet():\n    return 'hello'\n")
    model.script(
        reply(tool_use("Read", {"file_path": "app.py"}, id="toolu_1")),
        reply(tool_use("Edit", {"file_path": "app.py", "old_string": "'hello'", "new_string": "'hi'"}, id="toolu_2")),
        reply(text("Changed the greeting.")),
    )
    done = run_agent("make it shorter", permission_mode="bypassPermissions")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Changed the greeting.\n"
    assert (project / "app.py").read_text() == "def greet():\n    return 'hi'\n"
    [read] = results(model, 1)
    assert read["content"] == "     1\tdef greet():\n     2\t    return 'hello'"
    [edited] = results(model, 2)
    assert "is_error" not in edited
    assert edited["content"].startswith("Updated app.py: 1 addition, 1 removal\n\n--- a/app.py\n+++ b/app.py\n")
    assert "Updated app.py: 1 addition, 1 removal" in done.stderr


def test_edit_without_read_is_refused_and_the_file_is_untouched(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    (project / "app.py").write_text("x = 1\n")
    model.script(
        reply(tool_use("Edit", {"file_path": "app.py", "old_string": "1", "new_string": "2"}, id="toolu_1")),
        reply(text("I need to read it first.")),
    )
    done = run_agent("bump x", permission_mode="bypassPermissions")
    assert done.returncode == 0, done.stderr
    [refused] = results(model, 1)
    assert refused["is_error"] is True and "Read it first" in refused["content"]
    assert (project / "app.py").read_text() == "x = 1\n"


def test_write_creates_nested_folders(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    model.script(
        reply(tool_use("Write", {"file_path": "pkg/sub/mod.py", "content": "VALUE = 42\n"}, id="toolu_1")),
        reply(text("Created.")),
    )
    done = run_agent("create a module", allowed_tools=["Write"])
    assert done.returncode == 0, done.stderr
    assert (project / "pkg/sub/mod.py").read_text() == "VALUE = 42\n"
    [written] = results(model, 1)
    assert written["content"] == "Created pkg/sub/mod.py (1 line, 11 bytes)."


def test_four_greps_in_one_turn_answer_in_one_message_in_call_order(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    for name in ("alpha", "beta", "gamma", "delta"):
        (project / f"{name}.txt").write_text(f"{name} marker\n")
    order = ("gamma", "alpha", "delta", "beta")
    model.script(
        reply(*[tool_use("Grep", {"pattern": f"{n} marker"}, id=f"toolu_{i}") for i, n in enumerate(order)]),
        reply(text("Found them all.")),
    )
    done = run_agent("find the markers")
    assert done.returncode == 0, done.stderr
    message = model.requests[1].messages[-1]
    assert message["role"] == "user"
    assert [block["tool_use_id"] for block in message["content"]] == [f"toolu_{i}" for i in range(4)]
    assert [block["content"] for block in message["content"]] == [f"{n}.txt" for n in order]


def test_failing_command_reports_its_exit_code(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(
        reply(tool_use("Bash", {"command": "echo broken >&2; exit 4"}, id="toolu_1")),
        reply(text("It failed.")),
    )
    done = run_agent("run it", permission_mode="bypassPermissions")
    assert done.returncode == 0, done.stderr
    [result] = results(model, 1)
    assert result["is_error"] is True
    assert result["content"] == "broken\nExit code 4"


def test_grep_without_ripgrep_finds_the_same(
    run_agent: RunAgent, model: ScriptedModel, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "src").mkdir()
    (project / "src/main.py").write_text("def main():\n    pass\n")
    (project / ".gitignore").write_text("build/\n")
    (project / "build").mkdir()
    (project / "build/main.py").write_text("def main():\n")
    grep = {"pattern": r"def \w+", "output_mode": "content"}
    model.script(
        reply(tool_use("Grep", grep, id="toolu_1")),
        reply(text("one")),
        reply(tool_use("Grep", grep, id="toolu_1")),
        reply(text("two")),
    )
    assert run_agent("find defs").returncode == 0
    monkeypatch.setenv("AGENTCLI_NO_RIPGREP", "1")
    assert run_agent("find defs").returncode == 0
    [with_default] = results(model, 1)
    [without_rg] = results(model, 3)
    assert with_default["content"] == without_rg["content"] == "src/main.py:1:def main():"


def test_missing_file_error_suggests_the_real_path(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    (project / "src").mkdir()
    (project / "src/main.py").write_text("print(1)\n")
    model.script(reply(tool_use("Read", {"file_path": "src/mian.py"}, id="toolu_1")), reply(text("ok")))
    done = run_agent("read it")
    assert done.returncode == 0, done.stderr
    [result] = results(model, 1)
    result.pop("cache_control", None)
    assert result == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "File not found: src/mian.py. Did you mean src/main.py?",
        "is_error": True,
    }
