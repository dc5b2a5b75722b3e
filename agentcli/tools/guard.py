"""The read-before-write guard: Edit and Write only touch files the model has seen as they are.

Records are keyed by the file's real path and taken from the open handle the tool read or
wrote through (fstat and the bytes), never by looking the name up again. A file read only in
part has no whole-file hash: it counts as unchanged while its mtime and size are, and any
change to either is refused.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from agentcli.contracts import FileRecord, ToolContext
from agentcli.tools.base import ToolError
from agentcli.workspace.contract import Snapshot


def fingerprint(info: os.stat_result, data: bytes | None) -> FileRecord:
    """What the guard compares: mtime and size from `info`, and the hash of `data` (the whole file, if known)."""
    sha = hashlib.sha256(data).hexdigest() if data is not None else None
    return FileRecord(info.st_mtime_ns, info.st_size, sha)


def remember(ctx: ToolContext, real: Path, record: FileRecord) -> None:
    """Note what the file at `real` looks like now (after a Read, or after our own Edit/Write);
    the transcript records it with the turn's results."""
    ctx.read_files.remember(real, record)


def require_fresh(ctx: ToolContext, real: Path, name: str, tool: str, current: Snapshot) -> None:
    """Raise unless the file was Read in this session and `current` shows it has not changed since."""
    record = ctx.read_files.get(real)
    if record is None:
        raise ToolError(
            f"{name} has not been read in this session. Read it first, then call {tool} again.", failure="not_read"
        )
    if (current.info.st_mtime_ns, current.info.st_size) == (record.mtime_ns, record.size):
        return
    now = fingerprint(current.info, current.data)
    if record.sha256 is not None and now.sha256 == record.sha256:  # touched but not changed
        remember(ctx, real, now)
        return
    raise ToolError(
        f"{name} was modified since you read it (by the user or a command). Read it again, then call {tool} again.",
        failure="stale",
    )
