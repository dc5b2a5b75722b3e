"""The shadow repository: a git repository agentcli owns, holding snapshots of a project's work tree.

It lives at `$AGENTCLI_HOME/checkpoints/<project slug>-<hash>/` (`context.paths.project_slug`)
and is used with the project as its work tree, so git's own machinery does the work: the
ignore rules (`.gitignore` files, `~/.config/git/ignore`), the stat cache of its index (only
files whose size or time changed are read again) and the untracked cache (only folders that
changed are listed again). Nothing of the user's repository is read or written: not its
`.git` (git never adds a `.git` path), not its index, refs, config, hooks, stash or reflog;
and the project need not be a git repository at all.

What a snapshot holds: every file git would add (`git add -A`), except what it says it
skipped: files over the size limit, files it cannot read, other git repositories inside the
project (a submodule, a nested clone: their own `.git` holds them). FIFOs, sockets and devices
are not files and are never listed. Symlinks are recorded as links (their target's text), never
followed. A snapshot of a tree that did not change adds nothing: it is the last one again.

git runs with no configuration but the shadow repository's (no system or global file, so no
filter, hook or fsmonitor the user or the project configured runs) and with every attribute
that would change bytes on the way in or out turned off (`info/attributes`), so what is
restored is byte for byte what was recorded. It runs as agentcli's own program, outside any
sandbox (the sandbox may not write `$AGENTCLI_HOME`), with the environment every child gets and
no GIT_* variable of the caller's.

Several threads and processes use one shadow repository: hold `locked()` around anything that
changes it (a flock on `agentcli.lock` beside it, and a thread lock).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import subprocess
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentcli.context.paths import project_slug
from agentcli.credentials import child_environment

MANY_PATHS = 200
"""Above this many changed paths, one `git add -A` over the tree is cheaper than naming each."""
GIT_TIMEOUT_S = 600.0
"""A checkpoint of a huge first tree takes a while; a hung git does not hang the session forever."""
CONFIG = """\
[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tautocrlf = false
\tquotePath = false
\tuntrackedCache = true
\tfsmonitor = false
\tlogAllRefUpdates = false
[index]
\tversion = 4
[gc]
\tauto = 0
"""
ATTRIBUTES = "* -text -filter -ident -working-tree-encoding\n"
"""`info/attributes` wins over the project's `.gitattributes`: bytes are stored as they are."""
_THREAD_LOCKS: dict[Path, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


class CheckpointError(Exception):
    """A checkpoint could not be recorded or read; the message says why and what to do."""


class GitMissing(CheckpointError):
    """git is not installed: no checkpoint can be recorded."""


@dataclass(frozen=True)
class Snapshot:
    """The work tree as recorded: its commit in the shadow repository, and what was left out."""

    commit: str
    skipped: tuple[str, ...] = ()
    """One line per path left out: `path: why` (over the size limit, unreadable, a repository of its own)."""


@dataclass(frozen=True)
class TreeChange:
    """One path that differs between two snapshots (`git diff-tree --raw`)."""

    path: bytes
    status: str
    """`A` only in the newer, `D` only in the older, `M` changed, `T` changed kind (file ↔ link)."""
    old_mode: str
    new_mode: str
    new_blob: str

    @property
    def name(self) -> str:
        return os.fsdecode(self.path)


def shadow_folder(root: Path, home: Path) -> Path:
    """Where the shadow repository of the project at `root` lives."""
    return home / "checkpoints" / project_slug(root)


class ShadowRepo:
    """The shadow repository of one project (see the module's docstring)."""

    def __init__(self, root: Path, folder: Path, max_file_bytes: int) -> None:
        self.root = root
        self.folder = folder
        self.max_file_bytes = max_file_bytes
        self._git_dir = folder / "git"

    # ------------------------------------------------------------------ locking and set-up

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the repository for this thread and process (waits for another that holds it)."""
        with _thread_lock(self.folder):
            try:
                self.folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # it holds the projects' files
                self.folder.mkdir(exist_ok=True, mode=0o700)
                fd = os.open(self.folder / "agentcli.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as error:
                raise CheckpointError(f"cannot create {self.folder}: {error.strerror or error}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._drop_stale_locks()
                self._ensure_initialised()
                yield
            finally:
                os.close(fd)  # releases the flock

    def _drop_stale_locks(self) -> None:
        """git's own lock files left by a git that was killed: with our lock held, nobody else is in there."""
        for name in ("index.lock", "HEAD.lock", "packed-refs.lock"):
            with contextlib.suppress(OSError):
                (self._git_dir / name).unlink()

    def _ensure_initialised(self) -> None:
        if (self._git_dir / "HEAD").exists():
            return
        self._git(["init", "-q", "--bare", "--template=", str(self._git_dir)], work_tree=False)
        try:
            (self._git_dir / "config").write_text(CONFIG, encoding="ascii")
            (self._git_dir / "info").mkdir(exist_ok=True)
            (self._git_dir / "info" / "attributes").write_text(ATTRIBUTES, encoding="ascii")
        except OSError as error:
            raise CheckpointError(f"cannot set up {self._git_dir}: {error.strerror or error}") from None

    @property
    def exists(self) -> bool:
        return (self._git_dir / "HEAD").exists()

    # ------------------------------------------------------------------ recording

    def snapshot(self, refs: Sequence[str] = ()) -> Snapshot:
        """Record the work tree as it is now and point `refs` at it (under `locked()`). Raises CheckpointError."""
        status = self._git(
            ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all"]
        )
        changed: list[bytes] = []
        left_out: list[bytes] = []
        skipped: list[str] = []
        for entry in status.split(b"\0"):
            if len(entry) < 4:
                continue
            path = entry[3:]
            why = self._why_left_out(path)
            if why is None:
                changed.append(path)
            else:
                left_out.append(path.rstrip(b"/"))
                skipped.append(f"{os.fsdecode(path.rstrip(b'/'))}: {why}")
        if left_out:  # an earlier, smaller version must not stand for what is there now
            self._git(["rm", "-r", "-q", "--cached", "--ignore-unmatch", *_from_stdin()], _literal(left_out))
        if len(changed) > MANY_PATHS:
            excluded = [b":(exclude,literal)" + path for path in left_out]
            self._git(["add", "-A", "--ignore-errors", *_from_stdin()], _nul_list([b":(top)", *excluded]))
        elif changed:
            self._git(["add", "-A", "--ignore-errors", *_from_stdin()], _literal(changed))
        tree = self._text(["write-tree"])
        message = _message(left_out)
        head = self._head()
        if head is not None and head[1:] == (tree, message):
            commit = head[0]
        else:
            commit = self._text(["commit-tree", tree, "-m", message])
            refs = ["HEAD", *refs]
        if refs:
            self.set_refs(dict.fromkeys(refs, commit))
        return Snapshot(commit, tuple(skipped))

    def _why_left_out(self, path: bytes) -> str | None:
        """Why `path` (as `git status` listed it) cannot be recorded, or None when it can."""
        if path.endswith(b"/"):
            return "a git repository of its own (a submodule or a clone): not recorded, its own .git holds it"
        full = os.path.join(os.fsencode(self.root), path)
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            return None  # removed: recorded as gone
        except OSError as error:
            return f"cannot be read ({error.strerror})"
        if stat.S_ISLNK(info.st_mode):
            return None
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_size > self.max_file_bytes:
            return f"{info.st_size:,} bytes, over the checkpoint size limit of {self.max_file_bytes:,}"
        try:
            os.close(os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC))
        except OSError as error:
            return f"cannot be read ({error.strerror})"
        return None

    def _head(self) -> tuple[str, str, str] | None:
        """The last snapshot's commit, tree and message, or None before the first."""
        found = self._git(["cat-file", "--batch"], b"HEAD\n")
        header, _, body = found.partition(b"\n")
        if header.split()[1:2] != [b"commit"] or not body.startswith(b"tree "):
            return None
        fields, _, message = body.partition(b"\n\n")
        tree = fields.split(b"\n", 1)[0].removeprefix(b"tree ").decode("ascii")
        text = message.decode("utf-8", "surrogateescape").rstrip("\n")
        return header.split(b" ", 1)[0].decode("ascii"), tree, text

    def left_out(self, commit: str) -> set[bytes]:
        """The paths a snapshot left out (its message says): a restore leaves them as they are."""
        body = self._git(["cat-file", "commit", commit]).partition(b"\n\n")[2]
        try:
            listed = json.loads(body.partition(b"\n\n")[2] or b"{}").get("left_out", [])
        except (ValueError, AttributeError):
            return set()
        return {os.fsencode(path) for path in listed if isinstance(path, str)}

    # ------------------------------------------------------------------ reading

    def changes(self, old: str, new: str) -> list[TreeChange]:
        """What differs between two snapshots, path by path."""
        if old == new:
            return []
        out = self._git(["diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", old, new])
        fields = out.split(b"\0")
        found: list[TreeChange] = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.decode("ascii", "replace").lstrip(":").split()
            if len(parts) == 5:
                found.append(TreeChange(path, parts[4][:1], parts[0], parts[1], parts[3]))
        return found

    def changed_names(self, old: str, new: str) -> list[str]:
        return [change.name for change in self.changes(old, new)]

    def blobs(self, shas: Sequence[str]) -> Iterator[tuple[str, bytes]]:
        """The bytes of each blob, in order (one `git cat-file --batch`)."""
        if not shas:
            return
        with subprocess.Popen(
            ["git", *self._options(), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self._environment(),
            cwd=self.folder,
        ) as proc:
            stdin, stdout = proc.stdin, proc.stdout
            assert stdin is not None and stdout is not None

            def ask() -> None:  # from a thread: git answers as it reads, and would block on a full pipe
                with contextlib.suppress(OSError):
                    stdin.write(b"".join(sha.encode("ascii") + b"\n" for sha in shas))
                    stdin.close()

            asking = threading.Thread(target=ask, name="checkpoint-blobs", daemon=True)
            asking.start()
            try:
                for sha in shas:
                    header = stdout.readline().split()
                    if len(header) != 3 or header[1] != b"blob":
                        raise CheckpointError(f"the shadow repository {self._git_dir} has lost the file {sha}")
                    data = stdout.read(int(header[2]))
                    stdout.read(1)
                    yield sha, data
            finally:
                if proc.poll() is None:
                    proc.kill()  # a reader that stopped early: git would wait on its full pipe forever
                asking.join()

    # ------------------------------------------------------------------ refs

    def set_refs(self, refs: dict[str, str]) -> None:
        """Point each ref at its commit (in one transaction)."""
        lines = b"".join(f"update {ref} {commit}\n".encode("ascii") for ref, commit in refs.items())
        self._git(["update-ref", "--stdin"], lines)

    def delete_refs(self, refs: Sequence[str]) -> None:
        if refs:
            self._git(["update-ref", "--stdin"], b"".join(f"delete {ref}\n".encode("ascii") for ref in refs))

    def refs(self, prefix: str) -> list[tuple[str, str, int]]:
        """(ref, commit, commit time) of every ref under `prefix`."""
        if not self.exists:
            return []
        out = self._text(["for-each-ref", "--format=%(refname) %(objectname) %(committerdate:unix)", prefix])
        found = []
        for line in out.splitlines():
            ref, commit, when = line.split(" ")
            found.append((ref, commit, int(when or 0)))
        return found

    def prune(self) -> None:
        """Delete what no ref reaches any more."""
        self._git(["prune", "--expire=now"])

    def size(self) -> int:
        """Bytes the shadow repository takes on disk."""
        total = 0
        for folder, _, files in os.walk(self.folder):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(folder, name)).st_blocks * 512
        return total

    # ------------------------------------------------------------------ running git

    def _options(self) -> list[str]:
        return ["-c", "safe.directory=*"]

    def _environment(self, work_tree: bool = True) -> dict[str, str]:
        env = {name: value for name, value in child_environment().items() if not name.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self._git_dir),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_AUTHOR_NAME="agentcli",
            GIT_AUTHOR_EMAIL="agentcli@localhost",
            GIT_COMMITTER_NAME="agentcli",
            GIT_COMMITTER_EMAIL="agentcli@localhost",
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="1",
            LC_ALL="C",
        )
        if work_tree:
            env["GIT_WORK_TREE"] = str(self.root)
        else:
            del env["GIT_DIR"]
        return env

    def _git(self, args: list[str], data: bytes | None = None, *, work_tree: bool = True) -> bytes:
        try:
            done = subprocess.run(
                ["git", *self._options(), *args],
                input=data if data is not None else b"",
                capture_output=True,
                env=self._environment(work_tree),
                cwd=self.root if work_tree else self.folder,
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except FileNotFoundError:
            raise GitMissing("git is not installed (checkpoints need it): install git to have them") from None
        except (OSError, subprocess.TimeoutExpired) as error:
            raise CheckpointError(f"git {args[0]} failed: {error}") from None
        if done.returncode != 0 and not (args[0] == "add" and done.returncode == 1):  # add: some files unreadable
            said = done.stderr.decode(errors="replace").strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed: {said[-1] if said else f'exit {done.returncode}'}")
        return done.stdout

    def _text(self, args: list[str]) -> str:
        return self._git(args).decode("utf-8", "surrogateescape").strip()


def _message(left_out: Sequence[bytes]) -> str:
    """A snapshot's commit message: what it left out, which a restore must not remove."""
    listed = json.dumps({"left_out": sorted(os.fsdecode(path) for path in left_out)}, ensure_ascii=True)
    return f"agentcli checkpoint\n\n{listed}"


def _from_stdin() -> list[str]:
    return ["--pathspec-from-file=-", "--pathspec-file-nul"]


def _literal(paths: Sequence[bytes]) -> bytes:
    return _nul_list([b":(top,literal)" + path for path in paths])


def _nul_list(items: Sequence[bytes]) -> bytes:
    return b"".join(item + b"\0" for item in items)


def _thread_lock(folder: Path) -> threading.Lock:
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(folder, threading.Lock())
