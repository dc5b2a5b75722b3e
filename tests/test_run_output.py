"""What `agentcli run` prints: progress lines, and stdout that cannot be written."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RunCli
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use


def test_progress_lines_name_files_relative_to_the_project(
    run_cli: RunCli, fake_api: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("print('hi')\n")
    fake_api.script(
        reply(
            tool_use("Read", {"file_path": str(project / "src" / "app.py")}),
            tool_use("Grep", {"pattern": "hi", "path": str(project / "src")}),
            tool_use("Read", {"file_path": str(tmp_path / "elsewhere.txt")}),
        ),
        reply(text("done")),
    )

    done = run_cli("run", "look at the app")

    assert done.returncode == 0, done.stderr
    assert "● Read(src/app.py) — Read 1 line" in done.stderr
    assert "● Grep(hi)" in done.stderr
    assert str(project) not in done.stderr.replace(str(tmp_path / "elsewhere.txt"), "")
    assert f"✗ Read({tmp_path / 'elsewhere.txt'})" in done.stderr  # outside the project: the full path
