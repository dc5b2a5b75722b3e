"""The shadow repository's objects, read and written without starting git: for a snapshot of a few paths.

A snapshot of the paths a turn declared writing (`ShadowRepo.snapshot_paths`) changes a few
entries of the last snapshot's tree. Starting git four times for that (add, write-tree,
commit-tree, update-ref) costs more than the work, so the objects are made here, in git's own
formats: a blob per changed file, the trees from its folder up to the root, and the commit.

Objects are stored loose (`objects/ab/cdef…`, zlib-compressed `<kind> <size>\\0<bytes>`), as
every git command agentcli runs in the shadow repository leaves them (it never packs: no gc, no
repack). An object that is not loose is not read here (`NotLoose`): the caller records the
whole tree instead. An object is written once, atomically (a temporary file renamed into place),
and never rewritten: its name is the SHA-1 of its bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

TREE_MODE = b"40000"
FILE_MODE = b"100644"
EXECUTABLE_MODE = b"100755"
LINK_MODE = b"120000"


class NotLoose(Exception):
    """An object is not stored loose (or is damaged): it cannot be read here."""


@dataclass(frozen=True)
class Entry:
    """One entry of a tree: its mode (as git writes it in a tree) and its object's id."""

    mode: bytes
    sha: str


Tree = dict[bytes, Entry]
"""A tree's entries by name."""


class LooseObjects:
    """The loose objects of the git repository at `git_dir`."""

    def __init__(self, git_dir: Path) -> None:
        self.folder = git_dir / "objects"
        self._trees: dict[str, Tree] = {}

    def read(self, sha: str, kind: str) -> bytes:
        """The bytes of object `sha`, which must be a `kind`; NotLoose when it cannot be read here."""
        try:
            raw = zlib.decompress((self.folder / sha[:2] / sha[2:]).read_bytes())
        except (OSError, zlib.error) as error:
            raise NotLoose(sha) from error
        header, _, data = raw.partition(b"\0")
        if header != f"{kind} {len(data)}".encode("ascii"):
            raise NotLoose(sha)
        return data

    def write(self, kind: str, data: bytes) -> str:
        """Store `data` as an object of `kind` (unless it is there already); its id."""
        raw = f"{kind} {len(data)}\0".encode("ascii") + data
        sha = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
        folder = self.folder / sha[:2]
        path = folder / sha[2:]
        if path.exists():
            return sha
        folder.mkdir(exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix="tmp_obj_")
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(zlib.compress(raw))
            os.chmod(temporary, 0o444)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return sha

    def tree(self, sha: str) -> Tree:
        """The entries of tree `sha` (a copy: the caller may change it)."""
        if sha not in self._trees:
            data = self.read(sha, "tree")
            entries: Tree = {}
            start = 0
            while start < len(data):
                space = data.index(b" ", start)
                nul = data.index(b"\0", space)
                entries[data[space + 1 : nul]] = Entry(data[start:space], data[nul + 1 : nul + 21].hex())
                start = nul + 21
            self._trees[sha] = entries
        return dict(self._trees[sha])

    def files_under(self, root: str, folder: bytes) -> list[bytes]:
        """The path of every file and link below `folder` in the tree `root` (none when it is not a folder there)."""
        entry = self.entry(root, folder)
        if entry is None or entry.mode != TREE_MODE:
            return []
        found: list[bytes] = []
        for name, below in self.tree(entry.sha).items():
            path = folder + b"/" + name
            found.extend(self.files_under(root, path) if below.mode == TREE_MODE else [path])
        return found

    def write_tree(self, entries: Tree) -> str:
        """Store a tree of `entries`, in git's order (a folder's name sorts as if it ended in `/`)."""
        ordered = sorted(entries.items(), key=lambda item: item[0] + (b"/" if item[1].mode == TREE_MODE else b""))
        return self.write("tree", b"".join(e.mode + b" " + name + b"\0" + bytes.fromhex(e.sha) for name, e in ordered))

    def entry(self, root: str, path: bytes) -> Entry | None:
        """The entry of `path` in the tree `root`, or None."""
        entry = Entry(TREE_MODE, root)
        for part in path.split(b"/"):
            if entry.mode != TREE_MODE:
                return None
            found = self.tree(entry.sha).get(part)
            if found is None:
                return None
            entry = found
        return entry

    def with_changes(self, root: str, changes: Mapping[bytes, Entry | None]) -> str:
        """The tree `root` with each path of `changes` set to its entry (None: removed); folders
        made or left empty are added or dropped. Its id (stored)."""
        by_parts = {tuple(path.split(b"/")): entry for path, entry in changes.items()}
        return self._changed(root, by_parts) or self.write_tree({})

    def _changed(self, sha: str | None, changes: Mapping[tuple[bytes, ...], Entry | None]) -> str | None:
        entries = self.tree(sha) if sha is not None else {}
        below: dict[bytes, dict[tuple[bytes, ...], Entry | None]] = {}
        for parts, entry in changes.items():
            if len(parts) == 1:
                if entry is None:
                    entries.pop(parts[0], None)
                else:
                    entries[parts[0]] = entry
            else:
                below.setdefault(parts[0], {})[parts[1:]] = entry
        for name, inner in below.items():
            current = entries.get(name)
            subtree = self._changed(current.sha if current is not None and current.mode == TREE_MODE else None, inner)
            if subtree is None:
                if current is not None and current.mode == TREE_MODE:
                    del entries[name]
            else:
                entries[name] = Entry(TREE_MODE, subtree)
        return self.write_tree(entries) if entries else None
