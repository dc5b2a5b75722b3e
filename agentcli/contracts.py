"""The few contracts the harness is built from: tools, the model seam, the permission gate.

Everything else (built-in tools, the Anthropic adapter, front ends, tests' doubles)
implements or consumes these; the workspace a tool acts through is `agentcli.workspace.contract`,
what a call declares it will do is `agentcli.access`. Nothing here imports a heavy package.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

from agentcli.access import Access
from agentcli.path_text import from_shown
from agentcli.workspace.contract import Change, Workspace

JSON = dict[str, Any]
"""A JSON object as the Messages API sends and receives it."""


def literal_path(path: Path) -> Path:
    """`path` with `.` and `..` removed textually (symlinks kept): how the gate keys a path it judged."""
    return Path(os.path.normpath(path))


# --------------------------------------------------------------------------- tools


@dataclass(frozen=True)
class ToolResult:
    """What a tool hands back: text for the model, plus optional data for the UI."""

    content: str
    is_error: bool = False
    summary: str | None = None
    """One short line for the terminal, e.g. "Read 120 lines"."""
    diff: str | None = None
    """A unified diff when the tool changed a file (for the UI and the permission prompt)."""
    output: str | None = None
    """What the terminal previews under the call (first and last lines): a program's output
    (Bash, without its exit status) or a listing (Grep, Glob). None: the summary says enough."""
    images: tuple[JSON, ...] = ()
    """Image content blocks sent to the model after `content` (an MCP tool's pictures)."""
    failure: str | None = None
    """For an error result, what kind of failure it was, in a word the transcript records for
    `agentcli stats`: the executor's `denied`, `blocked` (a hook), `refused` (the workspace),
    `unknown_tool`, `invalid_input`, `interrupted`; or a tool's own (Edit: `not_found`,
    `not_unique`, `stale`, `not_read`). None for any other error, and for a result that is not one."""
    final_answer: str | None = None
    """Ends the turn: the loop asks the model nothing more after this call's batch and returns this
    as the turn's answer (ExitPlanMode in `agentcli run`, where nobody can approve a plan: the
    plan is the run's result)."""


@dataclass
class FileRecord:
    """What a file looked like when the model last read it (guards Edit/Write)."""

    mtime_ns: int
    size: int
    sha256: str | None
    """Of the whole file; None when only part of it was read (then only mtime and size vouch for it)."""


class FileRecords:
    """What each file the model has seen looked like then, keyed by real path (guards Edit/Write).

    The tools' calls `remember` a file as they read or write it (from several threads at once,
    for concurrent Reads); `take_changes` hands over the records that changed since it was last
    called, so the transcript writes just those, whatever the number of files seen before.
    """

    def __init__(self) -> None:
        self._records: dict[Path, FileRecord] = {}
        self._changed: dict[Path, None] = {}
        """The paths changed since `take_changes`, in the order they first changed (a set that keeps order)."""
        self._lock = threading.Lock()

    def get(self, path: Path) -> FileRecord | None:
        return self._records.get(path)

    def __getitem__(self, path: Path) -> FileRecord:
        return self._records[path]

    def __contains__(self, path: object) -> bool:
        return path in self._records

    def remember(self, path: Path, record: FileRecord) -> None:
        """`path` looks like `record` now (noted as a change unless it looked just so already)."""
        with self._lock:
            if self._records.get(path) != record:
                self._records[path] = record
                self._changed[path] = None

    def restore(self, records: Mapping[Path, FileRecord]) -> None:
        """Records that are already written down (a resumed transcript's): not changes."""
        with self._lock:
            self._records.update(records)

    def clear(self) -> None:
        """Forget every file: each must be read again before an Edit or Write."""
        with self._lock:
            self._records.clear()
            self._changed.clear()

    def take_changes(self) -> dict[Path, FileRecord]:
        """The records remembered as changes since the last call, in the order they changed."""
        with self._lock:
            changed = {path: self._records[path] for path in self._changed}
            self._changed.clear()
        return changed


class Cancellation(threading.Event):
    """The event set when the user interrupts. Each `linked()` event is set along with it, so an
    interrupt of an agent also stops the sub-agents it started (each of which clears its own
    when it starts, without clearing the parent's, and stays set while the parent's is).

    A linked event reads as set as soon as its parent is, before `set` has reached it: an
    interrupt sets the linked events one after another, and a sub-agent whose event is set first
    may hand the gate to another before that one's is (which must then not put its question).

    What is blocked outside Python (a socket read in a sub-agent's thread, where Ctrl-C raises
    nothing) is woken through `when_set`."""

    def __init__(self, parent: Cancellation | None = None) -> None:
        super().__init__()
        self._parent = parent
        self._linked: list[Cancellation] = []
        self._on_set: list[Callable[[], None]] = []
        self._links_lock = threading.Lock()

    def linked(self) -> Cancellation:
        """A new event, set whenever this one is (now, if it is set already). `unlink` it when done."""
        child = Cancellation(self)
        with self._links_lock:
            self._linked.append(child)
        if self.is_set():
            child.set()
        return child

    def unlink(self, child: Cancellation) -> None:
        with self._links_lock:
            if child in self._linked:
                self._linked.remove(child)

    @contextmanager
    def when_set(self, stop: Callable[[], None]) -> Iterator[None]:
        """While inside: `stop()` is called, in the thread that sets this event, as soon as it is
        set (at once when it is set already). `stop` must be quick and must not raise."""
        with self._links_lock:
            self._on_set.append(stop)
        try:
            if self.is_set():
                stop()
            yield
        finally:
            with self._links_lock:
                self._on_set.remove(stop)

    def set(self) -> None:
        super().set()
        with self._links_lock:
            linked, stops = list(self._linked), list(self._on_set)
        for stop in stops:
            stop()
        for child in linked:
            child.set()

    def is_set(self) -> bool:
        return super().is_set() or (self._parent is not None and self._parent.is_set())

    def clear(self) -> None:
        super().clear()
        if self._parent is not None and self._parent.is_set():  # interrupted just as it was cleared
            super().set()


@dataclass(frozen=True)
class HookPermission:
    """A PreToolUse hook's word on one call, for the gate: `allow` (don't ask, unless a deny or
    ask rule or a protected path says otherwise) or `ask` (ask even where a rule allows)."""

    decision: Literal["allow", "ask"] | None
    reason: str = ""
    changed_input: bool = False
    """A hook replaced the call's input (`updatedInput`): the question says so."""


@dataclass
class ToolContext:
    """Per-session state a tool may use. Tools never ask for permission themselves."""

    workspace: Workspace
    """Where the tool's processes run and its files are read and written; its `root` is the
    project directory (`cwd`)."""
    cancel: Cancellation = field(default_factory=Cancellation)
    """Set when the user interrupts; long-running tools stop at once."""
    read_files: FileRecords = field(default_factory=FileRecords)
    """Files read or written in this session, keyed by real path."""
    checked_paths: Mapping[Path, Path] | None = None
    """For one call, set by the executor on its own copy: the real paths the permission gate
    judged, keyed by literal path (see `Decision.checked_paths`). None when no gate ran."""
    agent_label: str = ""
    """Whose calls these are, for the permission question: a sub-agent's type (`Explore`); empty
    for the session's own agent."""
    call_id: str = ""
    """For one call, set by the executor on its own copy: the id of the tool_use being run."""
    hook_permission: HookPermission | None = None
    """For one call, set by the executor on its own copy: what a PreToolUse hook said about it."""
    user_turn: int = 0
    """Which of the conversation's user messages its calls belong to (1 for the first), counted
    by `begin_user_turn`; a sub-agent's context carries the turn that started it."""

    @property
    def cwd(self) -> Path:
        """The project directory (the workspace's root): relative paths resolve against it."""
        return self.workspace.root

    def begin_user_turn(self) -> None:
        """A new user message is about to be handled: what runs from now on belongs to it."""
        self.user_turn += 1

    def resolve(self, file_path: str) -> Path:
        """An absolute path for `file_path` as a tool was given it: relative paths are taken from
        `cwd`, and a name spelled as the tools show it (`caf\\xe9.txt`) is that name (`path_text`)."""
        path = Path(from_shown(file_path)).expanduser()
        return path if path.is_absolute() else self.cwd / path

    def real_path(self, file_path: str) -> Path:
        """The real path a tool must use for `file_path`: the one the permission gate judged.

        With no gate (unit tests, tools run directly) it is resolved now. Open it without
        following symlinks (through `workspace`), so a swap after the check is refused.
        Raises OSError for a path the gate did not judge, a symlink loop, or a NUL byte.
        """
        try:
            literal = literal_path(self.resolve(file_path))
            if self.checked_paths is None:
                return literal.resolve()
        except RuntimeError:  # Path.resolve's symlink loop (an OSError from Python 3.13 on)
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), file_path) from None
        except ValueError as error:  # a NUL byte in the path
            raise OSError(errno.EINVAL, str(error), file_path) from None
        real = self.checked_paths.get(literal)
        if real is None:
            raise PermissionError(errno.EACCES, "the permission gate did not check this path", file_path)
        return real


Concurrency = Literal["shared", "exclusive", "independent"]
"""How a tool's calls may run beside their neighbours in one turn: `shared`, alongside the
neighbouring calls of every other `shared` tool (tools that only read: Read, Grep, Glob);
`exclusive`, alone (anything that changes files, runs commands or changes the conversation's
own state: TodoWrite, Skill); `independent`, alongside neighbouring calls of the same tool
only (Task: each call is a conversation of its own)."""


class Tool(Protocol):
    """A capability the model may call. Built-in, MCP and sub-agent tools all look like this."""

    name: str

    @property
    def description(self) -> str:
        """Written for the model: what it does, when not to use it, what failure looks like. Read
        for every request: it must stay the same text unless what it describes changed (the cache)."""
        ...

    input_schema: JSON

    @property
    def concurrency(self) -> Concurrency:
        """How its calls may run beside their neighbours (see `Concurrency`): a declared capability."""
        ...

    def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult: ...

    def access(self, tool_input: JSON, ctx: ToolContext) -> Access:
        """What this call will do, for the permission gate: the paths it reads and writes (absolute,
        from `ctx.resolve`), the command it runs, the hosts it contacts, the MCP server it acts
        through; `access.NOTHING` when it touches nothing outside the conversation; `access.unknown`
        when it cannot say (the gate then asks). Called with input that passed `input_schema`."""
        ...


def concurrency_group(tool: Tool) -> str | None:
    """Neighbouring calls of the same group run concurrently (see `Concurrency`); None: the call runs alone."""
    if tool.concurrency == "independent":
        return f"independent:{tool.name}"
    return "shared" if tool.concurrency == "shared" else None


@runtime_checkable
class CapsOwnOutput(Protocol):
    """A tool that caps its result itself, at `output_limit` characters, saying how to raise it
    (MCP tools: `maxMcpOutputTokens`); the executor's usual cap does not apply to it."""

    output_limit: int


@runtime_checkable
class Dispatches(Protocol):
    """A tool that stands for another (`McpCall` for a deferred MCP tool): the executor asks it which
    tool and input a call means, then validates, hooks, gates and runs that tool as if called by name."""

    def dispatch(self, tool_input: JSON) -> tuple[Tool, JSON] | ToolResult:
        """The tool to run and its input, or the error result when the call means none."""
        ...


@dataclass(frozen=True)
class McpOrigin:
    """Which server's which tool an MCP tool is, by the names the user configured and the server
    lists (the tool's own `name`, `mcp__<server>__<tool>`, may be a rewritten form of them)."""

    server: str
    tool: str


@runtime_checkable
class FromMcpServer(Protocol):
    """A tool an MCP server supplies: the permission question names its server and tool as they
    are listed, and rules may name a shortened tool by its listed name (`agentcli.mcp.names`)."""

    origin: McpOrigin


@runtime_checkable
class ReportsInterruption(Protocol):
    """A tool whose call, interrupted before it finished, can say what it had done by then (Task:
    its sub-agent's turns and tool calls so far)."""

    def interrupted_result(self, call_id: str) -> ToolResult | None:
        """The result for its call `call_id`, which the user interrupted while it ran; None: the
        executor's usual "Interrupted by the user" one. Called from the interrupted thread: quick."""
        ...


@runtime_checkable
class PreviewsChange(Protocol):
    """A tool that can show the change a call would make without making it (Edit, Write)."""

    def preview(self, tool_input: JSON, ctx: ToolContext) -> str | None:
        """The unified diff the call would make, or None when it would fail."""
        ...


# --------------------------------------------------------------------- permissions


@dataclass(frozen=True)
class Decision:
    """The gate's answer for one tool call."""

    allowed: bool
    message: str = ""
    """For a denial: what the model (and the user) is told, e.g. which rule would allow it."""
    checked_paths: Mapping[Path, Path] | None = None
    """For an allowed call: each path the gate judged (`literal_path` of it) → the real path it
    judged. The tool is handed these (`ToolContext.real_path`) instead of resolving the name
    again, which a symlink swapped in after the check would redirect."""
    access: Access | None = None
    """For an allowed call: what the gate judged it will do (`Tool.access`); None when the gate
    did not look (a test's), and then the call counts as one that may change anything."""


class PermissionGate(Protocol):
    """Decides whether one tool call may run; may ask the user through a front-end callback."""

    def check(self, tool: Tool, tool_input: JSON, ctx: ToolContext) -> Decision: ...


def before_running(tool: Tool, decision: Decision, ctx: ToolContext) -> None:
    """Tell the workspace, before a call the gate allowed runs, that it may change something
    (`Workspace.before_change`); a call that only reads is not announced. Raises WorkspaceError
    when the workspace refuses the call."""
    access = decision.access or Access(unknown="the permission gate did not say what it does")
    if not access.read_only:
        ctx.workspace.before_change(Change(tool.name, ctx.call_id, access, ctx.user_turn))


# --------------------------------------------------------------------------- model


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens

    def less(self, other: Usage) -> Usage:
        """What is left of this usage without `other` (a part of it)."""
        return Usage(**{kind: tokens - getattr(other, kind) for kind, tokens in self.as_dict().items()})

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


@dataclass(frozen=True)
class ModelRequest:
    model: str
    system: list[JSON]
    tools: list[JSON]
    messages: list[JSON]
    max_tokens: int


StopReason = Literal[
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
]


class ToolCall(NamedTuple):
    """One tool call the model made: its id (which its result must carry), the tool, the input.
    Built from and into conversation blocks by `agentcli.conversation`."""

    id: str
    name: str
    input: object
    """A JSON object, unless a model that does not check its calls sent something else."""


@dataclass
class ModelResponse:
    """One finished assistant turn, content kept verbatim as the provider sent it (in the
    conversation's representation, `agentcli.conversation`)."""

    content: list[JSON]
    stop_reason: str
    usage: Usage
    incomplete_block: int | None = None
    """Index of a block the stream cut off mid-way (only with stop_reason max_tokens)."""
    invalid_inputs: dict[str, str] = field(default_factory=dict)
    """tool_use id → why the call cannot be run: its input could not be used (that block's input
    was replaced by `{}`, see `agentcli.tool_input`), or it named no usable tool (its name was
    replaced, see `agentcli.providers.call_repair`). The call is answered with an error result.
    `conversation.response_calls` gives the turn's complete tool calls."""


class StreamListener(Protocol):
    """What a provider reports while a turn streams in, before the whole response is known, and
    the event that stops it."""

    @property
    def cancel(self) -> Cancellation | None:
        """Set when the user interrupts the turn: the provider stops waiting for the stream at once
        (closing its connection) and raises `errors.Cancelled`. None: nothing stops it but Ctrl-C
        in the main thread."""
        ...

    def text(self, delta: str) -> None:
        """A piece of the answer's text; an empty string means "a text block just ended"."""
        ...

    def tool_call_started(self, name: str) -> None:
        """The model began a call to the tool `name`; its input is still streaming."""
        ...

    def reasoning(self, delta: str) -> None:
        """A piece of the model's reasoning (the `reasoning_content` an OpenAI-compatible server
        streams): shown to the user dimmed, never as the answer, and not sent back."""
        ...


class Unwatched:
    """A `StreamListener` for a request whose progress nobody watches (a compaction summary)."""

    cancel: Cancellation | None = None  # Ctrl-C in the main thread interrupts it

    def text(self, delta: str) -> None:
        pass

    def tool_call_started(self, name: str) -> None:
        pass

    def reasoning(self, delta: str) -> None:
        pass


class Model(Protocol):
    """The model seam: stream one turn, reporting its progress to `listener` as it arrives;
    `close` when done with it."""

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        """Raise `TransientModelError` for a retryable fault (a malformed or stalled stream
        included), `ModelAPIError` for a fatal one. Every tool_use in the response can go back in
        any provider's request: its input a JSON object, its name one an API accepts, its id
        unique in the conversation (`ModelResponse.invalid_inputs` says which calls were mended)."""
        ...

    def close(self) -> None:
        """Release what the model holds open (an HTTP client and its connections). Safe to call
        more than once; a later `stream` opens them again."""
        ...
