"""Saving "don't ask again" rules to .agentcli/settings.local.json, atomically.

Other keys and rules in the file are kept; a concurrent writer never sees a half-written
file (write to a temporary file in the same folder, fsync, rename over).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agentcli.errors import UsageError
from agentcli.settings import read_settings_file


def add_allow_rules(path: Path, rules: Sequence[str]) -> list[str]:
    """Append `rules` to permissions.allow in `path` (created if missing); returns the ones added."""
    return change_rules(path, "allow", add=rules)


def change_rules(path: Path, behavior: str, *, add: Sequence[str] = (), remove: Sequence[str] = ()) -> list[str]:
    """Add and remove rules in permissions.<behavior> of `path`; returns the rules that changed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked_beside(path):
        data: dict[str, Any] = read_settings_file(path) or {}
        block = data.setdefault("permissions", {})
        if not isinstance(block, dict):
            raise UsageError(f'Settings file {path}: "permissions" must be an object.')
        rules = block.setdefault(behavior, [])
        if not isinstance(rules, list):
            raise UsageError(f"Settings file {path}: permissions.{behavior} must be a list of rules.")
        added = [rule for rule in dict.fromkeys(add) if rule not in rules]
        removed = [rule for rule in dict.fromkeys(remove) if rule in rules]
        if added or removed:
            block[behavior] = [rule for rule in rules if rule not in removed] + added
            write_json_atomically(path, data)
        return added + removed


def add_allowed_domain(path: Path, host: str) -> bool:
    """Append `host` to sandbox.network.allowedDomains in `path` (created if missing); False when it was there."""
    added = False

    def change(data: dict[str, Any]) -> None:
        nonlocal added
        sandbox = data.setdefault("sandbox", {})
        network = sandbox.setdefault("network", {}) if isinstance(sandbox, dict) else None
        domains = network.setdefault("allowedDomains", []) if isinstance(network, dict) else None
        if not isinstance(domains, list):
            raise UsageError(f"Settings file {path}: sandbox.network.allowedDomains must be a list of host names.")
        if host not in domains:
            domains.append(host)
            added = True

    update_settings(path, change)
    return added


def update_settings(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Read the settings file `path` (created if missing), let `change` edit its object in
    place, and write it back atomically, under the same lock as the rules."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked_beside(path):
        data: dict[str, Any] = read_settings_file(path) or {}
        change(data)
        write_json_atomically(path, data)


def write_json_atomically(path: Path, data: Any) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def locked_beside(path: Path) -> Iterator[None]:
    """Serialise read-modify-write of `path` between agentcli processes and threads (best effort
    where flock exists): the lock is held on `path`'s folder, so no stray lock file is left."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
