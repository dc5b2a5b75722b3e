"""Write: create a file, or replace one the model has Read (atomically).

The file is reached through the workspace's folder handle (`Workspace.open_folder`) from the
path the gate checked: the old content, the guard's check and the replacement all go through
it. A path longer than the system takes (`limits`) is refused before any folder is made.
"""

from __future__ import annotations

import contextlib
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agentcli.access import Access
from agentcli.contracts import JSON, ToolContext, ToolResult
from agentcli.regular_file import NotRegularFile, kind_of
from agentcli.tools.base import BuiltinTool, ToolError
from agentcli.tools.diff import diff_texts
from agentcli.tools.guard import fingerprint, remember, require_fresh
from agentcli.tools.limits import clipped, too_long
from agentcli.tools.paths import shown
from agentcli.tools.textfile import decode, encode
from agentcli.workspace.contract import Folder


@dataclass(frozen=True)
class _Plan:
    old_text: str | None
    """The file's text now; None when the call creates it."""
    content: str
    """What to write (line endings adapted to the old file's)."""
    encoding: str
    mode: int | None
    """Permission bits for the result: the old file's; None for a new file (the default)."""


class WriteTool(BuiltinTool):
    name = "Write"
    description = (
        "Write a whole file: creates it (and missing parent folders) or replaces it. Replacing an "
        "existing file is refused unless you Read it in this session and it has not changed since. "
        "To change part of a file, use Edit instead. An existing file keeps its line endings and "
        "encoding. Returns lines and bytes written."
    )
    input_schema: JSON = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "File to write, e.g. `src/new_module.py`"},
            "content": {"type": "string", "description": "The complete new content"},
        },
        "required": ["file_path", "content"],
        "additionalProperties": False,
    }

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        return Access(writes=(ctx.resolve(str(tool_input["file_path"])),))

    def call(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        name = shown(ctx.resolve(tool_input["file_path"]), ctx.cwd)
        target = ctx.real_path(tool_input["file_path"])
        if problem := too_long(target):
            raise ToolError(f"Could not write {clipped(name)}: {problem} Nothing was written.")
        with contextlib.ExitStack() as stack:
            with _could_not_write(name, target):
                folder = stack.enter_context(ctx.workspace.open_folder(target.parent, "written", create=True))
            plan = self._plan(folder, target.name, tool_input["content"], name, ctx, guard=True)
            data = encode(plan.content, plan.encoding, name)
            if plan.old_text == plan.content:
                return ToolResult(f"{name} already has exactly this content; nothing written.", summary="No changes")
            with _could_not_write(name, target):
                info = folder.replace(target.name, data, plan.mode)
        remember(ctx, target, fingerprint(info, data))
        content, old_text = plan.content, plan.old_text
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        change = diff_texts(old_text or "", content, name, created=old_text is None)
        size = f"{_plural(lines, 'line')}, {_plural(len(data), 'byte')}"
        if old_text is None:
            return ToolResult(f"Created {name} ({size}).", summary=f"Created {name} ({size})", diff=change.diff)
        summary = change.describe("Overwrote", name)
        return ToolResult(f"{summary} ({size}).", summary=summary, diff=change.diff)

    def preview(self, tool_input: JSON, ctx: ToolContext) -> str | None:
        """The unified diff this call would make (for a permission prompt); None if it would fail.

        Writes nothing and skips the read-before-write guard (the call itself still checks it).
        """
        name = shown(ctx.resolve(tool_input["file_path"]), ctx.cwd)
        content: str = tool_input["content"]
        try:
            target = ctx.real_path(tool_input["file_path"])
            with ctx.workspace.open_folder(target.parent, "read") as folder:
                plan = self._plan(folder, target.name, content, name, ctx, guard=False)
        except FileNotFoundError:  # a folder on the way does not exist yet: the call creates it all
            plan = _Plan(None, content, "utf-8", None)
        except (ToolError, OSError):
            return None
        return diff_texts(plan.old_text or "", plan.content, name, created=plan.old_text is None).diff

    def _plan(self, folder: Folder, filename: str, content: str, name: str, ctx: ToolContext, *, guard: bool) -> _Plan:
        try:
            current = folder.read(filename)
        except NotRegularFile as error:
            raise ToolError(
                f"{name} exists and is {kind_of(error.mode)}, not a regular file; pick another path."
            ) from None
        if current is None:
            return _Plan(None, content, "utf-8", None)
        if guard:
            require_fresh(ctx, folder.path / filename, name, "Write", current)
        old = decode(current.data)
        if old.newline == "\r\n" and "\r\n" not in content:
            content = content.replace("\n", "\r\n")
        return _Plan(old.text, content, old.encoding, stat.S_IMODE(current.info.st_mode))


@contextlib.contextmanager
def _could_not_write(name: str, target: Path) -> Iterator[None]:
    """Creating folders or the file failed: say so, naming the folder when it was one on the way."""
    try:
        yield
    except OSError as error:
        where = f" ({error.filename})" if error.filename and error.filename != str(target) else ""
        raise ToolError(f"Could not write {name}: {error.strerror or error}{where}.") from None


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"
