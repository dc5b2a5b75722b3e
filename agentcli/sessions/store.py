"""Reading transcripts back: load one (repairing what a killed run left), list and find a project's sessions."""

from __future__ import annotations

import contextlib
import datetime
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.bounds import TOKEN_COUNTS, shown
from agentcli.context.paths import is_this_project, legacy_state_dir, project_state_dir
from agentcli.contracts import JSON, FileRecord, Usage
from agentcli.conversation import block_text, is_text, text_block, user_message
from agentcli.errors import UsageError
from agentcli.executor import close_pending
from agentcli.loop import INTERRUPTED_MARKER
from agentcli.sessions.repair import Entry, readable_message, repair
from agentcli.sessions.transcript import recorded_cwd
from agentcli.tools.exit_plan import ApprovedPlan
from agentcli.tools.todo import Todo, parse_todos

SUFFIX = ".jsonl"
SESSION_ID = re.compile(r"[A-Za-z0-9_-]+")
MAX_ID_CHARS = 200
"""Longer than any session id (36) by far, and short enough to be a file name."""
_USAGE_KEYS = frozenset(Usage().as_dict())
KILLED = "Not finished: the session ended (the program was stopped) before this call returned."


@dataclass(frozen=True)
class TurnRecord:
    """A user turn of the conversation, as its transcript recorded it."""

    number: int
    """Its number (`ToolContext.user_turn`), which names its checkpoints."""
    prompt: str
    """The user's words."""
    time: str
    entry: int
    """The index of its prompt in `LoadedTranscript.entries`."""
    reminders: dict[str, str]
    """The reminder state before it (restored when the conversation is rewound to before it)."""
    todos: tuple[Todo, ...]
    """The task list before it."""
    plan: ApprovedPlan | None
    """The plan approved before it."""


@dataclass
class LoadedTranscript:
    """The state a resumed session starts from."""

    session_id: str
    path: Path
    system: list[JSON] | None = None
    """The system blocks last recorded (None if the header was lost)."""
    messages: list[JSON] = field(default_factory=list)
    """The current conversation: the messages after the last compaction boundary."""
    reminders: dict[str, str] = field(default_factory=dict)
    context_tokens: int = 0
    usage: Usage = field(default_factory=Usage)
    """Tokens the whole session used (before compactions too), as far as its records say
    (transcripts written before agentcli recorded usage have none)."""
    todos: tuple[Todo, ...] = ()
    """The task list last recorded (TodoWrite); it outlives compaction."""
    plan: ApprovedPlan | None = None
    """The plan the user last approved (ExitPlanMode); it outlives compaction."""
    read_files: dict[Path, FileRecord] = field(default_factory=dict)
    """What each file looked like when the model last read or wrote it (the Edit/Write guard)."""
    title: str = ""
    model: str | None = None
    provider: str | None = None
    """None in a transcript older than providers (it was Anthropic's)."""
    torn_lines: int = 0
    """Lines that did not parse (a torn last line from a killed run, a damaged line), skipped."""
    repaired: list[str] = field(default_factory=list)
    """What was wrong with the current conversation's lines and how it was mended, line by line
    (see `agentcli.sessions.repair`); empty for an undamaged transcript (a torn last line is not damage)."""
    entries: list[Entry] = field(default_factory=list, repr=False)
    """The readable messages since the last compaction boundary, before repair."""
    system_line: int | None = None
    """The line of the last record that set the system prompt."""
    turns: list[TurnRecord] = field(default_factory=list)
    """The user turns of the current conversation (since the last compaction, after rewinds), oldest first."""
    last_turn: int = 0
    """The highest turn number recorded (dropped turns included): the next turn is numbered after it."""

    def describe_repairs(self) -> str:
        """A notice for the user, or "" when nothing was repaired."""
        if not self.repaired:
            return ""
        return (
            f"The transcript {self.path} is damaged; the conversation was repaired to go on (the file keeps "
            f"its lines as they are): {'; '.join(self.repaired)}."
        )

    def repairs(self) -> list[JSON]:
        """Messages to append so the conversation is valid again: a killed run can leave tool
        calls without results. Earlier messages are never changed (that would break the cache)."""
        last = self.messages[-1] if self.messages else None
        if last is None or last["role"] != "assistant":
            return []
        results = close_pending(last, KILLED)
        if not results:
            return []
        return [user_message([*results, text_block(INTERRUPTED_MARKER)])]


@dataclass(frozen=True)
class SessionInfo:
    """One line of the session picker."""

    id: str
    path: Path
    modified: float
    title: str
    message_count: int

    def describe(self) -> str:
        when = datetime.datetime.fromtimestamp(self.modified).strftime("%Y-%m-%d %H:%M")
        return f"{when}  {self.message_count:>3} messages  {self.title or '(no prompt)'}"


def load_transcript(path: Path) -> LoadedTranscript:
    """Parse a transcript; what cannot be read is skipped and the conversation repaired, never fatal.
    UsageError when the file cannot be read."""
    loaded = LoadedTranscript(session_id=path.name.removesuffix(SUFFIX), path=path)
    try:
        with path.open("rb") as file:
            for number, raw in enumerate(file, start=1):
                record = _parse(raw)
                if record is None:
                    loaded.torn_lines += 1
                    if raw.endswith(b"\n"):  # not the torn last line a killed run leaves
                        loaded.repaired.append(f"line {number} could not be read and was left out")
                    continue
                _apply(loaded, record, number)
    except OSError as error:
        raise UsageError(f"Cannot read the transcript {path}: {error.strerror or error}") from None
    loaded.messages, notes = repair(loaded.entries)
    loaded.repaired.extend(notes)
    if loaded.system is None and loaded.system_line is not None:
        loaded.repaired.append(
            f"line {loaded.system_line}: the system prompt could not be read, so a fresh one is used"
        )
    return loaded


def transcript_records(path: Path) -> Iterator[JSON]:
    """Every record of a transcript that parses, in order (a torn or damaged line is skipped).
    OSError when the file cannot be read."""
    with path.open("rb") as file:
        for raw in file:
            record = _parse(raw)
            if record is not None:
                yield record


def _parse(raw: bytes) -> JSON | None:
    if not raw.endswith(b"\n"):
        return None
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON or not UTF-8, a number of over 4,300 digits
        return None
    return record if isinstance(record, dict) else None


def _apply(loaded: LoadedTranscript, record: JSON, line: int) -> None:
    kind = record.get("type")
    if kind in ("session", "system"):
        if kind == "session":
            loaded.session_id = str(record.get("session_id") or loaded.session_id)
            loaded.model = record["model"] if isinstance(record.get("model"), str) else None
            loaded.provider = record["provider"] if isinstance(record.get("provider"), str) else None
        loaded.system = _system_blocks(record.get("system"))
        loaded.system_line = line
    elif kind == "model":  # `/model` changed it: the session goes on with the new one
        if isinstance(record.get("model"), str) and isinstance(record.get("provider"), str):
            loaded.model, loaded.provider = record["model"], record["provider"]
    elif kind == "title":
        loaded.title = loaded.title or str(record.get("title") or "")
    elif kind == "rewind":
        _rewind(loaded, record, line)
    elif kind == "plan":
        plan, mode = record.get("plan"), record.get("mode")
        if isinstance(plan, str) and plan and mode in ("acceptEdits", "default"):  # a damaged one is skipped
            loaded.plan = ApprovedPlan(plan, mode)
    elif kind == "compact":
        loaded.turns = []
        loaded.entries = []
        loaded.repaired = []  # what was wrong before the boundary is no longer part of the conversation
        loaded.context_tokens = 0
    elif kind == "message":
        message = readable_message(record.get("message"))
        if message is None:
            loaded.repaired.append(f"line {line} holds no readable message and was left out")
        else:
            if message["role"] == "user" and TOKEN_COUNTS.holds(record.get("turn")) and record["turn"] > 0:
                _begin_turn(loaded, record, message)
            loaded.entries.append(Entry(line, message))
            if not loaded.title:
                loaded.title = _prompt_text(message)
        if TOKEN_COUNTS.holds(record.get("context_tokens")):
            loaded.context_tokens = record["context_tokens"]
    if isinstance(record.get("usage"), dict):
        loaded.usage.add(recorded_usage(record["usage"]))
    reminders = record.get("reminders")
    if isinstance(reminders, dict) and all(isinstance(v, str) for v in reminders.values()):
        loaded.reminders = reminders
    if isinstance(record.get("read_files"), dict):
        loaded.read_files.update(file_records(record["read_files"]))
    if "todos" in record:
        with contextlib.suppress(ValueError, TypeError):  # a hand-edited list is dropped, not fatal
            loaded.todos = parse_todos(record["todos"])


def _begin_turn(loaded: LoadedTranscript, record: JSON, message: JSON) -> None:
    """The prompt `message` (recorded in `record`) starts a user turn; what was before it is kept for a rewind."""
    number = int(record["turn"])
    turn = TurnRecord(
        number,
        _prompt_text(message),
        str(record.get("time") or ""),
        len(loaded.entries),
        loaded.reminders,
        loaded.todos,
        loaded.plan,
    )
    loaded.turns.append(turn)
    loaded.last_turn = max(loaded.last_turn, number)


def _rewind(loaded: LoadedTranscript, record: JSON, line: int) -> None:
    """A `rewind` record: the conversation goes back to before the turn it names."""
    if record.get("conversation") is not True:
        return  # the files only
    number = record.get("turn")
    index = next((i for i, turn in enumerate(loaded.turns) if turn.number == number), None)
    if index is None:
        loaded.repaired.append(
            f"line {line}: a rewind to turn {shown(number)}, which is not in the conversation, was ignored"
        )
        return
    turn = loaded.turns[index]
    del loaded.entries[turn.entry :]
    del loaded.turns[index:]
    loaded.reminders = turn.reminders
    loaded.todos = turn.todos
    loaded.plan = turn.plan
    loaded.read_files.clear()  # the model must read a file again before it edits it
    loaded.context_tokens = 0


def _system_blocks(value: object) -> list[JSON] | None:
    """The recorded system prompt, if it is one the API accepts (text blocks)."""
    if not isinstance(value, list) or not value:
        return None
    for block in value:
        if not isinstance(block, dict) or not is_text(block):
            return None
        if not isinstance(block.get("text"), str) or not block["text"]:
            return None
    return value


def recorded_usage(value: JSON) -> Usage:
    """A record's `usage`; a count that is not a whole number of tokens (`bounds.TOKEN_COUNTS`) is
    left out (counted as 0)."""
    counts = {key: count for key, count in value.items() if key in _USAGE_KEYS and TOKEN_COUNTS.holds(count)}
    return Usage(**counts)


def file_records(value: JSON) -> dict[Path, FileRecord]:
    """Guard records from a transcript line; malformed entries are skipped (the model just reads again)."""
    records: dict[Path, FileRecord] = {}
    for path, fields in value.items():
        with contextlib.suppress(TypeError, ValueError, KeyError, OverflowError):
            sha = fields["sha256"]  # null: only part of the file was read
            records[Path(path)] = FileRecord(
                int(fields["mtime_ns"]), int(fields["size"]), None if sha is None else str(sha)
            )
    return records


def _prompt_text(message: JSON) -> str:
    """For transcripts without a title record: the user's own words in the first message."""
    if message.get("role") != "user":
        return ""
    content = message["content"]
    if isinstance(content, str):
        return content
    texts = [block_text(b) for b in content if is_text(b)]  # a readable message: see readable_message
    own = [t for t in texts if not t.startswith("<system-reminder>")]
    return own[-1] if own else ""


# ------------------------------------------------------------------ a project's sessions


def session_files(cwd: Path) -> list[Path]:
    """The project's transcripts, most recently changed first: those in its own folder, and
    those of the older, possibly shared folder whose header records exactly this project."""
    own = _transcripts(project_state_dir(cwd))
    legacy = [path for path in _transcripts(legacy_state_dir(cwd)) if is_this_project(recorded_cwd(path), cwd)]
    dated: list[tuple[float, Path]] = []
    for path in own + legacy:
        with contextlib.suppress(OSError):  # removed meanwhile
            dated.append((path.stat().st_mtime, path))
    return [path for _, path in sorted(dated, reverse=True)]


def _transcripts(folder: Path) -> list[Path]:
    try:
        return [path for path in folder.iterdir() if path.suffix == SUFFIX]
    except OSError:  # no sessions yet
        return []


def session_info(path: Path) -> SessionInfo:
    loaded = load_transcript(path)
    title = " ".join(loaded.title.split())
    return SessionInfo(loaded.session_id, path, path.stat().st_mtime, title, len(loaded.messages))


def list_sessions(cwd: Path, limit: int = 20) -> list[SessionInfo]:
    """The `limit` most recent sessions of the project at `cwd` (only those are read; unreadable ones are left out)."""
    found = []
    for path in session_files(cwd)[:limit]:
        try:
            found.append(session_info(path))
        except (UsageError, OSError):
            continue
    return found


def latest_session(cwd: Path) -> SessionInfo:
    """The most recent session of this project; UsageError when there is none."""
    files = session_files(cwd)
    if not files:
        raise UsageError(f"No earlier session to continue in {cwd}.")
    return session_info(files[0])


def find_session(cwd: Path, ref: str) -> SessionInfo:
    """A session of this project by id (or an unambiguous prefix of one); UsageError listing
    recent sessions when there is no such session."""
    ref = ref.strip()
    if len(ref) <= MAX_ID_CHARS and SESSION_ID.fullmatch(ref):  # a longer one cannot even be a file name
        files = session_files(cwd)
        exact = [p for p in files if p.name == f"{ref}{SUFFIX}"]
        matches = exact[:1] or [p for p in files if p.name.startswith(ref)]
        if len(matches) == 1:
            return session_info(matches[0])
    shown = repr(ref) if len(ref) <= 60 else f"{ref[:40]!r}… (an id of {len(ref):,} characters; ids have 36)"
    recent = list_sessions(cwd, limit=10)
    if not recent:
        raise UsageError(f"No session {shown}: there are no sessions for {cwd} yet.")
    lines = "\n".join(f"  {info.id}  {info.describe()}" for info in recent)
    raise UsageError(f"No session {shown} in {cwd}. Recent sessions:\n{lines}")
