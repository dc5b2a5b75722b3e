"""Paths for people and models: short display names and "did you mean" suggestions."""

from __future__ import annotations

import contextlib
import difflib
import os
from pathlib import Path

from agentcli.contracts import ToolContext
from agentcli.path_text import shown_name
from agentcli.tools.base import ToolError
from agentcli.tools.ignore import IgnoreRules, walk_files

SUGGESTION_SCAN_LIMIT = 20_000
"""Files looked at when searching the project for a same-named file (keeps errors fast)."""


def shown(path: Path, cwd: Path) -> str:
    """`path` relative to the project when inside it, else absolute, spelled as a tool takes it
    back (a name that is not UTF-8 escaped: `agentcli.path_text`)."""
    try:
        rel = path.relative_to(cwd)
    except ValueError:
        return shown_name(str(path))
    return shown_name(str(rel)) if rel.parts else "."


def shown_str(path: str, cwd: str) -> str:
    """Like `shown`, for the plain strings searches produce."""
    if path.startswith(cwd + "/"):
        return shown_name(path[len(cwd) + 1 :])
    rel = os.path.relpath(path, cwd)
    return shown_name(path if rel == ".." or rel.startswith("../") else rel)


def not_found(path: Path, ctx: ToolContext, what: str = "File") -> ToolError:
    """An error naming the nearest existing paths (e.g. src/mian.py → src/main.py)."""
    if path.is_symlink():
        with contextlib.suppress(OSError):  # it may have been replaced since
            return ToolError(f"{shown(path, ctx.cwd)} is a broken symlink (it points to {os.readlink(path)}).")
    suggestions = suggest(path, ctx.cwd)
    message = f"{what} not found: {shown(path, ctx.cwd)}."
    if len(suggestions) == 1:
        return ToolError(f"{message} Did you mean {suggestions[0]}?")
    if suggestions:
        return ToolError(f"{message} Did you mean one of: {', '.join(suggestions)}?")
    return ToolError(f"{message} Nothing similar nearby; use Glob to look for it. Working directory: {ctx.cwd}")


def suggest(path: Path, cwd: Path, limit: int = 3) -> list[str]:
    """Existing paths close to `path`: fix each component in turn, then same-named files."""
    found = [shown(p, cwd) for p in _fuzzy_components(path)]
    for candidate in _same_name(path.name, cwd):
        if candidate not in found:
            found.append(candidate)
    return found[:limit]


def _fuzzy_components(path: Path) -> list[Path]:
    base = path
    rest: list[str] = []
    while not base.exists() and base.parent != base:
        rest.insert(0, base.name)
        base = base.parent
    if not rest or not base.is_dir():
        return []
    paths = [base]
    for part in rest:
        grown: list[Path] = []
        for folder in paths:
            if not folder.is_dir():
                continue
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            exact = [n for n in names if n.lower() == part.lower()]
            close = exact or difflib.get_close_matches(part, names, n=3, cutoff=0.6)
            grown.extend(folder / name for name in close)
        paths = grown[:6]
    return [p for p in paths if p.exists()]


def _same_name(name: str, cwd: Path) -> list[str]:
    if not name or not cwd.is_dir():
        return []
    exact: list[str] = []
    names: dict[str, list[str]] = {}
    rules = IgnoreRules()
    for scanned, (_, rel) in enumerate(walk_files(str(cwd), rules)):
        if scanned >= SUGGESTION_SCAN_LIMIT:
            break
        base = rel.rsplit("/", 1)[-1]
        if base == name:
            exact.append(rel)
        else:
            names.setdefault(base, []).append(rel)
    if exact:
        return [shown_name(rel) for rel in sorted(exact, key=lambda r: (r.count("/"), r))]
    close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.75)
    return [shown_name(rel) for base in close for rel in sorted(names[base])][:3]
