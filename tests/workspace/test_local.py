"""The local workspace keeps the contract's promises: what each process gets in its environment,
where its output goes and how much of it is kept, that nothing it started outlives its block,
and that a file is reached without following a symlink swapped in after the check."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from agentcli.regular_file import NotRegularFile
from agentcli.workspace.contract import Command, WorkspaceError
from agentcli.workspace.local import LocalWorkspace
from tests.waiting import CEILING, wait_until

NEVER = threading.Event()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")  # a zombie is gone too


def printed(workspace: LocalWorkspace, *argv: str, **command: object) -> str:
    done = workspace.run(Command(argv, **command), timeout=CEILING, cancel=NEVER)  # type: ignore[arg-type]
    assert done.outcome == "done" and done.exit_code == 0, done
    return done.output


def test_the_agent_s_commands_get_the_credentials_the_user_lets_through_and_agentcli_s_own_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-key-000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-passed-000")
    workspace = LocalWorkspace(tmp_path, passthrough={"OPENAI_API_KEY"})
    show = 'echo "a=${ANTHROPIC_API_KEY-none} o=${OPENAI_API_KEY-none} x=${EXTRA-none}"'

    assert printed(workspace, "bash", "-c", show) == "a=none o=sk-openai-passed-000 x=none"
    assert printed(workspace, "bash", "-c", show, origin="harness", env={"EXTRA": "1"}) == "a=none o=none x=1"


def test_standard_error_goes_with_the_output_or_nowhere_as_the_command_asks(tmp_path: Path) -> None:
    workspace = LocalWorkspace(tmp_path)
    script = "echo out; echo err >&2"
    assert printed(workspace, "bash", "-c", script) == "out\nerr"
    assert printed(workspace, "bash", "-c", script, stderr="discard") == "out"


def test_commands_start_in_the_root_unless_told_otherwise(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    workspace = LocalWorkspace(tmp_path)
    assert printed(workspace, "pwd") == str(tmp_path)
    assert printed(workspace, "pwd", cwd=tmp_path / "sub") == str(tmp_path / "sub")


def test_output_over_the_limit_keeps_its_start_and_end_and_every_line_is_counted(tmp_path: Path) -> None:
    done = LocalWorkspace(tmp_path).run(
        Command(["seq", "1", "200000"]), timeout=CEILING, cancel=NEVER, output_limit=1_000
    )
    assert done.output.startswith("1\n2\n3\n") and done.output.endswith("199999\n200000")
    assert "output truncated" in done.output and len(done.output) < 1_200
    assert done.lines == 200_000


def test_a_timeout_kills_the_command_and_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    command = Command(["bash", "-c", f"sleep 300 & echo $! > {pid_file}; wait"])
    done = LocalWorkspace(tmp_path).run(command, timeout=0.5, cancel=NEVER)
    assert done.outcome == "timeout" and done.exit_code is None
    child = int(pid_file.read_text())
    wait_until(lambda: not alive(child), "the background sleep killed")


def test_a_cancel_kills_the_command_and_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    cancel = threading.Event()

    def cancel_once_started() -> None:
        wait_until(pid_file.exists, "the command started")
        cancel.set()

    threading.Thread(target=cancel_once_started, daemon=True).start()
    command = Command(["bash", "-c", f"sleep 300 & echo $! > {pid_file}; wait"])
    done = LocalWorkspace(tmp_path).run(command, timeout=CEILING, cancel=cancel)
    assert done.outcome == "cancelled"
    wait_until(lambda: not alive(int(pid_file.read_text())), "the background sleep killed")


def test_leaving_a_started_process_s_block_kills_it_with_its_group(tmp_path: Path) -> None:
    command = Command(["bash", "-c", "sleep 300 & echo $!; wait"], stderr="pipe")
    with LocalWorkspace(tmp_path).start(command) as proc:
        child = int(os.read(proc.stdout.fileno(), 100).decode())
        leader = proc.pid
        assert alive(child) and proc.stderr is not None
    wait_until(lambda: not alive(child), "the background sleep killed")
    assert not alive(leader)


def test_an_error_inside_the_block_kills_the_process_too(tmp_path: Path) -> None:
    command = Command(["bash", "-c", "echo $$; sleep 300"])
    with pytest.raises(RuntimeError), LocalWorkspace(tmp_path).start(command) as proc:
        shell = int(os.read(proc.stdout.fileno(), 100).decode())
        raise RuntimeError("the reader failed")
    wait_until(lambda: not alive(shell), "the shell killed")


def test_a_missing_program_is_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        LocalWorkspace(tmp_path).run(Command(["no-such-program-here"]), timeout=CEILING, cancel=NEVER)


def test_a_file_is_read_from_its_start_with_its_metadata(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    with LocalWorkspace(tmp_path).read_file(tmp_path / "a.txt") as file:
        assert file.info.st_size == 6 and file.stream.read() == b"hello\n"


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotRegularFile) as refused, LocalWorkspace(tmp_path).read_file(tmp_path / "pipe"):
        pass
    assert stat.S_ISFIFO(refused.value.mode)


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "a.txt").write_text("secret")
    (tmp_path / "dir").symlink_to(tmp_path / "elsewhere")  # the checked path was dir/a.txt, a real folder
    workspace = LocalWorkspace(tmp_path)
    with (
        pytest.raises(WorkspaceError, match="changed after permission was checked"),
        workspace.read_file(tmp_path / "dir" / "a.txt"),
    ):
        pass
    with pytest.raises(WorkspaceError, match="nothing was written"), workspace.open_folder(tmp_path / "dir", "written"):
        pass


def test_a_new_file_gets_the_default_mode_and_a_replaced_one_keeps_the_mode_given(tmp_path: Path) -> None:
    with LocalWorkspace(tmp_path).open_folder(tmp_path / "new" / "deep", "written", create=True) as folder:
        info = folder.replace("a.txt", b"one", None)
        assert folder.read("a.txt") is not None
        kept = folder.replace("b.txt", b"two", 0o600)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(info.st_mode) == 0o666 & ~umask and stat.S_IMODE(kept.st_mode) == 0o600
    assert (tmp_path / "new" / "deep" / "a.txt").read_bytes() == b"one"
