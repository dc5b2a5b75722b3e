"""The sandboxed workspace holds what the agent's commands do, with the real bubblewrap: each
test is one way out a hostile or mistaken command might try (interpreters the deny rules cannot
see into, symlinks, hard links, /proc, a process left behind, protected paths, secret places,
credentials in the environment, Unix sockets, new namespaces), and checks on the machine itself
that nothing got out. The network's escapes are in test_sandbox_network.py."""

from __future__ import annotations

import fcntl
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.workspace.contract import Command
from agentcli.workspace.sandbox_layout import own_install, plan_layout
from agentcli.workspace.sandbox_settings import SandboxSettings
from agentcli.workspace.sandboxed import SandboxedWorkspace
from tests.sandbox_support import NEVER, PYTHON, require_sandbox, run_in
from tests.waiting import CEILING


@pytest.fixture
def sandbox(project: Path, outside: Path) -> Iterator[SandboxedWorkspace]:
    """A sandbox around `project`, its home folder in `outside` (with secrets in it)."""
    require_sandbox()
    home = outside / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = AKIA-SECRET\n")
    (home / "notes.txt").write_text("ordinary\n")
    with SandboxedWorkspace(project, SandboxSettings(enabled=True), home=home) as workspace:
        yield workspace


@pytest.fixture
def precious(outside: Path) -> Path:
    """A file outside the project that no sandboxed command may change or delete."""
    path = outside / "precious.txt"
    path.write_text("keep me\n")
    return path


def test_a_write_outside_the_project_fails_and_says_why_while_the_project_is_writable(
    sandbox: SandboxedWorkspace, project: Path, precious: Path
) -> None:
    done = run_in(sandbox, f"echo made > inside.txt; echo hacked > {precious}")

    assert precious.read_text() == "keep me\n"
    assert (project / "inside.txt").read_text() == "made\n"
    assert "Read-only file system" in done.output
    assert any("agentcli's sandbox, which lets commands write only the project" in note for note in done.notes)


@pytest.mark.parametrize(
    "script",
    [
        "{python} -c 'import os, sys; os.remove(sys.argv[1])' {path}",
        "awk 'BEGIN {{ system(\"rm -f {path}\") }}'",
        "printf 'all:\\n\\trm -f {path}\\n' | make -s -f -",
        "perl -e 'unlink $ARGV[0] or die \"$!\\n\"' {path}",
        "find {folder} -name precious.txt -delete",
        "env rm -f {path}",
    ],
    ids=["python -c", "awk system()", "make -f -", "perl", "find -delete", "env rm"],
)
def test_the_deny_rules_blind_spots_cannot_delete_a_file_outside_the_project(
    sandbox: SandboxedWorkspace, precious: Path, script: str
) -> None:
    run_in(sandbox, script.format(python=PYTHON, path=precious, folder=precious.parent))

    assert precious.read_text() == "keep me\n"


def test_a_symlink_in_the_project_does_not_lead_out_of_it(
    sandbox: SandboxedWorkspace, project: Path, precious: Path
) -> None:
    (project / "planted").symlink_to(precious.parent)  # as a hostile repository would ship it
    done = run_in(
        sandbox, "echo hacked > planted/precious.txt; ln -s / root; echo x > root/var/tmp/new; rm -rf planted/"
    )

    assert precious.read_text() == "keep me\n"
    assert "Read-only file system" in done.output
    assert sorted(p.name for p in precious.parent.iterdir()) == ["home", "precious.txt"]


def test_a_hard_link_to_a_file_outside_cannot_be_made_or_written_through(
    sandbox: SandboxedWorkspace, project: Path, precious: Path
) -> None:
    done = run_in(sandbox, f"ln {precious} link.txt && echo hacked > link.txt")

    assert done.exit_code != 0
    assert precious.read_text() == "keep me\n"
    assert not (project / "link.txt").exists()


def test_a_command_sees_only_its_own_processes_in_proc(sandbox: SandboxedWorkspace) -> None:
    done = run_in(sandbox, "ls /proc | grep -E '^[0-9]+$' | wc -l; cat /proc/1/cmdline | tr '\\0' ' '")

    count, first = done.output.splitlines()
    assert int(count) <= 4  # bash, ls, grep, wc: never agentcli or the machine's other processes
    assert str(os.getpid()) not in done.output.split()
    assert first.startswith("bash -c")


def test_nothing_a_command_leaves_in_the_background_survives_it(sandbox: SandboxedWorkspace, project: Path) -> None:
    lock = project / "held.lock"
    lock.touch()
    done = run_in(sandbox, "(setsid nohup flock held.lock sleep 600 >/dev/null 2>&1 &) ; sleep 0.2; echo started")

    assert done.output == "started"
    with open(lock) as file:  # a process still holding the lock would make this raise BlockingIOError
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)


@pytest.mark.parametrize(
    ("target", "there"),
    [
        (".git/hooks/pre-commit", False),
        (".git/hooks/pre-commit", True),
        (".git/config", True),
        (".agentcli/settings.local.json", False),
        (".agentcli/settings.json", True),
        (".claude/settings.json", False),
        (".claude/settings.json", True),
        (".commands/evil.md", False),
        (".mcp.json", True),
    ],
)
def test_the_project_s_protected_paths_stay_read_only_inside(
    sandbox: SandboxedWorkspace, project: Path, target: str, there: bool
) -> None:
    if there and not (project / target).exists():
        (project / target).parent.mkdir(parents=True, exist_ok=True)
        (project / target).write_text("{}\n")
    before = (project / target).read_bytes() if there else None  # a missing one stays missing
    run_in(sandbox, f"mkdir -p $(dirname {target}); echo '{{\"hooks\": 1}}' > {target}; chmod +x {target}")

    after = (project / target).read_bytes() if (project / target).exists() else None
    assert after == before


def test_the_held_folders_leave_no_trace_for_git_or_after_the_command(
    sandbox: SandboxedWorkspace, project: Path
) -> None:
    done = run_in(sandbox, "git status --short --untracked-files=all; git add -A && echo added")

    assert done.output == "added"
    assert sorted(p.name for p in project.iterdir()) == [".git"]


def test_the_git_folder_cannot_be_moved_away_and_replaced(sandbox: SandboxedWorkspace, project: Path) -> None:
    done = run_in(sandbox, "mv .git .git-old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit")

    assert done.exit_code != 0
    assert not (project / ".git-old").exists()
    assert not (project / ".git" / "hooks" / "pre-commit").exists()


def test_a_protected_file_made_during_the_session_is_read_only_for_the_next_command(
    sandbox: SandboxedWorkspace, project: Path
) -> None:
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_text("{}\n")  # an approved Write, between two commands

    run_in(sandbox, 'echo \'{"permissions": {"allow": ["Bash"]}}\' > .agentcli/settings.json')

    assert (project / ".agentcli" / "settings.json").read_text() == "{}\n"


def test_secret_places_look_empty_and_the_rest_of_home_is_readable(sandbox: SandboxedWorkspace, outside: Path) -> None:
    home = outside / "home"
    done = run_in(
        sandbox, f"cat {home}/.ssh/id_ed25519 {home}/.aws/credentials; ls -A {home}/.ssh; cat {home}/notes.txt"
    )

    assert "PRIVATE KEY" not in done.output and "AKIA-SECRET" not in done.output
    assert "ordinary" in done.output


def test_a_hidden_folder_holding_the_project_shows_only_the_project(outside: Path) -> None:
    """A batch's folder of task workspaces (or `denyRead: ["~"]` with the project at home): the
    task's own workspace is there and writable, its neighbours are not."""
    require_sandbox()
    batch = outside / "agentcli-batch-1234"
    mine, neighbour = batch / "task-a" / "workspace", batch / "task-b" / "workspace"
    for folder in (mine, neighbour):
        folder.mkdir(parents=True)
    (mine / "mine.txt").write_text("my task\n")
    (neighbour / "answer.txt").write_text("THE OTHER TASK'S SOLUTION\n")
    settings = SandboxSettings(enabled=True, deny_read=(str(batch),))

    with SandboxedWorkspace(mine, settings, home=outside / "home") as workspace:
        listed = run_in(workspace, f"ls -A {batch}")
        done = run_in(
            workspace,
            f"cat {neighbour}/answer.txt; cat mine.txt; echo written > new.txt; echo tampered > {neighbour}/answer.txt",
        )

    assert listed.output.split() == ["task-a"]
    assert "THE OTHER TASK'S SOLUTION" not in done.output
    assert "my task" in done.output
    assert (mine / "new.txt").read_text() == "written\n"
    assert (neighbour / "answer.txt").read_text() == "THE OTHER TASK'S SOLUTION\n"


def test_no_credentials_reach_a_command_s_environment(
    project: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_sandbox()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-000")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret000")
    monkeypatch.setenv("DEPLOY_PASSWORD", "hunter2")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/run/agent.sock")
    monkeypatch.setenv("HARMLESS", "visible")
    with SandboxedWorkspace(project, SandboxSettings(enabled=True), home=outside) as workspace:
        done = run_in(workspace, "env")

    assert "visible" in done.output
    for secret in ("sk-ant-secret-000", "ghp_secret000", "hunter2", "/run/agent.sock"):
        assert secret not in done.output


def test_a_unix_socket_of_the_machine_cannot_be_reached(sandbox: SandboxedWorkspace, project: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(project / "daemon.sock"))  # as the Docker socket or an agent's would be
        server.listen(1)
        server.setblocking(False)
        done = run_in(
            sandbox,
            f'{PYTHON} -c \'import socket; socket.socket(socket.AF_UNIX).connect("daemon.sock"); print("reached")\'',
        )
        with pytest.raises(BlockingIOError):
            server.accept()

    assert "reached" not in done.output


def test_a_command_cannot_make_namespaces_of_its_own_to_get_privileges_back(sandbox: SandboxedWorkspace) -> None:
    done = run_in(sandbox, "unshare --user --map-root-user --mount true && echo escaped")

    assert "escaped" not in done.output


def test_agentcli_s_own_programs_and_excluded_commands_run_outside(
    project: Path, outside: Path, precious: Path
) -> None:
    require_sandbox()
    settings = SandboxSettings(enabled=True, excluded_commands=("docker",))
    with SandboxedWorkspace(project, settings, home=outside, excluded=lambda c: c.startswith("docker")) as workspace:
        assert workspace.confines("make test") and not workspace.confines("docker ps")
        done = workspace.run(
            Command(["bash", "-c", f"echo changed > {precious}"], outside_sandbox=True), timeout=CEILING, cancel=NEVER
        )

    assert done.exit_code == 0
    assert precious.read_text() == "changed\n"


def test_agentcli_installed_under_tmp_stays_visible_inside_and_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout or virtual environment under /tmp (which the sandbox replaces with its own) is
    where the supervisor inside runs from: it is mounted read-only, the project itself stays writable."""
    venv = tmp_path / "venv"
    venv.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setattr(sys, "prefix", str(venv))

    layout = plan_layout(project.resolve(), SandboxSettings(enabled=True), tmp_path / "home", [])

    assert venv.resolve() in layout.read_only and project.resolve() in layout.writable
    assert not any(path == project.resolve() or project.resolve() in path.parents for path in own_install())
