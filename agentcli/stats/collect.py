"""Reading transcripts into the figures `agentcli stats` reports, as one JSON object.

What counts how:

- A session is a transcript (`sessions.transcript`) with at least one message in the period;
  its turns are the model's answers (assistant messages). Sub-agents' transcripts
  (`<session id>/subagents/*.jsonl`) are part of their session: their tokens and dollars are in
  the session's (each priced at the sub-agent's own model), and their tool calls and model
  requests are in the tool and latency figures; their turns and runs are not (a sub-agent's run
  is one Task call of its session).
- A session's transcript already counts a sub-agent's tokens in the record of the tool results
  its Task call answered (`subagents`); those are taken out of that record, so nothing is counted
  twice, and the sub-agent's own transcript says what they were and at which model's price.
- A task is one prompt's run (a `run` record); a finished task is one that stopped `done`.
- Figures that need what older transcripts do not record (`run`, `requests`, `calls`) are null
  ("unknown") when no transcript in the period recorded them, never 0; shares count only the
  calls that were recorded that way. `not_recorded` names what is missing for that reason
  (`tasks`, `requests`, `calls`), and is empty for transcripts of this agentcli.
- A failed tool call is one whose result was an error (denials included); a denied one was
  refused by the permission gate or a hook. The run-wide counts and shares are in `tool_calls`.
- `--since` keeps the records written since then (a session that started earlier counts with its
  later records). Days are local calendar days of the records' times.

Dollars come from the model table (`catalog.model_info`, with the project's `models` settings):
`ModelInfo.cost_usd`. Models it has no price for are listed in `unpriced_models`.
"""

from __future__ import annotations

import contextlib
import datetime
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.bounds import TOKEN_COUNTS
from agentcli.catalog import UNKNOWN_MODEL, ModelInfo
from agentcli.contracts import JSON, Usage
from agentcli.conversation import block_text, is_text, is_tool_result, is_tool_use, result_call_id, tool_call
from agentcli.sessions.store import SUFFIX, recorded_usage, transcript_records

Pricing = Callable[[str], ModelInfo]
"""The price table: a model's name → its `ModelInfo` (`UNKNOWN_MODEL` for a model it does not know)."""
EDIT_FAILURES = ("not_found", "not_unique", "stale", "not_read")
DENIALS = frozenset({"denied", "blocked"})
"""Failure kinds that mean the call was not allowed to run: by the permission gate or a hook."""
NOT_RUN = "not_run"
"""A call answered without running (a turn limit, a killed run) in a transcript that records calls."""
STOPS = ("done", "max_turns", "budget", "no_progress", "interrupted", "api_error", "model_stopped", "hook", "error")


@dataclass
class _Call:
    tool: str
    model: str
    error: bool
    recorded: bool
    """Its transcript records calls (`calls`): `ms` and `failure` are known (None: none)."""
    ms: int | None
    failure: str | None
    subagent: bool


@dataclass
class _Request:
    model: str
    stop_reason: str
    first_token_ms: int | None
    duration_ms: int | None


@dataclass
class _Compaction:
    trigger: str
    tokens_before: int
    tokens_after: int
    usage: Usage
    cost: float


@dataclass
class _Spend:
    """Tokens and dollars, in all and by day."""

    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    by_day: dict[str, tuple[Usage, float]] = field(default_factory=dict)

    def add(self, usage: Usage, cost: float, day: str) -> None:
        self.usage.add(usage)
        self.cost += cost
        spent, dollars = self.by_day.get(day, (Usage(), 0.0))
        spent.add(usage)
        self.by_day[day] = (spent, dollars + cost)

    def merge(self, other: _Spend) -> None:
        for day, (usage, cost) in other.by_day.items():
            self.add(usage, cost, day)


@dataclass
class _Session:
    id: str
    title: str = ""
    days: set[str] = field(default_factory=set)
    turns: int = 0
    messages: int = 0
    spend: _Spend = field(default_factory=_Spend)
    subagents: int = 0
    subagent_spend: _Spend = field(default_factory=_Spend)


@dataclass
class Tally:
    """What the transcripts read so far said; `figures()` turns it into the report."""

    pricing: Pricing
    since: datetime.datetime | None = None
    sessions: list[_Session] = field(default_factory=list)
    projects: set[Path] = field(default_factory=set)
    calls: list[_Call] = field(default_factory=list)
    requests: list[_Request] = field(default_factory=list)
    runs: list[tuple[str, int]] = field(default_factory=list)
    compactions: list[_Compaction] = field(default_factory=list)
    unpriced: set[str] = field(default_factory=set)

    def read_session(self, path: Path) -> None:
        """Add one session's transcript and its sub-agents'; an unreadable file is left out."""
        session = _Session(path.name.removesuffix(SUFFIX))
        folder = path.parent / session.id / "subagents"
        subagents: dict[str, _Spend] = {}
        with contextlib.suppress(OSError):
            for sub in sorted(folder.iterdir()):
                if sub.suffix == SUFFIX and sub.is_file():
                    reader = _Reader(self, subagent=True)
                    with contextlib.suppress(OSError):
                        reader.read(sub)
                        subagents[sub.name] = reader.spend
        reader = _Reader(self, subagent=False, session=session, subagents=subagents)
        try:
            reader.read(path)
        except OSError:
            return
        if session.messages == 0:  # nothing in the period (or an empty transcript)
            return
        for spend in subagents.values():
            session.subagent_spend.merge(spend)
            session.spend.merge(spend)
        session.subagents = len(subagents)
        self.sessions.append(session)
        self.projects.add(path.parent)

    def price(self, usage: Usage, model: str) -> float:
        info = self.pricing(model)
        if info == UNKNOWN_MODEL or (info.input_usd_per_mtok == 0 and info.output_usd_per_mtok == 0):
            if usage != Usage():
                self.unpriced.add(model)
            return 0.0
        return info.cost_usd(usage)

    def in_period(self, record: JSON) -> str | None:
        """The record's local day when it is in the period; None when it is not."""
        try:
            when = datetime.datetime.fromisoformat(str(record.get("time")))
        except ValueError:
            return None if self.since is not None else "unknown"
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.UTC)
        if self.since is not None and when < self.since:
            return None
        return when.astimezone().date().isoformat()


class _Reader:
    """One transcript's records into the tally (a session's own, or a sub-agent's)."""

    def __init__(
        self,
        tally: Tally,
        *,
        subagent: bool,
        session: _Session | None = None,
        subagents: Mapping[str, _Spend] | None = None,
    ) -> None:
        self.tally = tally
        self.subagent = subagent
        self.session = session
        self.subagents = subagents or {}
        self.spend = _Spend()
        self.model = "unknown"
        self.tool_names: dict[str, str] = {}

    def read(self, path: Path) -> None:
        if not path.is_file():  # a FIFO named *.jsonl must not block
            raise OSError(f"{path} is not a regular file")
        for record in transcript_records(path):
            self.record(record)

    def record(self, record: JSON) -> None:
        kind = record.get("type")
        if kind == "session" and isinstance(record.get("model"), str):
            self.model = record["model"]
        if kind == "title" and self.session is not None and not self.session.title:
            self.session.title = " ".join(str(record.get("title") or "").split())
        day = self.tally.in_period(record)
        message = record.get("message")
        if kind == "message" and isinstance(message, dict):
            self._names(message)
        for request in _list(record.get("requests")):
            if isinstance(request, dict) and isinstance(request.get("model"), str):
                self.model = request["model"]
                if day is not None:
                    self.tally.requests.append(
                        _Request(
                            self.model,
                            str(request.get("stop_reason")),
                            _count(request.get("first_token_ms")),
                            _count(request.get("duration_ms")),
                        )
                    )
        if day is None:
            return
        if kind == "message" and isinstance(message, dict):
            self._message(record, message, day)
        elif kind == "compact":
            self._compaction(record)
        elif kind == "run" and not self.subagent:
            self.tally.runs.append((str(record.get("stop")), _count(record.get("turns")) or 0))
        if isinstance(record.get("usage"), dict):
            usage = recorded_usage(record["usage"])
            for name in _dict(record.get("subagents")).values():  # counted in the sub-agent's own transcript
                if isinstance(name, str) and (spent := self.subagents.get(Path(name).name)) is not None:
                    usage = _minus(usage, spent.usage)
            cost = self.tally.price(usage, self.model)
            self.spend.add(usage, cost, day)
            if self.session is not None:
                self.session.spend.add(usage, cost, day)
            if kind == "compact" and self.tally.compactions:
                self.tally.compactions[-1].usage, self.tally.compactions[-1].cost = usage, cost

    def _names(self, message: JSON) -> None:
        if message.get("role") == "assistant":
            for block in _list(message.get("content")):
                if isinstance(block, dict) and is_tool_use(block):
                    call = tool_call(block)
                    self.tool_names[call.id] = call.name

    def _message(self, record: JSON, message: JSON, day: str) -> None:
        if self.session is not None:
            self.session.messages += 1
            self.session.days.add(day)
            if message.get("role") == "assistant":
                self.session.turns += 1
        if message.get("role") != "user":
            return
        if self.session is not None and not self.session.title:  # a transcript without a title record
            texts = [block_text(b) for b in _list(message.get("content")) if isinstance(b, dict) and is_text(b)]
            own = [t for t in texts if not t.startswith("<system-reminder>")]
            self.session.title = " ".join(own[-1].split()) if own else ""
        calls = record.get("calls")
        for block in _list(message.get("content")):
            if not isinstance(block, dict) or not is_tool_result(block):
                continue
            call_id = result_call_id(block)
            info = _dict(calls).get(call_id)
            recorded = isinstance(calls, dict)
            failure = None
            if isinstance(info, dict) and isinstance(info.get("failure"), str):
                failure = info["failure"]
            elif recorded and info is None:
                failure = NOT_RUN
            ms = _count(info.get("ms")) if isinstance(info, dict) else None
            tool = self.tool_names.get(call_id, "unknown")
            self.tally.calls.append(
                _Call(tool, self.model, block.get("is_error") is True, recorded, ms, failure, self.subagent)
            )

    def _compaction(self, record: JSON) -> None:
        self.tally.compactions.append(
            _Compaction(
                str(record.get("trigger")),
                _count(record.get("tokens_before")) or 0,
                _count(record.get("tokens_after")) or 0,
                Usage(),
                0.0,
            )
        )


# ------------------------------------------------------------------ the report


def figures(tally: Tally) -> JSON:
    """The report as one JSON object (what `--json` prints and the tables show)."""
    main = tally.calls
    total = Usage()
    cost = 0.0
    for session in tally.sessions:
        total.add(session.spend.usage)
        cost += session.spend.cost
    finished = [turns for stop, turns in tally.runs if stop == "done"]
    recorded_requests = bool(tally.requests)
    return {
        "projects": len(tally.projects),
        "since": None if tally.since is None else tally.since.isoformat(timespec="seconds"),
        "sessions": len(tally.sessions),
        "turns": sum(s.turns for s in tally.sessions),
        "tasks": len(tally.runs) if tally.runs else None,
        "turns_per_task": {
            "finished": len(finished) if tally.runs else None,
            "median": percentile(finished, 0.5),
            "p90": percentile(finished, 0.9),
        },
        "stops": _stops(tally.runs),
        "cut_off": sum(r.stop_reason == "max_tokens" for r in tally.requests) if recorded_requests else None,
        "tool_calls": _calls(main),
        "tools": _tools(main),
        "edit": _edits([c for c in main if c.tool == "Edit"]),
        "models": _models(tally),
        "latency": _latency(tally.requests),
        "tokens": _tokens(total),
        "cache_read_share": _share(total.cache_read_input_tokens, total.total_input),
        "cost_usd": round(cost, 6),
        "unpriced_models": sorted(tally.unpriced),
        "subagents": _subagents(tally.sessions),
        "compactions": _compactions(tally.compactions),
        "per_session": [_session(s) for s in sorted(tally.sessions, key=lambda s: (min(s.days), s.id))],
        "per_day": _days(tally.sessions),
        "not_recorded": [
            what
            for what, missing in (
                ("tasks", not tally.runs),
                ("requests", not recorded_requests),
                ("calls", any(not c.recorded for c in main)),
            )
            if missing and tally.sessions
        ],
    }


def percentile(values: Iterable[int], q: float) -> int | None:
    """The nearest-rank percentile (a value that occurred); None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _share(part: int, whole: int) -> float | None:
    return None if whole == 0 else round(part / whole, 4)


def _stops(runs: list[tuple[str, int]]) -> JSON | None:
    if not runs:
        return None
    counts = Counter(stop if stop in STOPS else "error" for stop, _ in runs)
    return {stop: counts[stop] for stop in STOPS}


def _calls(calls: list[_Call]) -> JSON:
    recorded = [c for c in calls if c.recorded]
    failed = sum(c.error for c in calls)
    denied = sum(c.failure in DENIALS for c in recorded)
    return {
        "total": len(calls),
        "in_subagents": sum(c.subagent for c in calls),
        "unrecorded": len(calls) - len(recorded),
        "failed": failed,
        "failed_share": _share(failed, len(calls)),
        "denied": denied if recorded or not calls else None,  # 0 of no calls is known
        "denied_share": _share(denied, len(recorded)),
    }


def _tools(calls: list[_Call]) -> JSON:
    by_tool: dict[str, list[_Call]] = defaultdict(list)
    for call in calls:
        by_tool[call.tool].append(call)
    report: JSON = {}
    for tool, its in sorted(by_tool.items(), key=lambda item: (-len(item[1]), item[0])):
        recorded = [c for c in its if c.recorded]
        denied = sum(c.failure in DENIALS for c in recorded)
        errors = sum(c.error for c in its)
        report[tool] = {
            "calls": len(its),
            "errors": errors,
            "error_share": _share(errors, len(its)),
            "denied": denied if recorded else None,
            "denial_share": _share(denied, len(recorded)),
            "median_ms": percentile([c.ms for c in recorded if c.ms is not None], 0.5),
            "failures": dict(sorted(Counter(c.failure for c in recorded if c.failure).items())),
        }
    return report


def _edits(edits: list[_Call]) -> JSON:
    applied = sum(not c.error for c in edits)
    kinds = Counter(c.failure for c in edits if c.error and c.recorded)
    report: JSON = {"calls": len(edits), "applied": applied}
    for kind in EDIT_FAILURES:
        report[kind] = kinds[kind]
    report["other_errors"] = sum(n for kind, n in kinds.items() if kind not in EDIT_FAILURES)
    report["unrecorded_errors"] = sum(c.error and not c.recorded for c in edits)
    report["apply_rate"] = _share(applied, len(edits))
    return report


def _models(tally: Tally) -> JSON:
    names = sorted({r.model for r in tally.requests} | {c.model for c in tally.calls})
    report: JSON = {}
    for name in names:
        requests = [r for r in tally.requests if r.model == name]
        calls = [c for c in tally.calls if c.model == name]
        recorded = [c for c in calls if c.recorded]
        invalid = sum(c.failure == "invalid_input" for c in recorded)
        report[name] = {
            "requests": len(requests),
            "tool_calls": len(calls),
            # Known (0) for a model that made no tool calls; unknown when its calls were not recorded.
            "invalid_input": invalid if recorded or not calls else None,
            "invalid_input_rate": _share(invalid, len(recorded)),
            "unknown_tool": sum(c.failure == "unknown_tool" for c in recorded) if recorded or not calls else None,
            "cut_off": sum(r.stop_reason == "max_tokens" for r in requests) if requests else None,
            **_latency(requests),
        }
    return report


def _latency(requests: list[_Request]) -> JSON:
    first = [r.first_token_ms for r in requests if r.first_token_ms is not None]
    whole = [r.duration_ms for r in requests if r.duration_ms is not None]
    return {
        "first_token_ms": {"p50": percentile(first, 0.5), "p90": percentile(first, 0.9)},
        "request_ms": {"p50": percentile(whole, 0.5), "p90": percentile(whole, 0.9)},
    }


def _tokens(usage: Usage) -> JSON:
    return {
        "input": usage.input_tokens,
        "cache_creation": usage.cache_creation_input_tokens,
        "cache_read": usage.cache_read_input_tokens,
        "output": usage.output_tokens,
        "total": usage.total_input + usage.output_tokens,
    }


def _subagents(sessions: list[_Session]) -> JSON:
    usage = Usage()
    for session in sessions:
        usage.add(session.subagent_spend.usage)
    return {
        "transcripts": sum(s.subagents for s in sessions),
        "tokens": usage.total_input + usage.output_tokens,
        "cost_usd": round(sum(s.subagent_spend.cost for s in sessions), 6),
    }


def _compactions(compactions: list[_Compaction]) -> JSON:
    usage = Usage()
    for compaction in compactions:
        usage.add(compaction.usage)
    return {
        "count": len(compactions),
        "auto": sum(c.trigger == "auto" for c in compactions),
        "manual": sum(c.trigger == "manual" for c in compactions),
        "tokens_before": sum(c.tokens_before for c in compactions),
        "tokens_after": sum(c.tokens_after for c in compactions),
        "summary_tokens": usage.total_input + usage.output_tokens,
        "cost_usd": round(sum(c.cost for c in compactions), 6),
    }


def _session(session: _Session) -> JSON:
    usage = session.spend.usage
    return {
        "id": session.id,
        "title": session.title,
        "day": min(session.days),
        "turns": session.turns,
        "tokens": usage.total_input + usage.output_tokens,
        "cost_usd": round(session.spend.cost, 6),
        "subagents": session.subagents,
        "subagent_tokens": session.subagent_spend.usage.total_input + session.subagent_spend.usage.output_tokens,
    }


def _days(sessions: list[_Session]) -> list[JSON]:
    days: dict[str, JSON] = {}
    for session in sessions:
        for day in session.days:
            days.setdefault(day, {"day": day, "sessions": 0, "tokens": 0, "cost_usd": 0.0})["sessions"] += 1
        for day, (usage, cost) in session.spend.by_day.items():
            entry = days.setdefault(day, {"day": day, "sessions": 0, "tokens": 0, "cost_usd": 0.0})
            entry["tokens"] += usage.total_input + usage.output_tokens
            entry["cost_usd"] += cost
    for entry in days.values():
        entry["cost_usd"] = round(entry["cost_usd"], 6)
    return [days[day] for day in sorted(days)]


def _minus(usage: Usage, spent: Usage) -> Usage:
    mine, theirs = usage.as_dict(), spent.as_dict()
    return Usage(**{key: max(0, mine[key] - theirs.get(key, 0)) for key in mine})


def _count(value: object) -> int | None:
    """A recorded count (tokens, turns, milliseconds); None unless a whole number that can be summed and averaged."""
    return value if isinstance(value, int) and TOKEN_COUNTS.holds(value) else None


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}
