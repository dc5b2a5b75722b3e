"""Reading transcripts back: load one (repairing what a killed run left), list and find a project's sessions."""

from __future__ import annotations

import contextlib
import datetime
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.context.paths import is_this_project, legacy_state_dir, project_state_dir
from agentcli.contracts import JSON, FileRecord
from agentcli.errors import UsageError
from agentcli.executor import close_pending
from agentcli.loop import INTERRUPTED_MARKER
from agentcli.sessions.transcript import recorded_cwd
from agentcli.tools.todo import Todo, parse_todos

SUFFIX = ".jsonl"
SESSION_ID = re.compile(r"[A-Za-z0-9_-]+")
KILLED = "Not finished: the session ended (the program was stopped) before this call returned."


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
    todos: tuple[Todo, ...] = ()
    """The task list last recorded (TodoWrite); it outlives compaction."""
    read_files: dict[Path, FileRecord] = field(default_factory=dict)
    """What each file looked like when the model last read or wrote it (the Edit/Write guard)."""
    title: str = ""
    model: str | None = None
    torn_lines: int = 0
    """Lines that did not parse (a torn last line from a killed run), skipped."""

    def repairs(self) -> list[JSON]:
        """Messages to append so the conversation is valid again: a killed run can leave tool
        calls without results. Earlier messages are never changed (that would break the cache)."""
        last = self.messages[-1] if self.messages else None
        if last is None or last["role"] != "assistant":
            return []
        results = close_pending(last, KILLED)
        if not results:
            return []
        return [{"role": "user", "content": [*results, {"type": "text", "text": INTERRUPTED_MARKER}]}]


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
    """Parse a transcript; unparsable lines (a torn last line) are skipped, never fatal.
    UsageError when the file cannot be read."""
    loaded = LoadedTranscript(session_id=path.name.removesuffix(SUFFIX), path=path)
    try:
        with path.open("rb") as file:
            for raw in file:
                record = _parse(raw)
                if record is None:
                    loaded.torn_lines += 1
                    continue
                _apply(loaded, record)
    except OSError as error:
        raise UsageError(f"Cannot read the transcript {path}: {error.strerror or error}") from None
    return loaded


def _parse(raw: bytes) -> JSON | None:
    if not raw.endswith(b"\n"):
        return None
    try:
        record = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) else None


def _apply(loaded: LoadedTranscript, record: JSON) -> None:
    kind = record.get("type")
    if kind == "session":
        loaded.session_id = str(record.get("session_id") or loaded.session_id)
        loaded.model = record.get("model")
        loaded.system = record.get("system")
    elif kind == "system":
        loaded.system = record.get("system")
    elif kind == "title":
        loaded.title = loaded.title or str(record.get("title") or "")
    elif kind == "compact":
        loaded.messages = []
        loaded.context_tokens = 0
    elif kind == "message":
        message = record.get("message")
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return
        loaded.messages.append(message)
        if "context_tokens" in record:
            loaded.context_tokens = int(record["context_tokens"])
    if isinstance(record.get("reminders"), dict):
        loaded.reminders = record["reminders"]
    if isinstance(record.get("read_files"), dict):
        loaded.read_files.update(file_records(record["read_files"]))
    if "todos" in record:
        with contextlib.suppress(ValueError):  # a hand-edited list is dropped, not fatal
            loaded.todos = parse_todos(record["todos"])
    if not loaded.title and kind == "message":
        loaded.title = _prompt_text(record["message"])


def file_records(value: JSON) -> dict[Path, FileRecord]:
    """Guard records from a transcript line; malformed entries are skipped (the model just reads again)."""
    records: dict[Path, FileRecord] = {}
    for path, fields in value.items():
        with contextlib.suppress(TypeError, ValueError, KeyError):
            sha = fields["sha256"]  # null: only part of the file was read
            records[Path(path)] = FileRecord(
                int(fields["mtime_ns"]), int(fields["size"]), None if sha is None else str(sha)
            )
    return records


def _prompt_text(message: JSON) -> str:
    """For transcripts without a title record: the user's own words in the first message."""
    if message.get("role") != "user":
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    texts = [b.get("text", "") for b in content or [] if b.get("type") == "text"]
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
    if SESSION_ID.fullmatch(ref):
        files = session_files(cwd)
        exact = [p for p in files if p.name == f"{ref}{SUFFIX}"]
        matches = exact[:1] or [p for p in files if p.name.startswith(ref)]
        if len(matches) == 1:
            return session_info(matches[0])
    recent = list_sessions(cwd, limit=10)
    if not recent:
        raise UsageError(f"No session {ref!r}: there are no sessions for {cwd} yet.")
    lines = "\n".join(f"  {info.id}  {info.describe()}" for info in recent)
    raise UsageError(f"No session {ref!r} in {cwd}. Recent sessions:\n{lines}")
