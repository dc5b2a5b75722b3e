"""The longest path and name this system takes: a tool that creates paths refuses longer ones.

Writing through a chain of folder handles (`beneath`) can create a path far longer than
PATH_MAX (a model asking for thousands of nested folders), which `rm -rf`, editors and most
programs then cannot handle. So a path to be created must be shorter than PATH_MAX in bytes,
and each name it adds at most NAME_MAX bytes, as `os.pathconf` reports them for the file
system the path is created in (Linux: 4096 and 255; the same where pathconf is missing).
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_PATH_MAX = 4096
DEFAULT_NAME_MAX = 255
SHOWN_CHARS = 60
"""Of a path or name too long to quote whole: this many characters from each end."""


def too_long(real: Path) -> str | None:
    """Why `real` (absolute) cannot be created here, as a sentence saying what to do; None when it can."""
    path_max = _limit(Path(real.anchor or "/"), "PC_PATH_MAX", DEFAULT_PATH_MAX)  # one for the whole system
    length = len(os.fsencode(real))
    if path_max is not None and length >= path_max:  # PATH_MAX counts the closing NUL
        return (
            f"its full path is {length:,} bytes long, and this system takes paths of at most {path_max - 1:,} "
            "(PATH_MAX): most programs, `rm -rf` among them, could not handle it. Use a shorter path, with "
            "fewer or shorter folder names."
        )
    existing = _nearest_existing(real)  # a short walk now: the path is under PATH_MAX
    name_max = _limit(existing, "PC_NAME_MAX", DEFAULT_NAME_MAX)
    for name in real.relative_to(existing).parts:
        size = len(os.fsencode(name))
        if name_max is not None and size > name_max:
            return (
                f"the name {clipped(name)} is {size:,} bytes long, and this file system takes names of at most "
                f"{name_max:,} (NAME_MAX). Use a shorter file or folder name."
            )
    return None


def clipped(text: str) -> str:
    """`text`, with its middle left out when it is too long to quote whole."""
    if len(text) <= 2 * SHOWN_CHARS + 1:
        return text
    return f"{text[:SHOWN_CHARS]}…{text[-SHOWN_CHARS:]}"


def _nearest_existing(real: Path) -> Path:
    """`real` or its nearest ancestor that exists (the file system a new path is made in)."""
    for path in (real, *real.parents):
        try:
            os.lstat(path)
        except OSError:  # missing, or itself too long to look at
            continue
        return path
    return Path(real.anchor or "/")


def _limit(path: Path, name: str, default: int) -> int | None:
    """`os.pathconf(path, name)`; `default` where it cannot say; None for no limit."""
    try:
        value = os.pathconf(path, name)
    except (AttributeError, OSError, ValueError):  # no pathconf (Windows), or not for this path
        return default
    return None if value < 0 else value
