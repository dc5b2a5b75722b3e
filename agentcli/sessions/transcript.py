"""Writing a session's transcript: one JSON object per line, appended as the conversation grows.

The file is `$AGENTCLI_HOME/projects/<project slug>/<session id>.jsonl`. Every record has
`type` first (so a reader can tell records apart without parsing them) and a `time`:

- `session`: first line. `session_id`, `version`, `cwd`, `provider` (`agentcli.providers`;
  absent in older files: anthropic), `model` (without a provider prefix), `agentcli` version, and
  `system`: the exact system blocks sent, reused on resume so the prompt cache still hits.
- `title`: the first prompt as the user typed it (for the session picker).
- `message`: one conversation message, exactly as sent or received. The user message that
  starts a turn (the prompt) carries `reminders` (what `ReminderTracker.snapshot()` said after it
  was prepared), `request` (the user's words as typed, which compactions keep verbatim) and
  `turn`: the user turn's number (1 for the first; numbers go on rising after a rewind and on
  resume, so each names one turn of the session, and its checkpoints); an
  assistant message carries `context_tokens` (its turn's context size).
- `system`: the system blocks changed (e.g. `--append-system-prompt` given on resume).
- `model`: `/model` changed the `provider` and `model` from the next turn on; a resumed session
  goes on with the last one named.
- `compact`: a compaction boundary. The `message` records after it form the new
  conversation; earlier lines are never rewritten. A summarising one carries `kept`, what the
  new conversation carries besides the summary (`sessions.carry`): `requests` (all of them,
  verbatim) and `requests_left_out` (how many of them its message leaves to the summary),
  `changed_files` (as below), `changed_seen` (the other files the checkpoints saw change: paths),
  `files` (re-read), `skills` (names), `todos` (a count), `plan` and
  `in_progress` (whether it carried them).
- `rewind`: the conversation went back to before user turn `turn` (`conversation`: true): the
  `message` records from that turn's prompt on are no longer part of it (earlier lines are never
  rewritten). `code`: true when the files were restored too (a rewind of the files alone is
  recorded in the checkpoints, not here).
- `plan`: the user approved the model's plan (ExitPlanMode): `plan` (its Markdown) and `mode`
  (`acceptEdits` or `default`, what the work went on in). It precedes the tool results that tell
  the model; the latest one is the conversation's approved plan, across compactions too.
- `run`: one prompt's run through the loop ended: `stop` (`done`, `max_turns`, `budget`,
  `no_progress`, `model_stopped`, `hook`, `api_error`, `interrupted`, `error`) and `turns`
  (the model requests it made). It follows the run's last message.

A `message` or `compact` record carries `usage` (`input_tokens`, `output_tokens`,
`cache_creation_input_tokens`, `cache_read_input_tokens`, and `web_search_requests` when the
provider searched the web): the tokens used since the last
record that has one, if any (the response it holds, one that was discarded and asked for
again, a compaction's summary). Summed over the file, they are what the session cost, so
a resumed session's `/cost` includes what was spent before. Older transcripts have no
`usage`: what they spent is unknown and counted as 0.

A `message` record of tool results also carries `todos` when that turn changed the task
list (TodoWrite): the whole list, which a resumed session takes up again; and `read_files`
for files read or written in that turn (path → mtime_ns, size, sha256; null for a file read only in part), so a resumed
session's Edit and Write know what the model has seen (and still refuse a file that changed);
and `changed_files` for files a call of that turn declared writing for the first time (path →
sha256 of the file before, null when it did not exist, "" when it could not be read);
and `subagents` when that turn ran Task calls: the id of each Task call → the path of its
sub-agent's own transcript (`<session id>/subagents/<sub-agent id>.jsonl` beside this file, in
this format; not a session of its own, so `/resume` does not list it); and `spent` when a tool
made requests of its own in that turn (WebFetch asking a small model about a page, WebSearch's
search): model → usage, a part of the record's `usage` to be priced at that model's rates.

For `agentcli stats`, a record may carry `requests`: each model request answered since the last
record that has them (`model`, `stop_reason`, `first_token_ms`, `duration_ms`, `retries`); and a
tool-results `message` carries `calls`: tool call id → `ms` (how long the tool ran; absent when it
never ran) and `failure` (`ToolResult.failure`: `denied`, `invalid_input`, `unknown_tool`, an
Edit's `not_found`…; absent for a success or an ordinary error). Transcripts written before
these fields have none of them; readers ignore fields and record types they do not know.

Each line goes to the file with one `write()` as soon as its message completes, so a killed
run loses at most the line being written (the reader drops a torn last line).

A new transcript is provisional until the model has answered: the session `keep()`s it then,
and `discard()`s it when a turn ends before that (no API key, the server unreachable or
refusing, an interrupt while waiting), so a conversation that never reached the model does
not clutter `/resume`. Until then its lines are on disk all the same (a killed run keeps the
prompt it was sending); a discarded file's lines are held in memory and written again, ahead
of the next line, if the conversation goes on.

The writer holds an exclusive lock (flock) on the file while it has it open, so a second
agentcli cannot continue a session that is still running (both would append, and the
second would cut the first one's line in progress as "torn").
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path

from agentcli import __version__
from agentcli.contracts import JSON
from agentcli.errors import UsageError
from agentcli.regular_file import require_regular

FORMAT_VERSION = 1
MAX_HEADER_BYTES = 4 << 20
"""The `session` line holds the system prompt; anything longer is not a header of ours."""
TITLE_CHARS = 200


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


def encode(record: JSON) -> bytes:
    """One line. ASCII escapes keep odd strings (lone surrogates) loadable; loads() restores them exactly."""
    return (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")


class TranscriptWriter:
    """Appends records to one transcript file, creating it (and its header) on the first write;
    a new file is provisional until `keep()` (see the module docstring).

    Writing must never break a conversation: an OSError is reported once through `on_error`
    and the transcript stops there.
    """

    def __init__(self, path: Path, header: JSON | None, on_error: Callable[[str], None]) -> None:
        self.path = path
        self._unwritten: list[bytes] = [] if header is None else [encode(header)]
        """Lines to write when the file is created: the `session` header (and after `discard()`,
        the discarded lines). Empty for an existing file."""
        self._provisional: list[bytes] | None = None if header is None else []
        """The lines of a file `discard()` would remove; None once kept, and for an existing file."""
        self._on_error = on_error
        self._fd: int | None = None
        self._failed = False

    @classmethod
    def new(
        cls,
        path: Path,
        *,
        session_id: str,
        cwd: Path,
        provider: str,
        model: str,
        system: list[JSON],
        on_error: Callable[[str], None],
    ) -> TranscriptWriter:
        header: JSON = {
            "type": "session",
            "time": now(),
            "session_id": session_id,
            "version": FORMAT_VERSION,
            "agentcli": __version__,
            "cwd": str(cwd),
            "provider": provider,
            "model": model,
            "system": system,
        }
        return cls(path, header, on_error)

    @classmethod
    def existing(cls, path: Path, on_error: Callable[[str], None]) -> TranscriptWriter:
        """Append to a transcript being resumed: lock it, then cut a torn last line (from a killed run).

        UsageError when another agentcli process has the session open.
        """
        writer = cls(path, None, on_error)
        try:
            writer._open()
            _drop_torn_tail(path)
        except BlockingIOError:
            raise UsageError(
                f"Session {path.name.removesuffix('.jsonl')} is in use by another agentcli process. Wait for that "
                "one to end, resume a different session (--resume ID, or /resume), or start a new one."
            ) from None
        except OSError as error:
            writer._fail(error)
        return writer

    def write(self, record: JSON) -> None:
        if self._failed:
            return
        line = encode(record)
        try:
            _write_all(self._open(), line)
        except OSError as error:
            self._fail(error)
            return
        if self._provisional is not None:
            self._provisional.append(line)

    @property
    def kept(self) -> bool:
        """The file holds the conversation so far and stays (kept, or an existing one; no write failed)."""
        return self._provisional is None and not self._failed

    def keep(self) -> None:
        """The model has answered: the file stays, whatever happens next."""
        self._provisional = None

    def discard(self) -> None:
        """Remove a transcript not yet kept (its lines wait in memory for the next write); else nothing."""
        if self._provisional is None or self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # while the lock is still held: nobody else has it open for writing
        self.close()
        self._unwritten, self._provisional = self._provisional, []

    def sync(self) -> None:
        """Make what was written durable (called at the end of a turn, not per line: fsync is slow)."""
        if self._fd is not None and not self._failed:
            try:
                os.fsync(self._fd)
            except OSError as error:
                self._fail(error)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released when fd is closed
            except OSError:
                os.close(fd)
                raise
            self._fd = fd
            while self._unwritten:
                line = self._unwritten.pop(0)
                _write_all(fd, line)
                if self._provisional is not None:
                    self._provisional.append(line)
        return self._fd

    def _fail(self, error: OSError) -> None:
        self._failed = True
        self._on_error(f"Could not write the transcript {self.path}: {error.strerror or error}. It stops here.")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _drop_torn_tail(path: Path) -> None:
    """Cut a last line that has no newline (a write the kill interrupted), so appends start clean."""
    with path.open("rb+") as file:
        size = file.seek(0, os.SEEK_END)
        if size == 0:
            return
        file.seek(size - 1)
        if file.read(1) == b"\n":
            return
        chunk = 1 << 16
        end = size
        while end > 0:
            start = max(0, end - chunk)
            file.seek(start)
            data = file.read(end - start)
            newline = data.rfind(b"\n")
            if newline != -1:
                file.truncate(start + newline + 1)
                return
            end = start
        file.truncate(0)


def recorded_cwd(path: Path) -> str | None:
    """The `cwd` in a transcript's `session` header; None when the file has no readable header."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO named *.jsonl must not block
        try:
            require_regular(fd, path)
            with os.fdopen(os.dup(fd), "rb") as file:
                first = file.readline(MAX_HEADER_BYTES)
        finally:
            os.close(fd)
        header = json.loads(first)
    except (OSError, ValueError, RecursionError):  # unreadable, not JSON, or absurdly nested
        return None
    if not isinstance(header, dict) or header.get("type") != "session":
        return None
    cwd = header.get("cwd")
    return cwd if isinstance(cwd, str) else None
