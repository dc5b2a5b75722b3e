"""What a summarising compaction carries into the new conversation besides the model's summary,
so the work goes on as the user asked for it.

A summary loses what matters most in a long session: the user's exact words, which files were
changed, what was being done. So the new first message also carries, each part within a token
budget (`Budgets`, scaled down for a small context window):

- every request the user typed, word for word (over budget: the first and the most recent ones,
  and a note saying how many in the middle are left to the summary);
- the files the conversation changed (declared writes, `worklog.WorkLog`; and, when checkpoints
  are on, every file its turns' checkpoints saw change: by a command, a sub-agent, a hook), each
  marked as still differing from how it was before its first change, or not;
- the current contents of the few files read or written most recently (`FILES_KEPT`), read
  again through the workspace (so a path swapped for a symlink is refused) with any credential
  agentcli holds redacted, as a Read's result is;
- the instructions of the skills run in the conversation (the most recent first);
- where the work stood: the last assistant message's words and its tool calls, each with how
  it ended (all of them answered, as the protocol requires).

The task list, the plan the user approved and the project's instructions come back as
reminders (`context.reminders`).
Each part is a `<system-reminder>` block: a later compaction leaves them out of what it
summarises (`compact.render_conversation`) and carries them afresh.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.context.reminders import system_reminder
from agentcli.contracts import JSON
from agentcli.conversation import (
    blocks_of,
    is_error_result,
    result_call_id,
    result_text,
    text_of,
    tool_calls,
    tool_results,
)
from agentcli.path_text import shown_name
from agentcli.regular_file import NotRegularFile
from agentcli.safe_text import for_conversation
from agentcli.sessions.worklog import ABSENT, UNREADABLE, Baseline
from agentcli.truncate import cap_middle
from agentcli.workspace.contract import Workspace, WorkspaceError

CHARS_PER_TOKEN = 4
REQUESTS_TOKENS = 8_000
FILES_KEPT = 5
"""Files whose current contents are carried (Claude Code re-reads up to five)."""
FILE_TOKENS = 5_000
FILES_TOKENS = 20_000
SKILLS_TOKENS = 10_000
CHANGED_LISTED = 200
"""Changed files named at most (the rest are counted)."""
FILE_READ_LIMIT = 1 << 20
"""Bytes read of a file to carry (its head: a bigger one is cut anyway)."""
CALL_INPUT_CHARS = 300
WORDS_CHARS = 2_000


@dataclass(frozen=True)
class Budgets:
    """Tokens each part may take."""

    requests: int = REQUESTS_TOKENS
    file: int = FILE_TOKENS
    files: int = FILES_TOKENS
    skills: int = SKILLS_TOKENS

    @classmethod
    def for_window(cls, context_window: int) -> Budgets:
        """The defaults, cut down so that together they stay under a quarter of a small window."""
        return cls(
            requests=min(REQUESTS_TOKENS, context_window // 16),
            file=min(FILE_TOKENS, context_window // 40),
            files=min(FILES_TOKENS, context_window // 10),
            skills=min(SKILLS_TOKENS, context_window // 20),
        )


@dataclass(frozen=True)
class TaskState:
    """What the conversation knows of its task when it is compacted."""

    requests: Sequence[str] = ()
    """The user's requests as typed, oldest first."""
    changed: Mapping[Path, Baseline] = field(default_factory=dict)
    """Files changed → how each was before its first change (`worklog.Baseline`)."""
    seen_changed: Mapping[Path, tuple[Baseline, Baseline]] | None = None
    """Files the checkpoints saw change in the conversation's turns, whichever tool changed them →
    how each was before the first turn that changed it and how it is now (git blob ids,
    `checkpoints.turns.TurnCheckpoints.changed_files`); None when checkpoints are off."""
    recent: Sequence[Path] = ()
    """Files read or written, the most recent first."""
    skills: Sequence[tuple[str, str]] = ()
    """(name, instructions) of the skills run, the most recent first."""
    plan: bool = False
    """The user approved a plan (it comes back as a reminder; noted here for the record)."""
    todos: int = 0
    """Items on the task list (it comes back as a reminder; counted here for the record)."""
    last_turn: Sequence[JSON] = ()
    """The last assistant message and the message answering its calls, if any."""


@dataclass(frozen=True)
class Carried:
    """The blocks for the new first message, and what they hold (for the transcript and the user)."""

    blocks: list[JSON]
    kept: JSON

    def describe(self) -> str:
        """What was carried, for the one line the user sees: "kept 3 requests word for word, …"."""
        kept = self.kept
        parts = []
        if requests := len(kept["requests"]):
            shown = requests - kept["requests_left_out"]
            some = f"{shown} of {_count(requests, 'request')}" if shown < requests else _count(requests, "request")
            parts.append(f"{some} word for word")
        if kept["todos"]:
            parts.append(f"the task list ({_count(kept['todos'], 'item')})")
        if changed := len(kept["changed_files"]) + len(kept.get("changed_seen", [])):
            parts.append(_count(changed, "changed file"))
        if files := len(kept["files"]):
            parts.append(_count(files, "file") + " re-read")
        if kept["skills"]:
            parts.append("skill " + ", ".join(f"/{name}" for name in kept["skills"]))
        if kept["plan"]:
            parts.append("the approved plan")
        return "kept " + ", ".join(parts) if parts else ""


def carry(
    state: TaskState,
    workspace: Workspace,
    fingerprint: Callable[[Path], Baseline],
    budgets: Budgets = Budgets(),
) -> Carried:
    """The parts of `state` to carry, within `budgets`; `fingerprint` tells how a file is now."""
    blocks: list[JSON] = []
    root = workspace.root
    requests, left_out = _requests(state.requests, budgets.requests * CHARS_PER_TOKEN)
    if requests:
        blocks.append(system_reminder(requests))
    skills, skill_names = _skills(state.skills, budgets.skills * CHARS_PER_TOKEN)
    if skills:
        blocks.append(system_reminder(skills))
    changed, seen_only = _changed(state, fingerprint, root)
    if changed:
        blocks.append(system_reminder(changed))
    files = _recent_files(state.recent, workspace, budgets)
    blocks.extend(system_reminder(text) for _, text in files)
    if words := _where_it_stood(state.last_turn):
        blocks.append(system_reminder(words))
    kept: JSON = {
        "requests": list(state.requests),
        "requests_left_out": left_out,
        "todos": state.todos,
        "changed_files": {str(path): baseline for path, baseline in state.changed.items()},
        "changed_seen": [str(path) for path in seen_only],
        "files": [str(path) for path, _ in files],
        "skills": skill_names,
        "plan": state.plan,
        "in_progress": bool(words),
    }
    return Carried(blocks, kept)


# ------------------------------------------------------------------ the parts


def _requests(requests: Sequence[str], budget: int) -> tuple[str, int]:
    """The requests, numbered, within `budget` characters: the first and as many of the latest as
    fit; and how many in the middle were left out."""
    if not requests:
        return "", 0
    each = [cap_middle(text, budget // 2) for text in requests]
    numbered = [f"[{n}] {text}" for n, text in enumerate(each, 1)]
    kept_tail: list[str] = []
    used = len(numbered[0])
    for item in reversed(numbered[1:]):
        if used + len(item) > budget:
            break
        kept_tail.insert(0, item)
        used += len(item)
    left_out = len(numbered) - 1 - len(kept_tail)
    middle = []
    if left_out:
        middle = [
            f"[requests 2 to {1 + left_out} ({left_out} of them) are left out here to save space; "
            "the summary covers them]"
        ]
    head = (
        "The user's requests in this conversation, oldest first, word for word. They still hold "
        "(constraints and preferences included) unless a later request changed them:"
    )
    return "\n\n".join([head, numbered[0], *middle, *kept_tail]), left_out


def _skills(skills: Sequence[tuple[str, str]], budget: int) -> tuple[str, list[str]]:
    """The skills' instructions, the most recent first, as many as fit in `budget` characters."""
    parts: list[str] = []
    names: list[str] = []
    used = 0
    for name, text in skills:
        part = f"/{name}:\n{cap_middle(text, budget // 2)}"
        if used + len(part) > budget:
            break
        parts.append(part)
        names.append(name)
        used += len(part)
    if not parts:
        return "", []
    head = "Skills run earlier in this conversation; their instructions still apply:"
    return "\n\n".join([head, *parts]), names


def _changed(state: TaskState, fingerprint: Callable[[Path], Baseline], root: Path) -> tuple[str, list[Path]]:
    """The list of the files changed ("" when none): the declared ones first, then those only the
    checkpoints saw (a command's, a sub-agent's), which are returned too."""
    declared = {_shown(path, root) for path in state.changed}
    seen_only = {
        path: states for path, states in (state.seen_changed or {}).items() if _shown(path, root) not in declared
    }
    total = len(state.changed) + len(seen_only)
    if not total:
        return "", []
    lines = [
        f"- {_shown(path, root)}: {_status(before, fingerprint(path))}"
        for path, before in itertools.islice(state.changed.items(), CHANGED_LISTED)
    ]
    lines += [
        f"- {_shown(path, root)}: {_status(before, now)}"
        for path, (before, now) in itertools.islice(seen_only.items(), CHANGED_LISTED - len(lines))
    ]
    if total > len(lines):
        lines.append(f"- and {total - len(lines):,} more")
    by = (
        "by any tool: edits, commands, sub-agents and hooks, as the checkpoints recorded them"
        if state.seen_changed is not None
        else "by Edit, Write and other tools that say so"
    )
    return f"Files changed in this conversation ({by}):\n" + "\n".join(lines), list(seen_only)


def _status(before: Baseline, now: Baseline) -> str:
    if before == UNREADABLE or now == UNREADABLE:
        return "changed (cannot tell whether it still differs: it could not be read)"
    if before == now:
        return "back as it was before the conversation changed it" if now is not ABSENT else "created, then removed"
    if before is ABSENT:
        return "created"
    if now is ABSENT:
        return "deleted"
    return "changed, still differs from before"


def _recent_files(recent: Sequence[Path], workspace: Workspace, budgets: Budgets) -> list[tuple[Path, str]]:
    """The current text of the newest few files, each and all within their budgets."""
    carried: list[tuple[Path, str]] = []
    left = budgets.files * CHARS_PER_TOKEN
    for path in recent:
        if len(carried) == FILES_KEPT or left <= 0:
            break
        text = _file_text(path, workspace)
        if text is None:
            continue
        body = cap_middle(text, min(budgets.file * CHARS_PER_TOKEN, left))
        carried.append(
            (
                path,
                f"The current content of {_shown(path, workspace.root)} (read again after the compaction; "
                f"you read or changed it recently):\n{body}",
            )
        )
        left -= len(body)
    return carried


def _file_text(path: Path, workspace: Workspace) -> str | None:
    """A text file's content now; None for a folder, a binary or an unreadable file."""
    try:
        with workspace.read_file(path) as opened:
            data = opened.stream.read(FILE_READ_LIMIT)
    except (OSError, NotRegularFile, WorkspaceError):
        return None
    if b"\0" in data[:8192]:
        return None
    return for_conversation(data.decode("utf-8", errors="replace"))  # as a Read's result would be


def _where_it_stood(last_turn: Sequence[JSON]) -> str:
    """The last assistant message's words and calls, each call with how it ended."""
    if not last_turn or last_turn[0]["role"] != "assistant":
        return ""
    content = blocks_of(last_turn[0])
    words = text_of(content).strip()
    calls = tool_calls(content)
    results = {result_call_id(r): r for m in last_turn[1:] for r in tool_results(blocks_of(m))}
    lines = ["Where the work stood when the conversation was compacted."]
    if words:
        lines.append(f"Your last message said:\n{cap_middle(words, WORDS_CHARS)}")
    if calls:
        lines.append("Its tool calls, and how each ended:")
        for call in calls:
            shown = cap_middle(json.dumps(call.input, ensure_ascii=False), CALL_INPUT_CHARS)
            lines.append(f"- {call.name} {shown}: {_outcome(results.get(call.id))}")
    return "\n".join(lines) if len(lines) > 1 else ""


def _outcome(result: JSON | None) -> str:
    if result is None:
        return "not answered"
    first = result_text(result).strip().split("\n", 1)[0][:200]
    return f"failed ({first})" if is_error_result(result) else "done"


def _shown(path: Path, root: Path) -> str:
    return shown_name(str(path.relative_to(root) if path.is_relative_to(root) else path))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"
