"""Compaction report: what the first request after a compaction still carries, and its size.

For a set of long scripted sessions (in-process, agentcli's own `Session` with the
`ScriptedModel`, a summary that says nothing specific, so nothing below can come from it),
each compacted with `/compact focus on …` (or automatically, mid-task), it checks the first
request after the compaction for every item that must survive (issue 26):

- each request the user typed, word for word (past the 8k-token budget: the first and latest,
  and a note for the middle, which counts the middle ones as carried by the summary);
- the project's instructions (a CLAUDE.md marker), the task list (each item);
- each file changed, named with its state, and the current content of the most recent ones;
- the skill run, and where the work stood (the last assistant message);
- the summary itself, and the `/compact` focus in the summary request.

and reports the share present (goal 100%), the tokens of the first request after the
compaction (characters / 4, system and tools included) against the request before it, and the
summary request's. A side-by-side with Claude Code's `/compact` on the same sessions is not
run: its compaction needs its own transcript format replayed into it (see bench/RESULTS.md).

Usage: .venv/bin/python bench/compaction_report.py
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.contracts import ModelRequest
from agentcli.providers.scripted import Block, Reply, ScriptedModel, reply, text, tool_use
from agentcli.session import Session, SessionOptions
from bench.loop_overhead import isolated

SUMMARY = "SUMMARY: work happened."
FOCUS = "focus on what is left to do"
INSTRUCTIONS = "INSTRUCTION-MARKER: indent with tabs."
SKILL = "SKILL-MARKER: short functions, no abbreviations."


@dataclass
class Scenario:
    """A scripted session: the requests typed, and for each the model's replies."""

    name: str
    turns: list[tuple[str, list[Reply]]]
    expect_files: list[str] = field(default_factory=list)
    """Files the session changes (each must be named after the compaction)."""
    todos: list[str] = field(default_factory=list)
    skill: bool = False


def todo_call(items: list[str]) -> Block:
    todos = [{"content": c, "status": "pending", "activeForm": c} for c in items]
    return tool_use("TodoWrite", {"todos": todos})


def edit_turns(files: int, rounds: int) -> list[Reply]:
    """Read then edit each of `files` files, `rounds` times over, then say so."""
    replies: list[Reply] = []
    for round_index in range(rounds):
        for n in range(files):
            path = f"src/m{n:02d}.py"
            replies.append(reply(tool_use("Read", {"file_path": path})))
            old, new = f"value = {round_index}", f"value = {round_index + 1}"
            replies.append(reply(tool_use("Edit", {"file_path": path, "old_string": old, "new_string": new})))
    replies.append(reply(text(f"Edited {files} files {rounds} times.")))
    return replies


def scenarios() -> list[Scenario]:
    constraints = [
        "Fix the parser's off-by-one. Never touch tests/: they are the spec.",
        "/house-style",
        "Add a changelog entry; one line, no emoji.",
        "Use British spelling in everything you write from now on.",
    ]
    return [
        Scenario(
            "constraints, task list, skill, two edits",
            [
                (constraints[0], [reply(todo_call(["Fix the parser", "Changelog"])), *edit_turns(2, 1)]),
                (constraints[1], [reply(text("Noted."))]),
                (
                    constraints[2],
                    [
                        reply(tool_use("Write", {"file_path": "CHANGELOG.md", "content": "- fix\n"})),
                        reply(text("Added.")),
                    ],
                ),
                (constraints[3], [reply(text("Understood."))]),
            ],
            expect_files=["src/m00.py", "src/m01.py", "CHANGELOG.md"],
            todos=["Fix the parser", "Changelog"],
            skill=True,
        ),
        Scenario(
            "300 steps over 30 files",
            [("Bump every module's value three times; do not rename anything.", edit_turns(30, 5))],
            expect_files=[f"src/m{n:02d}.py" for n in range(30)],
        ),
        Scenario(
            "60 requests (over the 8k-token budget)",
            [(f"Request {n}: " + "keep the public API stable, " * 40, [reply(text("ok"))]) for n in range(60)],
        ),
    ]


@dataclass
class Outcome:
    name: str
    present: int
    total: int
    missing: list[str]
    before: int
    after: int
    summary: int
    line: str


def tokens(request: ModelRequest) -> int:
    return len(json.dumps([request.system, request.tools, request.messages])) // 4


def run(scenario: Scenario) -> Outcome:
    model = ScriptedModel()
    with tempfile.TemporaryDirectory() as tmp, isolated(Path(tmp), io.StringIO()) as project:
        (project / "CLAUDE.md").write_text(INSTRUCTIONS + "\n")
        for n in range(30):
            (project / "src" / f"m{n:02d}.py").write_text("value = 0\n")
        skill = project / ".agentcli" / "skills" / "house-style"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"---\ndescription: House style\n---\n{SKILL}\n")
        with Session(SessionOptions(permission_mode="acceptEdits"), project, lambda event: None, model=model) as s:
            for request, replies in scenario.turns:
                model.script(*replies)  # each turn's replies end with the model's answer
                s.send(request)
            before = model.requests[-1]
            model.script(reply(text(SUMMARY)), reply(text("Carrying on.")))
            line = s.compact(FOCUS).describe()
            s.send("what is left?")
        summary, after = model.requests[-2:]
    first = "\n".join(block.get("text", "") for block in after.messages[0]["content"])
    checks = _checks(scenario, first, summary)
    missing = [what for what, ok in checks if not ok]
    return Outcome(
        scenario.name,
        len(checks) - len(missing),
        len(checks),
        missing,
        tokens(before),
        tokens(after),
        tokens(summary),
        line,
    )


def _checks(scenario: Scenario, first: str, summary: ModelRequest) -> list[tuple[str, bool]]:
    checks: list[tuple[str, bool]] = []
    left_to_summary = "are left out here to save space; the summary covers them" in first
    for n, (request, _) in enumerate(scenario.turns, 1):
        checks.append((f"request {n} verbatim", request in first or (left_to_summary and f"[{n}]" not in first)))
    checks.append(("instructions", INSTRUCTIONS in first))
    for item in scenario.todos:
        checks.append((f"todo {item}", f"[pending] {item}" in first))
    for path in scenario.expect_files:
        checks.append((f"changed {path}", f"- {path}: " in first))
    recent = scenario.expect_files[-min(len(scenario.expect_files), 2) :]
    for path in recent:
        checks.append((f"content of {path}", f"The current content of {path}" in first))
    if scenario.skill:
        checks.append(("skill in force", SKILL in first))
    checks.append(("where the work stood", "Your last message said:" in first))
    checks.append(("summary", SUMMARY in first))
    checks.append(("/compact focus", FOCUS in json.dumps(summary.messages)))
    return checks


def main(report: Callable[[str], None] = print) -> None:
    report("| session | items present | first request after (tokens) | request before | summary request |")
    report("|---|---|---|---|---|")
    for scenario in scenarios():
        outcome = run(scenario)
        share = f"{outcome.present}/{outcome.total} ({100 * outcome.present / outcome.total:.0f}%)"
        if outcome.missing:
            share += " missing: " + ", ".join(outcome.missing)
        report(f"| {outcome.name} | {share} | {outcome.after:,} | {outcome.before:,} | {outcome.summary:,} |")
        report(f"|  | {outcome.line} | | | |")


if __name__ == "__main__":
    main()
