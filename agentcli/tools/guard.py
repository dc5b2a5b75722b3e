"""The read-before-write guard: Edit and Write only touch files the model has seen as they are."""

from __future__ import annotations

from pathlib import Path

from agentcli.contracts import FileRecord, ToolContext
from agentcli.tools.base import ToolError
from agentcli.tools.paths import shown
from agentcli.tools.textfile import fingerprint


def remember(ctx: ToolContext, path: Path, record: FileRecord) -> None:
    """Note what `path` looks like now (after a Read, or after our own Edit/Write)."""
    ctx.read_files[path.resolve()] = record


def require_fresh(ctx: ToolContext, path: Path, tool: str) -> None:
    """Raise unless `path` was Read in this session and has not changed since."""
    key = path.resolve()
    name = shown(path, ctx.cwd)
    record = ctx.read_files.get(key)
    if record is None:
        raise ToolError(f"{name} has not been read in this session. Read it first, then call {tool} again.")
    info = key.stat()
    if (info.st_mtime_ns, info.st_size) == (record.mtime_ns, record.size):
        return
    current = fingerprint(key)
    if current.sha256 == record.sha256:  # touched but not changed
        ctx.read_files[key] = current
        return
    raise ToolError(
        f"{name} was modified since you read it (by the user or a command). Read it again, then call {tool} again."
    )
