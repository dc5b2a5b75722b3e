"""The watcher that spares a whole-tree checkpoint its look at every file: in real work trees,
with real commands and the real inotify (Linux).

Each test records checkpoints through the store as a session does, and checks two things: the
checkpoint is exactly what git's look at the whole tree records (`whole`), and it was recorded
from what the watcher said (no whole look was needed), or, where the watcher cannot be sure
(an overflow, a limit, a `.gitignore` changed), by the whole look. A change the watcher missed
makes the first check fail.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.checkpoints import inotify
from agentcli.checkpoints.config import CheckpointConfig
from agentcli.checkpoints.shadow import CheckpointError, Snapshot
from agentcli.providers.scripted import ScriptedModel, reply, text
from tests.checkpoints.test_rewind_cli import bash, git, make_tree, tree
from tests.conftest import RunAgent, RunMain
from tests.sandbox_support import require_sandbox, run_in

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/sys/fs/inotify"), reason="inotify is Linux's")


class Recorder:
    """A project's checkpoints as one session records them, counting the whole looks."""

    def __init__(self, project: Path, home: Path, **watch: object) -> None:
        self.store = CheckpointConfig().store(project, home / ".agentcli")
        self.notices: list[str] = []
        self.whole_looks = 0
        self.step = 0
        with self.store.repo.locked():
            pass  # the shadow repository exists: the watcher starts at once
        self.store.watch(self.notices.append, **watch)  # type: ignore[arg-type]
        real = self.store.repo.snapshot

        def counted(refs: object = ()) -> Snapshot:
            self.whole_looks += 1
            return real(refs)  # type: ignore[arg-type]

        self._real = real
        self.store.repo.snapshot = counted  # type: ignore[method-assign]

    def record(self) -> tuple[str, int]:
        """A checkpoint: its commit, and how many whole looks it took."""
        self.step += 1
        looks = self.whole_looks
        with self.store.repo.locked():
            commit = self.store.record("s", f"{self.step:06d}", "before").commit
        return commit, self.whole_looks - looks

    def whole(self) -> str:
        """What git's look at the whole tree records now."""
        with self.store.repo.locked():
            return self._real().commit

    def changed(self, old: str, new: str) -> list[str]:
        return self.store.repo.changed_names(old, new)


@pytest.fixture
def recorder(project: Path, home: Path) -> Iterator[Recorder]:
    make_tree(project)
    recorder = Recorder(project, home)
    yield recorder
    recorder.store.close()


def sh(project: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=project, check=True, capture_output=True)


def branches(project: Path) -> None:
    """`main` as made by `make_tree`; `other` with app.py changed, README.md gone, a new lib/."""
    git(project, "add", "-A")
    git(project, "commit", "-qm", "main")
    git(project, "checkout", "-q", "-b", "other")
    sh(project, "echo 'x = 9' > src/app.py && git rm -q README.md && mkdir lib && echo new > lib/new.py")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "other")
    git(project, "checkout", "-q", "main")


SCENARIOS = {
    "rm -rf src": ("rm -rf src", ["src/app.py", "src/util.py"]),
    "sed -i": ("sed -i s/1/2/ src/app.py", ["src/app.py"]),
    "git checkout -b": ("git checkout -q -b feature other", ["README.md", "lib/new.py", "src/app.py"]),
    "a new folder made by a command": (
        "mkdir -p gen/deep/er && echo a > gen/deep/er/f.txt && echo b > gen/g.txt",
        ["gen/deep/er/f.txt", "gen/g.txt"],
    ),
    "a move out of the project, then a write there": (
        "mv src ../moved-out && echo later > ../moved-out/app.py && echo more > ../moved-out/new.py",
        ["src/app.py", "src/util.py"],
    ),
    "a folder moved out and another made in its place": (
        "mv src ../moved-out && mkdir src && echo n > src/new.py && echo later > ../moved-out/app.py",
        ["src/app.py", "src/new.py", "src/util.py"],
    ),
    "a move within, a file become a folder": (
        "mv src lib && rm README.md && mkdir -p README.md/in && echo r > README.md/in/x",
        ["README.md", "README.md/in/x", "lib/app.py", "lib/util.py", "src/app.py", "src/util.py"],
    ),
    "a folder replaced by a link, an executable bit": (
        "chmod +x src/util.py && mv src ../away && ln -s ../away src",
        ["src", "src/app.py", "src/util.py"],
    ),
    "a moved-in folder": ("mkdir ../in && echo i > ../in/i.py && mkdir ../in/sub && mv ../in src/in", ["src/in/i.py"]),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_command_s_changes_are_recorded_from_the_watcher_exactly(
    name: str, recorder: Recorder, project: Path
) -> None:
    command, expected = SCENARIOS[name]
    if "other" in command:
        branches(project)
    recorder.record()  # the first of the process: the whole tree
    before, looks = recorder.record()
    assert looks == 0  # from then on, the watcher says what changed

    sh(project, command)
    after, looks = recorder.record()

    assert looks == 0
    assert recorder.changed(before, after) == expected
    assert recorder.changed(after, recorder.whole()) == []


def test_nothing_changed_starts_no_git_at_all(
    recorder: Recorder, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder.record()
    first, _ = recorder.record()
    sh(project, "cat src/app.py > /dev/null && ls -R > /dev/null")  # reading changes nothing

    def no_git(*args: object, **kwargs: object) -> object:
        raise AssertionError(f"git started: {args}")

    monkeypatch.setattr(subprocess, "run", no_git)
    again, looks = recorder.record()
    monkeypatch.undo()

    assert again == first and looks == 0
    assert recorder.store.steps("s")[-1].before == first  # its ref written all the same


def test_a_file_changed_while_a_checkpoint_is_recorded_is_recorded_by_the_next(
    recorder: Recorder, project: Path
) -> None:
    """Sub-agents, another agentcli, the user: writing while checkpoints are recorded."""
    recorder.record()
    stop = threading.Event()

    def write() -> None:
        count = 0
        while not stop.is_set():
            count += 1
            (project / "src" / f"w{count % 7}.py").write_text(f"{count}\n")
            (project / "src" / "app.py").write_text(f"x = {count}\n")

    writer = threading.Thread(target=write)
    writer.start()
    try:
        for _ in range(5):
            recorder.record()
    finally:
        stop.set()
        writer.join()
    last, looks = recorder.record()

    assert looks == 0
    assert recorder.changed(last, recorder.whole()) == []


def test_two_agentcli_in_one_project_each_record_what_the_other_changed(
    recorder: Recorder, project: Path, home: Path
) -> None:
    other = Recorder(project, home)
    try:
        recorder.record()
        other.record()
        ours, _ = recorder.record()
        (project / "src" / "app.py").write_text("by the other\n")
        theirs, looks = other.record()
        assert looks == 0 and recorder.changed(ours, theirs) == ["src/app.py"]
        sh(project, "echo again >> src/app.py && rm src/util.py")

        mine, looks = recorder.record()

        assert looks == 0
        assert recorder.changed(ours, mine) == ["src/app.py", "src/util.py"]
        assert recorder.changed(mine, recorder.whole()) == []
    finally:
        other.store.close()


class LosingInotify(inotify.Inotify):
    """The real instance, whose queue can be made to overflow: what is queued is thrown away and
    `IN_Q_OVERFLOW` read instead, as the kernel does when its queue is full."""

    armed = False

    def read(self) -> Iterator[inotify.Event]:
        if not LosingInotify.armed:
            yield from super().read()
            return
        LosingInotify.armed = False
        while list(super().read()):
            pass  # lost
        yield inotify.Event(-1, inotify.Q_OVERFLOW, 0, b"")


def test_an_overflow_makes_the_next_checkpoint_look_at_the_whole_tree(project: Path, home: Path) -> None:
    make_tree(project)
    recorder = Recorder(project, home, make_inotify=LosingInotify)
    try:
        recorder.record()
        before, _ = recorder.record()
        (project / "src" / "app.py").write_text("lost in the overflow\n")
        os.mkdir(project / "made")
        (project / "made" / "f.txt").write_text("in a folder the watcher never saw made\n")
        LosingInotify.armed = True

        after, looks = recorder.record()

        assert looks == 1
        assert recorder.changed(before, after) == ["made/f.txt", "src/app.py"]
        (project / "made" / "g.txt").write_text("watched again\n")
        again, looks = recorder.record()
        assert looks == 0  # set up again at once: the next one is sure
        assert recorder.changed(after, again) == ["made/g.txt"]
    finally:
        recorder.store.close()


class LimitedInotify(inotify.Inotify):
    """The real instance under a watch limit of two folders."""

    def add_watch(self, path: bytes, mask: int = inotify.FOLDER_MASK) -> int:
        if len(self.__dict__.setdefault("watched", set())) >= 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.__dict__["watched"].add(path)
        return super().add_watch(path, mask)


def test_at_the_watch_limit_checkpoints_look_at_the_whole_tree_and_say_how_to_raise_it(
    project: Path, home: Path
) -> None:
    make_tree(project)
    for folder in ("a", "b", "c"):
        (project / folder).mkdir()
        (project / folder / "f.txt").write_text("1\n")
    recorder = Recorder(project, home, make_inotify=LimitedInotify)
    try:
        recorder.record()
        before, looks = recorder.record()
        assert looks == 1
        (project / "c" / "f.txt").write_text("2\n")

        after, looks = recorder.record()

        assert looks == 1 and recorder.changed(before, after) == ["c/f.txt"]
        assert len(recorder.notices) == 1
        assert "fs.inotify.max_user_watches" in recorder.notices[0]
        assert "sudo sysctl fs.inotify.max_user_watches=" in recorder.notices[0]
    finally:
        recorder.store.close()


def test_a_gitignore_changed_makes_the_files_it_stops_ignoring_recorded(recorder: Recorder, project: Path) -> None:
    (project / ".gitignore").write_text("build/\n")
    (project / "build").mkdir()
    (project / "build" / "out.txt").write_text("1\n")
    recorder.record()
    before, looks = recorder.record()
    assert looks == 0 and "build/out.txt" not in recorder.changed(before, recorder.whole())
    (project / "build" / "out.txt").write_text("2\n")  # ignored, unwatched: nothing to record
    _, looks = recorder.record()
    assert looks == 0
    (project / ".gitignore").write_text("")

    after, _ = recorder.record()

    assert recorder.changed(before, after) == [".gitignore", "build/out.txt"]
    (project / "build" / "out.txt").write_text("3\n")
    again, looks = recorder.record()
    assert looks == 0 and recorder.changed(after, again) == ["build/out.txt"]  # watched now


@pytest.mark.parametrize("moved", ["the project", "the folder above it", "the project deleted"])
def test_the_project_moved_away_and_another_put_in_its_place(moved: str, tmp_path: Path, home: Path) -> None:
    """Moving the folder above the project tells the project's own watch nothing: the watcher
    checks that the project's path still leads to the folder it watches."""
    project = tmp_path / "above" / "project"
    project.mkdir(parents=True)
    make_tree(project)
    recorder = Recorder(project, home)
    try:
        recorder.record()
        recorder.record()
        away = project.parent if moved == "the folder above it" else project
        away.rename(away.with_name("moved"))
        if moved == "the project deleted":
            with pytest.raises(CheckpointError, match="is gone"):
                recorder.record()  # said as a notice by the session; the turn goes on
            shutil.rmtree(away.with_name("moved"))
            project.mkdir()
            make_tree(project)
        else:
            shutil.copytree(away.with_name("moved"), away, symlinks=True)
        (project / "src" / "app.py").write_text("in the new folder\n")

        after, looks = recorder.record()

        assert looks == 1 and recorder.changed(after, recorder.whole()) == []
        assert tree(project)["src/app.py"] == "in the new folder\n"
        (project / "README.md").write_text("watched again\n")
        again, looks = recorder.record()
        assert looks == 0 and recorder.changed(after, again) == ["README.md"]
    finally:
        recorder.store.close()


def test_a_sandboxed_command_s_changes_are_seen(recorder: Recorder, project: Path) -> None:
    """bubblewrap binds the project into the sandbox: the same folders, the same inotify events."""
    require_sandbox()
    from agentcli.workspace.sandbox_settings import SandboxSettings
    from agentcli.workspace.sandboxed import SandboxedWorkspace

    with SandboxedWorkspace(project, SandboxSettings(enabled=True)) as workspace:
        recorder.record()
        before, _ = recorder.record()
        done = run_in(workspace, "sed -i s/1/2/ src/app.py && rm README.md && mkdir -p gen/x && echo f > gen/x/f")
        assert done.exit_code == 0, done

        after, looks = recorder.record()

    assert looks == 0
    assert recorder.changed(before, after) == ["README.md", "gen/x/f", "src/app.py"]
    assert recorder.changed(after, recorder.whole()) == []


def test_a_run_records_its_command_s_changes_from_the_watcher_and_rewinds_them(
    model: ScriptedModel,
    run_agent: RunAgent,
    run_main: RunMain,
    project: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_tree(project)
    with CheckpointConfig().store(project, home / ".agentcli").repo.locked():
        pass  # an earlier session made it: the watcher starts with the session
    from agentcli.checkpoints.shadow import ShadowRepo

    looks: list[int] = []
    real = ShadowRepo.snapshot

    def counted(self: ShadowRepo, refs: object = ()) -> Snapshot:
        looks.append(1)
        return real(self, refs)  # type: ignore[arg-type]

    monkeypatch.setattr(ShadowRepo, "snapshot", counted)
    model.script(reply(bash("rm -rf src && mkdir gen && echo g > gen/g.txt", "toolu_1")), reply(text("done")))

    assert run_agent("tidy", permission_mode="bypassPermissions").returncode == 0

    assert len(looks) == 1  # the turn's `before` (the process's first); its end, from the watcher
    assert run_main("rewind", "--to", "1", "--code").returncode == 0
    assert tree(project) == {"README.md": "hello\n", "src/app.py": "x = 1\n", "src/util.py": "def f():\n    return 1\n"}


def test_a_project_reached_through_a_link_is_watched(tmp_path: Path, home: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    make_tree(real)
    link = tmp_path / "link"
    link.symlink_to(real)
    recorder = Recorder(link, home)
    try:
        recorder.record()
        before, _ = recorder.record()
        sh(link, "echo 'x = 5' > src/app.py")

        after, looks = recorder.record()

        assert looks == 0 and recorder.changed(before, after) == ["src/app.py"]
    finally:
        recorder.store.close()
