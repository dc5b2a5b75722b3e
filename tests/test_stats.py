"""`agentcli stats`: figures from the transcripts, exact on generated ones, unknown (not zero) on
older ones; and end to end, a scripted run's tool calls reported as they happened."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentcli.catalog import model_info
from agentcli.contracts import Usage
from agentcli.providers import scripted
from agentcli.providers.scripted import ScriptedModel
from agentcli.stats.command import stats_text
from tests.conftest import RunAgent, RunMain, StartRepl
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use

UTC = {"TZ": "UTC"}
ONE = {"input_tokens": 1000, "output_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
"""The usage every scripted reply reports, so the token figures are exact."""


def stats(run_main: RunMain, *args: str, cwd: Path | None = None) -> dict[str, Any]:
    done = run_main("stats", "--json", *args, cwd=cwd, env=UTC)
    assert done.returncode == 0, done.stderr
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def test_a_scripted_runs_tool_calls_are_reported_exactly(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "notes.txt").write_text("hello\n")
    fake_api.script(
        reply(tool_use("Read", {"file_path": "notes.txt"}, id="t1"), usage=ONE),
        reply(
            tool_use("Edit", {"file_path": "notes.txt", "old_string": "absent", "new_string": "x"}, id="t2"), usage=ONE
        ),
        reply(
            tool_use("Edit", {"file_path": "notes.txt", "old_string": "hello", "new_string": "hi"}, id="t3"), usage=ONE
        ),
        reply(tool_use("Bash", {"command": "rm -rf build"}, id="t4"), usage=ONE),
        reply(tool_use("Frobnicate", {}, id="t5"), tool_use("Read", {"path": "notes.txt"}, id="t6"), usage=ONE),
        reply(text("Done."), usage=ONE),
    )
    ran = run_main("run", "tidy up the notes", "--permission-mode", "acceptEdits")
    assert ran.returncode == 0, ran.stderr
    assert (project / "notes.txt").read_text() == "hi\n"

    figures = stats(run_main)

    assert (figures["sessions"], figures["turns"], figures["tasks"]) == (1, 6, 1)
    assert figures["turns_per_task"] == {"finished": 1, "median": 6, "p90": 6}
    assert figures["stops"] == {
        "done": 1, "max_turns": 0, "budget": 0, "no_progress": 0, "interrupted": 0, "api_error": 0,
        "model_stopped": 0, "hook": 0, "error": 0,
    }  # fmt: skip
    tools = {name: {k: v for k, v in tool.items() if k != "median_ms"} for name, tool in figures["tools"].items()}
    assert tools == {
        "Read": {"calls": 2, "errors": 1, "error_share": 0.5, "denied": 0, "denial_share": 0.0,
                 "failures": {"invalid_input": 1}},
        "Edit": {"calls": 2, "errors": 1, "error_share": 0.5, "denied": 0, "denial_share": 0.0,
                 "failures": {"not_found": 1}},
        "Bash": {"calls": 1, "errors": 1, "error_share": 1.0, "denied": 1, "denial_share": 1.0,
                 "failures": {"denied": 1}},
        "Frobnicate": {"calls": 1, "errors": 1, "error_share": 1.0, "denied": 0, "denial_share": 0.0,
                       "failures": {"unknown_tool": 1}},
    }  # fmt: skip
    assert isinstance(figures["tools"]["Read"]["median_ms"], int)  # the valid Read ran; the others never did
    assert figures["tools"]["Bash"]["median_ms"] is None
    assert figures["edit"] == {
        "calls": 2, "applied": 1, "not_found": 1, "not_unique": 0, "stale": 0, "not_read": 0,
        "other_errors": 0, "unrecorded_errors": 0, "apply_rate": 0.5,
    }  # fmt: skip
    model = figures["models"]["claude-sonnet-5-5"]
    assert {k: model[k] for k in ("requests", "tool_calls", "invalid_input", "invalid_input_rate", "unknown_tool")} == {
        "requests": 6, "tool_calls": 6, "invalid_input": 1, "invalid_input_rate": 0.1667, "unknown_tool": 1,
    }  # fmt: skip
    assert model["cut_off"] == 0 and figures["cut_off"] == 0
    assert all(isinstance(model[key][p], int) for key in ("first_token_ms", "request_ms") for p in ("p50", "p90"))
    assert figures["tokens"] == {"input": 6000, "cache_creation": 0, "cache_read": 0, "output": 600, "total": 6600}
    spent = Usage(input_tokens=6000, output_tokens=600)
    assert figures["cost_usd"] == round(model_info("claude-sonnet-5-5").cost_usd(spent), 6)
    [session] = figures["per_session"]
    assert (session["title"], session["turns"], session["tokens"]) == ("tidy up the notes", 6, 6600)


# ------------------------------------------------------------------ generated transcripts


def write(path: Path, *records: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))


def header(sid: str, model: str = "claude-sonnet-5-5", when: str = "2026-03-01T10:00:00+00:00") -> dict[str, Any]:
    return {"type": "session", "time": when, "session_id": sid, "version": 1, "model": model, "system": []}


def usage(inp: int, out: int, read: int = 0, made: int = 0) -> dict[str, int]:
    return {"input_tokens": inp, "output_tokens": out, "cache_read_input_tokens": read,
            "cache_creation_input_tokens": made}  # fmt: skip


def prompt(when: str, words: str = "go") -> dict[str, Any]:
    return {"type": "message", "time": when, "message": {"role": "user", "content": [{"type": "text", "text": words}]}}


def answer(when: str, *calls: tuple[str, str], spent: dict[str, int], **fields: Any) -> dict[str, Any]:
    content = [{"type": "tool_use", "id": i, "name": n, "input": {}} for i, n in calls] or [
        {"type": "text", "text": "ok"}
    ]
    return {
        "type": "message",
        "time": when,
        "message": {"role": "assistant", "content": content},
        "usage": spent,
        **fields,
    }


def results(when: str, *errors: tuple[str, bool], **fields: Any) -> dict[str, Any]:
    content = [
        {"type": "tool_result", "tool_use_id": i, "content": "x", **({"is_error": True} if e else {})}
        for i, e in errors
    ]
    return {"type": "message", "time": when, "message": {"role": "user", "content": content}, **fields}


def request(first: int, whole: int, stop: str = "tool_use", model: str = "claude-sonnet-5-5") -> dict[str, Any]:
    return {"model": model, "stop_reason": stop, "first_token_ms": first, "duration_ms": whole, "retries": 0}


def generated_project(home: Path, project: Path) -> Path:
    """Two sessions on two days: one with a sub-agent and a compaction, one stopped by the turn limit."""
    from agentcli.context.paths import project_state_dir

    folder = project_state_dir(project, home / ".agentcli")
    day1, day2 = "2026-03-01T10:00:00+00:00", "2026-03-02T10:00:00+00:00"
    write(
        folder / "s1.jsonl",
        header("s1"),
        {"type": "title", "time": day1, "title": "first task"},
        prompt(day1),
        answer(day1, ("a", "Edit"), ("b", "Bash"), spent=usage(1000, 100, read=3000), requests=[request(100, 400)]),
        results(day1, ("a", True), ("b", True),
                calls={"a": {"ms": 5, "failure": "not_unique"}, "b": {"failure": "denied"}}),
        answer(day1, ("c", "Task"), spent=usage(500, 50),
               requests=[request(300, 800, "max_tokens"), request(200, 600)]),
        results(day1, ("c", False), calls={"c": {"ms": 900}}, subagents={"c": "/moved/away/agent-1.jsonl"},
                usage=usage(2000, 200)),  # the sub-agent's tokens, as the session counts them
        answer(day1, spent=usage(100, 10), requests=[request(50, 200, "end_turn")]),
        {"type": "run", "time": day1, "stop": "done", "turns": 4},
        {"type": "compact", "time": day1, "trigger": "auto", "tokens_before": 9000, "tokens_after": 1000,
         "usage": usage(800, 80)},
        prompt(day1),
        answer(day1, spent=usage(100, 10), requests=[request(60, 300, "end_turn")]),
        {"type": "run", "time": day1, "stop": "done", "turns": 1},
    )  # fmt: skip
    write(
        folder / "s1" / "subagents" / "agent-1.jsonl",
        header("agent-1", model="claude-haiku-5-5"),
        prompt(day1),
        answer(day1, ("s", "Read"), spent=usage(1500, 150), requests=[request(40, 100, model="claude-haiku-5-5")]),
        results(day1, ("s", False), calls={"s": {"ms": 7}}),
        answer(day1, spent=usage(500, 50), requests=[request(30, 90, "end_turn", model="claude-haiku-5-5")]),
    )
    write(
        folder / "s2.jsonl",
        header("s2", when=day2),
        prompt(day2, "second task"),
        answer(day2, ("d", "Edit"), spent=usage(1000, 100), requests=[request(500, 1000)]),
        results(day2, ("d", False), calls={"d": {"ms": 3}}),
        {"type": "run", "time": day2, "stop": "max_turns", "turns": 1},
    )
    return folder


def price(model: str, **counts: int) -> float:
    return model_info(model).cost_usd(Usage(**counts))


def test_generated_transcripts_give_their_known_counts(run_main: RunMain, home: Path, project: Path) -> None:
    generated_project(home, project)

    figures = stats(run_main)

    assert (figures["sessions"], figures["turns"], figures["tasks"]) == (2, 5, 3)
    assert figures["turns_per_task"] == {"finished": 2, "median": 1, "p90": 4}
    assert figures["stops"]["done"] == 2 and figures["stops"]["max_turns"] == 1
    assert sum(figures["stops"].values()) == 3
    assert figures["cut_off"] == 1
    assert figures["tool_calls"] == {
        "total": 5, "in_subagents": 1, "unrecorded": 0, "failed": 2, "failed_share": 0.4, "denied": 1,
        "denied_share": 0.2,
    }  # fmt: skip
    assert figures["tools"]["Edit"] == {
        "calls": 2, "errors": 1, "error_share": 0.5, "denied": 0, "denial_share": 0.0, "median_ms": 3,
        "failures": {"not_unique": 1},
    }  # fmt: skip
    assert figures["tools"]["Bash"]["denial_share"] == 1.0 and figures["tools"]["Bash"]["median_ms"] is None
    assert (
        figures["edit"]["applied"] == 1 and figures["edit"]["not_unique"] == 1 and figures["edit"]["apply_rate"] == 0.5
    )
    sonnet, haiku = figures["models"]["claude-sonnet-5-5"], figures["models"]["claude-haiku-5-5"]
    assert sonnet["requests"] == 6 and sonnet["cut_off"] == 1
    assert sonnet["first_token_ms"] == {"p50": 100, "p90": 500}  # nearest rank of 50 60 100 200 300 500
    assert sonnet["request_ms"] == {"p50": 400, "p90": 1000}  # 200 300 400 600 800 1000
    assert haiku["requests"] == 2 and haiku["tool_calls"] == 1 and haiku["first_token_ms"] == {"p50": 30, "p90": 40}
    assert figures["latency"]["first_token_ms"] == {"p50": 60, "p90": 500}  # the 8 requests together
    # The sub-agent's 2,200 tokens are in the session once (taken out of the Task results' record),
    # priced at its own model.
    assert figures["tokens"] == {"input": 5500, "cache_creation": 0, "cache_read": 3000, "output": 550, "total": 9050}
    assert figures["cache_read_share"] == round(3000 / 8500, 4)
    main_s1 = price("claude-sonnet-5-5", input_tokens=2500, output_tokens=250, cache_read_input_tokens=3000)
    sub = price("claude-haiku-5-5", input_tokens=2000, output_tokens=200)
    s2 = price("claude-sonnet-5-5", input_tokens=1000, output_tokens=100)
    assert figures["subagents"] == {"transcripts": 1, "tokens": 2200, "cost_usd": round(sub, 6)}
    assert figures["cost_usd"] == round(main_s1 + sub + s2, 6)
    assert figures["per_day"] == [
        {"day": "2026-03-01", "sessions": 1, "tokens": 7950, "cost_usd": round(main_s1 + sub, 6)},
        {"day": "2026-03-02", "sessions": 1, "tokens": 1100, "cost_usd": round(s2, 6)},
    ]
    first, second = figures["per_session"]
    assert (first["id"], first["title"], first["turns"], first["tokens"], first["subagent_tokens"]) == (
        "s1",
        "first task",
        4,
        7950,
        2200,
    )
    assert (second["title"], second["tokens"]) == ("second task", 1100)
    assert figures["compactions"] == {
        "count": 1, "auto": 1, "manual": 0, "tokens_before": 9000, "tokens_after": 1000, "summary_tokens": 880,
        "cost_usd": round(price("claude-sonnet-5-5", input_tokens=800, output_tokens=80), 6),
    }  # fmt: skip


def test_the_tables_show_the_same_figures(run_main: RunMain, home: Path, project: Path) -> None:
    generated_project(home, project)

    done = run_main("stats", env=UTC)

    assert done.returncode == 0, done.stderr
    shown = done.stdout
    assert re.search(r"Sessions\s+2\n", shown) and "Tool calls" in shown and "Edit: 50% applied" in shown
    assert "median 1, p90 4" in shown
    bash = next(line for line in shown.splitlines() if line.strip().startswith("Bash"))
    assert "100%" in bash and "█" in bash
    assert "max-turns" in shown and "2026-03-02" in shown and "first task" in shown
    assert "Sub-agents: 1 transcripts, 2,200 tokens" in shown
    assert "Traceback" not in done.stderr


def test_an_older_transcript_reports_what_it_did_not_record_as_unknown(
    run_main: RunMain, home: Path, project: Path
) -> None:
    from agentcli.context.paths import project_state_dir

    when = "2026-03-01T10:00:00+00:00"
    write(
        project_state_dir(project, home / ".agentcli") / "old.jsonl",
        header("old"),
        prompt(when),
        answer(when, ("a", "Edit"), ("b", "Bash"), spent=usage(1000, 100)),
        results(when, ("a", True), ("b", False)),
        answer(when, spent=usage(100, 10)),
    )

    figures = stats(run_main)

    assert (figures["sessions"], figures["turns"]) == (1, 2)
    assert figures["tasks"] is None and figures["stops"] is None and figures["cut_off"] is None
    assert figures["turns_per_task"] == {"finished": None, "median": None, "p90": None}
    assert figures["tools"]["Bash"] == {
        "calls": 1, "errors": 0, "error_share": 0.0, "denied": None, "denial_share": None, "median_ms": None,
        "failures": {},
    }  # fmt: skip
    assert figures["edit"]["applied"] == 0 and figures["edit"]["unrecorded_errors"] == 1
    model = figures["models"]["claude-sonnet-5-5"]
    assert model["invalid_input"] is None and model["unknown_tool"] is None and model["requests"] == 0
    assert model["first_token_ms"] == {"p50": None, "p90": None}
    assert figures["tokens"]["total"] == 1210  # usage was recorded before the new fields
    shown = run_main("stats", env=UTC).stdout
    assert "—" in shown and "not recorded" in shown


def test_the_run_wide_failed_and_denied_calls_are_counted_and_new_transcripts_lack_nothing(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    (project / "notes.txt").write_text("hello\n")
    model.script(
        scripted.reply(scripted.tool_use("Read", {"file_path": "notes.txt"})),
        scripted.reply(scripted.tool_use("Read", {"file_path": "absent.txt"})),  # fails
        scripted.reply(scripted.tool_use("Bash", {"command": "rm -rf build"})),  # denied: no rule allows it in run
        scripted.reply(scripted.tool_use("Glob", {"pattern": "*.txt"})),
        scripted.reply(scripted.text("Done.")),
    )
    assert run_agent("look around").returncode == 0
    model.script(scripted.reply(scripted.text("Hello.")))  # a turn without tool calls
    assert run_agent("hi").returncode == 0

    figures = json.loads(stats_text(project, all_projects=False, since=None, as_json=True, width=100))
    shown = stats_text(project, all_projects=False, since=None, as_json=False, width=100)

    assert figures["tool_calls"] == {
        "total": 4, "in_subagents": 0, "unrecorded": 0, "failed": 2, "failed_share": 0.5, "denied": 1,
        "denied_share": 0.25,
    }  # fmt: skip
    assert figures["not_recorded"] == []
    assert re.search(r"Tool calls failed\s+2 of 4 \(50%\)\n", shown), shown
    assert re.search(r"Tool calls denied\s+1 of 4 \(25%\)\n", shown), shown
    assert "not recorded" not in shown and "—" not in shown, shown


def test_a_session_without_tool_calls_shows_nothing_unknown(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    model.script(scripted.reply(scripted.text("Hello.")))
    assert run_agent("hi").returncode == 0

    shown = stats_text(project, all_projects=False, since=None, as_json=False, width=100)

    assert re.search(r"Tool calls failed\s+0\n", shown) and re.search(r"Tool calls denied\s+0\n", shown), shown
    assert re.search(r"claude-sonnet-5-5\s+1\s.*\s0\s+0\s*\n", shown), shown  # 0 invalid inputs, 0 unknown tools
    assert "—" not in shown and "not recorded" not in shown, shown


def test_a_session_whose_tasks_did_not_finish_says_so(home: Path, project: Path, in_process_env: None) -> None:
    from agentcli.context.paths import project_state_dir

    when = "2026-03-01T10:00:00+00:00"
    write(
        project_state_dir(project, home / ".agentcli") / "cut.jsonl",
        header("cut"),
        prompt(when),
        answer(when, spent=usage(100, 10), requests=[request(10, 20, "end_turn")]),
        {"type": "run", "time": when, "stop": "interrupted", "turns": 1},
    )

    shown = stats_text(project, all_projects=False, since=None, as_json=False, width=100)

    assert re.search(r"Turns per finished task\s+none finished\n", shown) and "—" not in shown, shown


def test_what_older_transcripts_did_not_record_is_named(home: Path, project: Path, in_process_env: None) -> None:
    from agentcli.context.paths import project_state_dir

    when = "2026-03-01T10:00:00+00:00"
    folder = project_state_dir(project, home / ".agentcli")
    write(
        folder / "old.jsonl",
        header("old"),
        prompt(when),
        answer(when, ("a", "Edit"), ("b", "Bash"), spent=usage(1000, 100)),
        results(when, ("a", True), ("b", False)),
        answer(when, spent=usage(100, 10)),
    )
    write(
        folder / "new.jsonl",
        header("new"),
        prompt(when),
        answer(when, ("c", "Bash"), spent=usage(100, 10), requests=[request(10, 20)]),
        results(when, ("c", True), calls={"c": {"failure": "denied"}}),
        {"type": "run", "time": when, "stop": "done", "turns": 1},
    )

    figures = json.loads(stats_text(project, all_projects=False, since=None, as_json=True, width=200))
    shown = stats_text(project, all_projects=False, since=None, as_json=False, width=200)

    assert figures["not_recorded"] == ["calls"]  # the new session recorded its task and its request
    assert figures["tool_calls"]["failed"] == 2 and figures["tool_calls"]["failed_share"] == round(2 / 3, 4)
    assert figures["tool_calls"]["denied"] == 1 and figures["tool_calls"]["denied_share"] == 1.0  # of the recorded
    assert "— not recorded: 2 tool calls' durations, denials and failure kinds." in shown
    assert "tasks and how they stopped" not in shown
    (folder / "new.jsonl").unlink()
    older = stats_text(project, all_projects=False, since=None, as_json=False, width=200)
    assert (
        "— not recorded: tasks and how they stopped; model request timings and answers cut off; 2 tool calls' "
        "durations, denials and failure kinds." in older
    )
    assert re.search(r"Tool calls denied\s+—\n", older), older


def test_an_empty_project_says_so_and_exits_0(run_main: RunMain) -> None:
    done = run_main("stats")

    assert done.returncode == 0, done.stderr
    assert "No sessions recorded for" in done.stdout and "--all" in done.stdout
    assert stats(run_main)["sessions"] == 0


def test_since_keeps_only_what_was_recorded_since(run_main: RunMain, home: Path, project: Path) -> None:
    import datetime

    from agentcli.context.paths import project_state_dir

    now = datetime.datetime.now(datetime.UTC)
    old, new = (now - datetime.timedelta(days=10)).isoformat(), (now - datetime.timedelta(hours=1)).isoformat()
    folder = project_state_dir(project, home / ".agentcli")
    write(folder / "old.jsonl", header("old", when=old), prompt(old), answer(old, spent=usage(5000, 500)))
    write(
        folder / "new.jsonl",
        header("new", when=new),
        prompt(new),
        answer(new, spent=usage(1000, 100), requests=[request(10, 20, "end_turn")]),
        {"type": "run", "time": new, "stop": "interrupted", "turns": 1},
    )

    assert stats(run_main)["sessions"] == 2
    recent = stats(run_main, "--since", "7d")
    assert recent["sessions"] == 1 and recent["tokens"]["total"] == 1100
    assert recent["stops"]["interrupted"] == 1
    bad = run_main("stats", "--since", "last tuesday")
    assert bad.returncode == 2 and "--since 'last tuesday' is not a period or a date" in bad.stderr


def test_all_reads_every_projects_sessions(run_main: RunMain, home: Path, project: Path, tmp_path: Path) -> None:
    from agentcli.context.paths import project_state_dir

    other = tmp_path / "other"
    other.mkdir()
    when = "2026-03-01T10:00:00+00:00"
    for where, sid in ((project, "here"), (other, "there")):
        write(project_state_dir(where, home / ".agentcli") / f"{sid}.jsonl", header(sid), prompt(when),
              answer(when, spent=usage(100, 10)))  # fmt: skip

    assert [s["id"] for s in stats(run_main)["per_session"]] == ["here"]
    everywhere = stats(run_main, "--all")
    assert sorted(s["id"] for s in everywhere["per_session"]) == ["here", "there"]
    assert everywhere["projects"] == 2 and everywhere["tokens"]["total"] == 220


def test_slash_stats_shows_the_current_sessions_card(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "notes.txt").write_text("hello\n")
    fake_api.script(
        reply(tool_use("Glob", {"pattern": "*.txt"}, id="g1"), usage=ONE),
        reply(text("Answer-A"), usage=ONE),
    )
    repl = start_repl()
    repl.submit("hi")
    repl.wait_for_prompt("Answer-A")

    repl.submit("/stats")

    screen = repl.wait_for("Tool calls")
    assert "This session (" in screen and "Glob" in screen
    assert re.search(r"Tasks \(prompts run\)\s+1", screen) and re.search(r"Turns\s+2", screen)
