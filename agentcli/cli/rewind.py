"""`agentcli rewind`: list a session's turns and checkpoints, or rewind its files and conversation, from a script.

- `agentcli rewind [--list] [-r ID | -c] [--json]`: the session's user turns (the most recent
  session's without `-r`), each with its prompt and the files it changed, and the space the
  project's checkpoints take;
- `agentcli rewind --to TURN [--code | --conversation] [--force]`: back to before user turn
  TURN: its files (`--code`), its conversation (`--conversation`, recorded in the transcript so
  `--continue` goes on from there), or both (neither flag). Files changed outside agentcli since
  that turn are listed and nothing is done (exit 1) unless `--force`;
- `agentcli rewind --undo [--force]`: the files as they were before the session's last code rewind.

Exit codes: 0 done; 1 a rewind refused or incomplete (files changed outside agentcli, files
that could not be restored: each is named); 2 a usage error (no such session or turn).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from agentcli.checkpoints.config import CheckpointConfig
from agentcli.checkpoints.rewind import NOT_COVERED, CodePlan, do_code, plan_code, rewind_record, summaries, undo_plan
from agentcli.checkpoints.shadow import CheckpointError
from agentcli.checkpoints.store import CheckpointStore
from agentcli.cli.commands import Values, echo
from agentcli.errors import UsageError
from agentcli.output.streams import write_err
from agentcli.safe_text import for_terminal
from agentcli.sessions.store import LoadedTranscript, find_session, latest_session, load_transcript
from agentcli.sessions.transcript import TranscriptWriter
from agentcli.settings import agentcli_home, load_settings

MAX_LISTED = 20
NOTHING = "no file changed since then"
"""Files named per turn in the text listing (all of them in --json)."""


def rewind_command(values: Values) -> int:
    try:
        return _rewind(values, Path(os.getcwd()))
    except UsageError as error:
        write_err(sys.stderr, f"Error: {error}")
        return error.exit_code
    except CheckpointError as error:
        write_err(sys.stderr, f"Error: {error}.")
        return 1


def _rewind(values: Values, cwd: Path) -> int:
    code_only, conversation_only = values["code"], values["conversation"]
    if code_only and conversation_only:
        raise UsageError("give --code or --conversation, not both (neither rewinds both).")
    if values["continue_session"] and values["resume"] is not None:
        raise UsageError("give --continue or --resume ID, not both.")
    acting = values["to"] is not None or values["undo"]
    if values["to"] is not None and values["undo"]:
        raise UsageError("give --to TURN or --undo, not both.")
    if not acting and (code_only or conversation_only or values["force"]):
        raise UsageError("--code, --conversation and --force go with --to TURN.")
    config = CheckpointConfig.from_settings(load_settings(cwd))
    info = find_session(cwd, values["resume"]) if values["resume"] else latest_session(cwd)
    loaded = load_transcript(info.path)
    store = config.store(cwd, agentcli_home())
    if values["undo"]:
        return _code(store, undo_plan(store, loaded.session_id), values["force"], "no code rewind to undo")[0]
    if values["to"] is None:
        return _list(store, loaded, as_json=values["json"])
    turn = _turn(values["to"], loaded, conversation=not code_only)
    if code_only:
        return _code(store, plan_code(store, loaded.session_id, turn), values["force"], NOTHING)[0]
    # the transcript first: a session open in another agentcli is refused before any file changes
    writer = TranscriptWriter.existing(loaded.path, lambda text: write_err(sys.stderr, f"Error: {text}"))
    code = 0
    try:
        if not conversation_only:
            code, restored = _code(store, plan_code(store, loaded.session_id, turn), values["force"], NOTHING)
            if not restored:
                return code  # refused: nothing was changed, the conversation neither
        writer.write(rewind_record(turn, code=not conversation_only, conversation=True))
        writer.sync()
    finally:
        writer.close()
    return echo(f"The conversation is back to before turn {turn}: `agentcli -c` goes on from there.") or code


def _turn(text: str, loaded: LoadedTranscript, *, conversation: bool) -> int:
    """The turn asked for, checked against the session's."""
    numbers = [turn.number for turn in loaded.turns]
    listed = ", ".join(str(n) for n in numbers) or "none"
    if not (text.isascii() and text.isdigit() and len(text) < 10) or not 1 <= int(text) <= max(loaded.last_turn, 1):
        raise UsageError(f"no turn {text!r} in session {loaded.session_id}: its turns are {listed}.")
    turn = int(text)
    if conversation and turn not in numbers:
        raise UsageError(
            f"turn {turn} is no longer in the conversation of session {loaded.session_id} (compacted or rewound "
            f"already); its turns are {listed}. `--code` restores its files alone."
        )
    return turn


def _code(store: CheckpointStore, plan: CodePlan | None, force: bool, nothing: str) -> tuple[int, bool]:
    """Restore the files `plan` planned: the exit code, and whether the rewind went ahead (False: refused)."""
    if plan is None:
        return echo(f"Files: nothing to restore ({nothing})."), True
    if plan.outside and not force:
        write_err(
            sys.stderr,
            "Error: these files were changed outside agentcli since that checkpoint, and restoring would "
            f"overwrite them: {_names(plan.outside)}. Nothing was changed; give --force to restore anyway.",
        )
        return 1, False
    restored = do_code(store, plan)
    code = echo(f"Files: restored {len(restored.changed)} ({_names(restored.changed) or 'none differed'}).")
    if restored.not_restored:
        write_err(sys.stderr, "Error: not restored: " + "; ".join(for_terminal(line) for line in restored.not_restored))
        return 1, True
    return code, True


def _list(store: CheckpointStore, loaded: LoadedTranscript, *, as_json: bool) -> int:
    turns = summaries(store, loaded.session_id, loaded.turns)
    space = store.repo.size() if store.repo.exists else 0
    if as_json:
        listing = {
            "session_id": loaded.session_id,
            "turns": [turn.as_json() for turn in turns],
            "checkpoint_bytes": space,
            "not_covered": NOT_COVERED,
        }
        return echo(json.dumps(listing, indent=2))
    lines = [f"Session {loaded.session_id}: {len(turns)} turns. Checkpoints of this project: {_size(space)}."]
    for turn in turns:
        when = turn.time[:16].replace("T", " ")
        lines.append(f"  {turn.number:>3}  {when}  {for_terminal(' '.join(turn.prompt.split()))[:100]}")
        if turn.files is None:
            lines.append("       changed no files")
        else:
            lines.append(f"       changed: {_names(turn.files)}")
    lines.append(NOT_COVERED)
    return echo("\n".join(lines))


def _names(paths: list[str]) -> str:
    shown = ", ".join(for_terminal(path) for path in paths[:MAX_LISTED])
    return shown + (f" and {len(paths) - MAX_LISTED} more" if len(paths) > MAX_LISTED else "")


def _size(space: int) -> str:
    return f"{space / 1_000_000:.1f} MB" if space >= 100_000 else f"{space / 1000:.0f} KB"
