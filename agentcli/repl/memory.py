"""Memory at the REPL prompt: `# text` adds a line to a memory file; `/memory` shows and edits them.

`# always run make lint` asks where the line goes (the project's `CLAUDE.md`, its
`CLAUDE.local.md`, or the user's own `$AGENTCLI_HOME/CLAUDE.md`; see `context.memory`) and
appends it there. `/memory` lists the instruction files loaded into the conversation (path,
what each is, size) and the memory files not created yet, and asks which to open in
`$VISUAL`/`$EDITOR`; `/memory N` opens the N-th at once. Either way the next user message
carries the changed file (the instructions reminder is re-sent when a file changed).
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from agentcli.context.instructions import InstructionFile
from agentcli.context.memory import MemoryNotWritten, memory_targets, remember
from agentcli.credentials import child_environment
from agentcli.regular_file import read_regular_file
from agentcli.safe_text import for_terminal

if TYPE_CHECKING:
    from agentcli.repl.app import Repl

Ask = Callable[[str], str]
CHOICES = {"1": 0, "2": 1, "3": 2, "p": 0, "project": 0, "l": 1, "local": 1, "u": 2, "user": 2}


def add_memory(repl: Repl, note: str, ask: Ask) -> None:
    """Ask where `note` goes and append it there; say where it went (or why it did not)."""
    context = repl.session.context
    targets = memory_targets(context.cwd, context.home)
    table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
    for number, target in enumerate(targets, 1):
        table.add_row(f"{number}.", f"{target.label}  [dim]{escape(_shown(target.path, repl))} · {target.shared}[/dim]")
    repl.console.print(f"Remember “{escape(for_terminal(note))}” in:", highlight=False)
    repl.console.print(table)
    choice = ask("Where? 1, 2 or 3 (Enter to cancel): ").lower()
    if not choice:
        repl.console.print("[dim]Nothing was remembered.[/dim]")
        return
    index = CHOICES.get(choice)
    if index is None:
        repl.console.print(f"No choice {choice!r}: nothing was remembered.", style="yellow", markup=False)
        return
    target = targets[index]
    try:
        remember(target, note)
    except MemoryNotWritten as error:
        repl.console.print(for_terminal(str(error)), style="red", markup=False)
        return
    repl.console.print(
        f"Added to {_shown(target.path, repl)}; the model is told with your next message.", style="dim", markup=False
    )


def memory_command(repl: Repl, args: str, ask: Ask) -> None:
    """`/memory`: the instruction files and memory files, and open one in the editor."""
    entries = _entries(repl)
    choice = args.strip()
    if not choice:
        table = Table("", "file", "what", "size", box=None)
        for number, (path, what, size) in enumerate(entries, 1):
            table.add_row(f"{number}.", escape(_shown(path, repl)), escape(for_terminal(what)), size)
        repl.console.print(table)
        choice = ask("Open which one in your editor? Number (Enter for none): ")
        if not choice:
            return
    if not choice.isdigit() or not 1 <= int(choice) <= len(entries):
        repl.console.print(f"No file number {choice}: pick one from 1 to {len(entries)}.", style="yellow", markup=False)
        return
    _edit(repl, entries[int(choice) - 1][0])


def _entries(repl: Repl) -> list[tuple[Path, str, str]]:
    """(path, what it is, size) of each instruction file loaded, then of each memory file not there yet."""
    context = repl.session.context
    loaded = context.instruction_files()
    entries = [(item.path, _what(item, repl), _size(item.path)) for item in loaded]
    known = {item.path for item in loaded}
    entries.extend(
        (target.path, f"{target.label}, not created yet", "")
        for target in memory_targets(context.cwd, context.home)
        if target.path not in known
    )
    return entries


def _what(item: InstructionFile, repl: Repl) -> str:
    if item.imported_by is not None:
        return f"{item.memory_type}, imported by {_shown(item.imported_by, repl)}"
    return f"{item.memory_type}: {item.kind}"


def _size(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError:
        return "unreadable"
    return f"{size:,} bytes" if size < 10_000 else f"{size / 1000:,.0f} kB"


def _edit(repl: Repl, path: Path) -> None:
    """Open `path` in $VISUAL or $EDITOR; say whether it changed (the next message carries a change)."""
    before = _contents(path)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        done = subprocess.run([*shlex.split(editor), str(path)], check=False, env=child_environment())
    except OSError as error:
        repl.console.print(f"Could not start the editor {editor!r}: {error.strerror}. Set $EDITOR.", style="red")
        return
    after = _contents(path)
    shown = _shown(path, repl)
    failed = f" (the editor exited with status {done.returncode})" if done.returncode else ""
    if after == before:
        said = f"{shown} {'unchanged' if after is not None else 'not written'}{failed}."
    elif after is None:
        said = f"{shown} was deleted{failed}; the model is told with your next message."
    else:
        said = f"{shown} changed{failed}: it will be sent with your next message."
    repl.console.print(said, style="dim", markup=False)


def _contents(path: Path) -> bytes | None:
    """The file's bytes; None when there is no such regular file (a FIFO is not waited on)."""
    try:
        return read_regular_file(path, None)
    except OSError:
        return None


def _shown(path: Path, repl: Repl) -> str:
    """Relative to the project when inside it; `~/…` in the home folder."""
    try:
        return str(path.relative_to(repl.session.cwd))
    except ValueError:
        pass
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)
