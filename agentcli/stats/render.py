"""The figures of `stats.collect` as rich tables and terminal bar charts.

`report` is the whole of `agentcli stats`; `card` the REPL's `/stats` for one session (the same
figures without the per-day and per-session tables). A figure the transcripts did not record
(null in the JSON) shows as `—`, and the note under the report says what older transcripts left
out (`not_recorded`); a share of nothing (no calls, no input) shows as `—` too.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agentcli.contracts import JSON

UNKNOWN = "—"
BAR_WIDTH = 20
_EIGHTHS = " ▏▎▍▌▋▊▉"
LATEST_SESSIONS = 10


def bar(value: float, top: float, width: int = BAR_WIDTH) -> str:
    """`value` as a bar of block characters, `width` of them for `top`."""
    if top <= 0 or value <= 0:
        return ""
    eighths = max(1, round(value / top * width * 8))
    return "█" * (eighths // 8) + (_EIGHTHS[eighths % 8] if eighths % 8 else "")


def report(figures: JSON, heading: str) -> Group:
    return _shown(heading, figures, _days(figures), _sessions(figures))


def card(figures: JSON, heading: str) -> Group:
    return _shown(heading, figures)


def _shown(heading: str, figures: JSON, *more: RenderableType | None) -> Group:
    parts: list[RenderableType | None] = [
        Text(heading, style="bold"),
        _overview(figures),
        _counts("Stops", figures["stops"]),
        _tools(figures),
        _edits(figures["edit"]),
        _models(figures),
        _compactions(figures["compactions"]),
        *more,
        _notes(figures),
    ]
    return Group(*[part for part in parts if part is not None])


def _overview(figures: JSON) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim")
    table.add_column(justify="right")
    per_task = figures["turns_per_task"]
    tokens = figures["tokens"]
    calls = figures["tool_calls"]
    rows = [
        ("Sessions", _n(figures["sessions"])),
        ("Turns", _n(figures["turns"])),
        ("Tasks (prompts run)", _n(figures["tasks"])),
        ("Turns per finished task", _per_task(per_task)),
        ("Answers cut off (max_tokens)", _n(figures["cut_off"])),
        ("Tool calls failed", _of(calls["failed"], calls["total"], calls["failed_share"])),
        ("Tool calls denied", _of(calls["denied"], calls["total"] - calls["unrecorded"], calls["denied_share"])),
        ("Tokens", f"{tokens['total']:,} ({tokens['output']:,} output)"),
        ("Cache-read share of input", _percent(figures["cache_read_share"])),
        ("Cost", f"${figures['cost_usd']:.4f}"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def _counts(title: str, counts: JSON | None) -> Table | None:
    if counts is None:
        return None
    table = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 1))
    top = max(counts.values(), default=0)
    for name, count in counts.items():
        if count:
            table.add_row(name.replace("_", "-"), str(count), bar(count, top))
    return table if table.row_count else None


def _tools(figures: JSON) -> Table | None:
    tools: JSON = figures["tools"]
    if not tools:
        return None
    table = Table(title="Tool calls", title_justify="left", box=None, padding=(0, 1))
    for column in ("Tool", "Calls", "", "Errors", "Denied", "Median"):
        table.add_column(column, justify="left" if column in ("Tool", "") else "right")
    top = max(tool["calls"] for tool in tools.values())
    for name, tool in tools.items():
        median = f"{tool['median_ms']:,} ms" if tool["median_ms"] is not None else ""  # none of them ran
        if tool["denied"] is None:  # its calls were not recorded
            median = UNKNOWN
        table.add_row(
            name,
            str(tool["calls"]),
            bar(tool["calls"], top),
            _percent(tool["error_share"]),
            _percent(tool["denial_share"]),
            median,
        )
    return table


def _edits(edit: JSON) -> Table | None:
    if not edit["calls"]:
        return None
    counts = {key: edit[key] for key in ("applied", "not_found", "not_unique", "stale", "not_read", "other_errors")}
    counts["unrecorded_errors"] = edit["unrecorded_errors"]
    return _counts(f"Edit: {_percent(edit['apply_rate'])} applied", counts)


def _models(figures: JSON) -> Table | None:
    models: JSON = figures["models"]
    if not models:
        return None
    table = Table(title="Models", title_justify="left", box=None, padding=(0, 1))
    for column in ("Model", "Requests", "First token p50/p90", "Step p50/p90", "Invalid input", "Unknown tool"):
        table.add_column(column, justify="left" if column == "Model" else "right")
    for name, model in models.items():
        invalid = model["invalid_input"]
        table.add_row(
            name,
            str(model["requests"]),
            _spread(model["first_token_ms"]),
            _spread(model["request_ms"]),
            _count_and_share(invalid, model["invalid_input_rate"]),
            _n(model["unknown_tool"]),
        )
    return table


def _compactions(compactions: JSON) -> Text | None:
    if not compactions["count"]:
        return None
    return Text(
        f"Compactions: {compactions['count']} ({compactions['auto']} automatic), "
        f"{compactions['tokens_before']:,} → {compactions['tokens_after']:,} tokens of context; "
        f"summaries {compactions['summary_tokens']:,} tokens, ${compactions['cost_usd']:.4f}"
    )


def _days(figures: JSON) -> Table | None:
    days: list[JSON] = figures["per_day"]
    if not days:
        return None
    table = Table(title="Per day", title_justify="left", box=None, padding=(0, 1))
    for column in ("Day", "Sessions", "Tokens", "Cost", ""):
        table.add_column(column, justify="left" if column in ("Day", "") else "right")
    measure = "cost_usd" if any(day["cost_usd"] for day in days) else "tokens"  # unpriced models: by tokens
    top = max(day[measure] for day in days)
    for day in days:
        cost = f"${day['cost_usd']:.4f}"
        table.add_row(day["day"], str(day["sessions"]), f"{day['tokens']:,}", cost, bar(day[measure], top))
    return table


def _sessions(figures: JSON) -> Table | None:
    sessions: list[JSON] = sorted(figures["per_session"], key=lambda s: s["day"], reverse=True)[:LATEST_SESSIONS]
    if not sessions:
        return None
    table = Table(title="Sessions (latest first)", title_justify="left", box=None, padding=(0, 1))
    for column in ("Session", "Day", "Turns", "Tokens", "Cost", "Title"):
        table.add_column(column, justify="right" if column in ("Turns", "Tokens", "Cost") else "left")
    for session in sessions:
        tokens = f"{session['tokens']:,}"
        if session["subagent_tokens"]:
            tokens += f" ({session['subagent_tokens']:,} sub-agents)"
        table.add_row(
            session["id"][:8],
            session["day"],
            str(session["turns"]),
            tokens,
            f"${session['cost_usd']:.4f}",
            session["title"][:50],
        )
    return table


NOT_RECORDED = {
    "tasks": "tasks and how they stopped",
    "requests": "model request timings and answers cut off",
    "calls": "{unrecorded:,} tool calls' durations, denials and failure kinds",
}
"""What each `not_recorded` entry of the figures leaves unknown, for the note under the report."""


def _notes(figures: JSON) -> Text | None:
    lines: list[str] = []
    calls = figures["tool_calls"]
    if figures["not_recorded"]:
        missing = "; ".join(NOT_RECORDED[what].format(**calls) for what in figures["not_recorded"])
        lines.append(
            f"{UNKNOWN} not recorded: {missing}. Older transcripts (from an agentcli before it recorded them) "
            "do not hold these; sessions from now on do."
        )
    sub = figures["subagents"]
    if sub["transcripts"]:
        lines.append(
            f"Sub-agents: {sub['transcripts']} transcripts, {sub['tokens']:,} tokens, ${sub['cost_usd']:.4f}, "
            f"counted in their sessions' tokens and cost; their {calls['in_subagents']} tool calls "
            "are in the tool table."
        )
    if figures["unpriced_models"]:
        lines.append(f"No price known for: {', '.join(figures['unpriced_models'])} (counted as $0).")
    return Text("\n".join(lines), style="dim") if lines else None


def _n(value: int | None) -> str:
    return UNKNOWN if value is None else f"{value:,}"


def _count_and_share(count: int | None, share: float | None) -> str:
    """`1 (17%)`; just `0` when there was nothing to count; `—` when the count is unknown."""
    if count is None:
        return UNKNOWN
    return str(count) if share is None else f"{count} ({_percent(share)})"


def _of(count: int | None, whole: int, share: float | None) -> str:
    """`2 of 7 (29%)`; `0` of none; `—` when the count is unknown."""
    if count is None:
        return UNKNOWN
    return f"{count:,} of {whole:,} ({_percent(share)})" if whole else "0"


def _per_task(per_task: JSON) -> str:
    """`median 3, p90 7`; `none finished`; `—` when the transcripts did not record tasks."""
    if per_task["finished"] == 0:
        return "none finished"
    return f"median {_n(per_task['median'])}, p90 {_n(per_task['p90'])}"


def _percent(share: float | None) -> str:
    return UNKNOWN if share is None else f"{share:.0%}"


def _spread(latency: JSON) -> str:
    if latency["p50"] is None:
        return UNKNOWN
    return f"{latency['p50']:,} / {latency['p90']:,} ms"
