"""`/rewind` (and Esc Esc on an empty prompt): back to before an earlier user turn.

`/rewind` lists the conversation's turns (each prompt and the files it changed) and asks which,
then what to restore: the code and the conversation, the conversation only, or the code only.
`/rewind N [both|conversation|code]` says it at once; `/rewind undo` puts back the files as
they were before the last code rewind. Files changed outside agentcli since that turn are shown
and restored only on a yes. After a conversation rewind, the turn's prompt is back in the input
line, to edit and send again. What a rewind cannot restore is said path by path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from agentcli.checkpoints.rewind import NOT_COVERED, CodePlan, TurnSummary, do_code, plan_code, undo_plan
from agentcli.safe_text import for_terminal

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentcli.repl.app import Repl

WHAT = {"1": "both", "2": "conversation", "3": "code", "both": "both", "conversation": "conversation", "code": "code"}
MAX_FILES_SHOWN = 6


def rewind(repl: Repl, args: str, ask: Callable[[str], str]) -> None:
    words = args.split()
    if words[:1] == ["undo"]:
        _code(repl, undo_plan(repl.session.checkpoints, repl.session.id), ask, "no code rewind to undo")
        return
    turns = repl.session.rewind_turns()
    if not turns:
        repl.console.print("[dim]Nothing to rewind yet: no turn of this conversation has been recorded.[/dim]")
        return
    choice = words[0] if words else ""
    if not choice:
        _show(repl, turns)
        choice = ask("Rewind to before which turn? Number (Enter to cancel): ")
        if not choice:
            return
    turn = next((t for t in turns if str(t.number) == choice), None)
    if turn is None:
        numbers = ", ".join(str(t.number) for t in turns)
        repl.console.print(f"No turn {choice} in this conversation: its turns are {numbers}.", style="yellow")
        return
    what = WHAT.get(words[1] if len(words) > 1 else "")
    if what is None:
        what = WHAT.get(ask("Restore 1) code and conversation  2) conversation only  3) code only (Enter cancels): "))
        if what is None:
            return
    if what != "conversation" and not _code(
        repl, plan_code(repl.session.checkpoints, repl.session.id, turn.number), ask, "no file changed since then"
    ):
        return
    if what != "code":
        repl.session.rewind_conversation(turn.number, code=what == "both")
        repl.last_context_tokens = repl.session.agent.context_tokens
        repl.console.print(f"[dim]The conversation is back to before turn {turn.number}.[/dim]")
        repl.prefill(turn.prompt)


def _show(repl: Repl, turns: list[TurnSummary]) -> None:
    table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
    for turn in turns:
        prompt = escape(for_terminal(" ".join(turn.prompt.split()))[:80])
        files = turn.files or []
        changed = ", ".join(escape(for_terminal(f)) for f in files[:MAX_FILES_SHOWN])
        if len(files) > MAX_FILES_SHOWN:
            changed += f" and {len(files) - MAX_FILES_SHOWN} more"
        table.add_row(f"{turn.number}.", prompt, f"[dim]{changed or 'no files changed'}[/dim]")
    repl.console.print(table)
    repl.console.print(f"[dim]{NOT_COVERED}[/dim]")


def _code(repl: Repl, plan: CodePlan | None, ask: Callable[[str], str], nothing: str) -> bool:
    """Restore the files `plan` planned, after a yes for files changed outside agentcli; False when cancelled."""
    console = repl.console
    if plan is None:
        console.print(f"[dim]Files: nothing to restore ({nothing}).[/dim]")
        return True
    if plan.outside:
        names = ", ".join(for_terminal(name) for name in plan.outside)
        console.print(f"Changed outside agentcli since then, and would be overwritten: {names}", style="yellow")
        if ask("Restore them too? [y/N] ").lower() not in ("y", "yes"):
            console.print("[dim]Nothing was changed.[/dim]")
            return False
    restored = do_code(repl.session.checkpoints, plan)
    listed = ", ".join(for_terminal(name) for name in restored.changed) or "none differed"
    console.print(f"Files restored: {listed}", style="dim", markup=False)
    for line in restored.not_restored:
        console.print(f"Not restored: {for_terminal(line)}", style="red", markup=False)
    return True
