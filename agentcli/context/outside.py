"""Files outside the project that instructions or skills name with `@path`: read only with a yes.

"Outside" is judged on the real path (symlinks and `..` resolved) against the project: the
git work tree holding the working directory, or the working directory itself outside a
repository. (The user's own `$AGENTCLI_HOME/CLAUDE.md` and what it imports are theirs and
are never judged; see context/instructions.py.)

Answers are kept as real paths under `allowedExternalImports` and `deniedExternalImports`,
read from the user's settings and `.agentcli/settings.local.json` only. The checked-in
`.agentcli/settings.json` is ignored for them, so a repository cannot approve its own
imports. The REPL asks about the files not decided yet in one question and saves the answer
to settings.local.json. `agentcli run` has nobody to ask: it leaves them out and says so in
one notice, naming the files and how to allow them.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agentcli.errors import UsageError
from agentcli.permissions.persist import update_settings
from agentcli.setting_keys import setting
from agentcli.settings import Settings
from agentcli.skills.loader import project_roots

ALLOWED_KEY = setting("allowedExternalImports")
DENIED_KEY = setting("deniedExternalImports")

Notify = Callable[[str], None]


@dataclass(frozen=True)
class OutsideFile:
    path: Path
    """The real path."""
    mention: str
    """As written after the `@`, e.g. `~/notes.md`."""
    named_by: Path
    """The instruction file or skill that names it."""


class AsksAboutOutsideFiles(Protocol):
    def __call__(self, files: Sequence[OutsideFile], /) -> bool:
        """Ask once whether agentcli may read `files` and send them to the model; True for yes."""
        ...


def real_path(path: Path) -> Path:
    return Path(os.path.realpath(path))


def project_top(cwd: Path) -> Path:
    """The real path of the project: the git work tree's top, or `cwd` outside a repository."""
    return real_path(project_roots(cwd)[-1])


class OutsideFiles:
    """What may be read outside the project this session, and asking about the rest."""

    def __init__(
        self,
        project: Path,
        *,
        allowed: Iterable[Path] = (),
        denied: Iterable[Path] = (),
        save_to: Path | None = None,
        ask: AsksAboutOutsideFiles | None = None,
        on_notice: Notify = lambda text: None,
    ) -> None:
        self.project = real_path(project)
        self._allowed = {real_path(p) for p in allowed}
        self._denied = {real_path(p) for p in denied}
        self._left_out: set[Path] = set()
        """Left out without asking (nobody to ask), not to be announced again."""
        self.save_to = save_to
        """Where answers are remembered (.agentcli/settings.local.json); None: for this session only."""
        self.ask = ask
        """None means non-interactive: what is not decided is left out."""
        self.on_notice = on_notice
        self._lock = threading.RLock()

    @classmethod
    def for_session(
        cls,
        settings: Settings,
        cwd: Path,
        *,
        save_to: Path | None,
        ask: AsksAboutOutsideFiles | None,
        on_notice: Notify,
    ) -> OutsideFiles:
        """The answers in the user's and the local settings; UsageError when they are malformed."""
        found: dict[str, list[Path]] = {ALLOWED_KEY: [], DENIED_KEY: []}
        for _scope, path, data in settings.raw:  # the checked-in project file cannot set these (settings.OWN_KEYS)
            for key, paths in found.items():
                if key in data:
                    paths.extend(_paths(data[key], key, path))
        return cls(
            project_top(cwd),
            allowed=found[ALLOWED_KEY],
            denied=found[DENIED_KEY],
            save_to=save_to,
            ask=ask,
            on_notice=on_notice,
        )

    def may_read(self, path: Path) -> bool:
        """Inside the project, or approved."""
        real = real_path(path)
        with self._lock:
            return real == self.project or self.project in real.parents or real in self._allowed

    def settle(self, files: Sequence[OutsideFile]) -> bool:
        """Decide each file not decided yet: ask (and remember the answer), or with nobody to
        ask leave it out and say so. True when a file is newly allowed (it may import others)."""
        with self._lock:
            pending: dict[Path, OutsideFile] = {}
            for file in files:
                if not (self.may_read(file.path) or file.path in self._denied or file.path in self._left_out):
                    pending.setdefault(file.path, file)
            if not pending:
                return False
            if self.ask is None:
                self._left_out.update(pending)
                self.on_notice(self._left_out_notice(list(pending.values())))
                return False
            allow = self.ask(list(pending.values()))
            (self._allowed if allow else self._denied).update(pending)
            self._remember(list(pending), allow)
            return allow

    def note(self, mention: str, path: Path, verb: str = "imported") -> str:
        """Said in the text the model gets, where a file was left out."""
        return (
            f"@{mention} was not {verb}: it is outside the project and not approved ({real_path(path)}; "
            f'the user can allow it under "{ALLOWED_KEY}" in .agentcli/settings.local.json).'
        )

    def _left_out_notice(self, files: list[OutsideFile]) -> str:
        listing = "".join(f"\n  {f.path} (@{f.mention} in {f.named_by})" for f in files)
        example = json.dumps({ALLOWED_KEY: [str(f.path) for f in files]})
        where = self.save_to or ".agentcli/settings.local.json"
        return (
            f"Not sent to the model: files outside the project, named with @ and not approved:{listing}\n"
            f"To allow them, add their paths to {ALLOWED_KEY} in {where} (or in $AGENTCLI_HOME/settings.json "
            f"for every project), e.g. {example}, or start agentcli here and answer yes when it asks."
        )

    def _remember(self, paths: list[Path], allow: bool) -> None:
        if self.save_to is None:
            return
        add_key, drop_key = (ALLOWED_KEY, DENIED_KEY) if allow else (DENIED_KEY, ALLOWED_KEY)
        texts = [str(p) for p in paths]
        save_to = self.save_to

        def change(data: dict[str, Any]) -> None:
            kept = [str(p) for p in _paths(data.get(add_key, []), add_key, save_to)]
            data[add_key] = kept + [t for t in texts if t not in kept]
            if drop_key in data:
                data[drop_key] = [str(p) for p in _paths(data[drop_key], drop_key, save_to) if str(p) not in texts]

        try:
            update_settings(save_to, change)
        except (OSError, UsageError) as error:
            why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            self.on_notice(f"Could not save your answer to {save_to} ({why}); it holds for this session only.")


def _paths(value: Any, key: str, origin: Path) -> list[Path]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise UsageError(f"Settings file {origin}: {key} must be a list of paths (strings).")
    return [Path(item).expanduser() for item in value]
