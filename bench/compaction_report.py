"""Compaction report: what the first request after a compaction still carries, and its size,
for agentcli and, on the same sessions, Claude Code.

Each scripted session (harness-neutral steps: a task list, reads, edits, writes, answers) is run
turn by turn, then compacted with `/compact focus on …`, then asked one more question. The
model's summary says nothing specific ("SUMMARY: work happened."), so whatever the first request
after the compaction holds of the task came from the harness itself. Checked there (issue 26):

- each request the user typed, word for word (agentcli, past its 8k-token budget: the first and
  latest, and a note that the middle ones are left to the summary, which counts them);
- the project's instructions (a CLAUDE.md marker); each item of the task list;
- each file changed, named; the current content of the two changed last (a marker in each);
- the skill run (a marker in its text); where the work stood (the last answer's words);
- the summary itself; and the `/compact` focus, in the summary request.

Reported: the share present (goal 100%), the tokens (characters / 4, system and tools included)
of the request before the compaction, of the summary request and of the first request after.

agentcli runs in-process (`Session` with the `ScriptedModel`); Claude Code (bench/peers.py:
`AGENTCLI_BENCH_CLAUDE`, or bench/.peers) runs as `claude -p` then `claude -p -c` for each turn,
`/compact` included, against the fake server, whose side requests (no tools) get a stock answer.
Without Claude Code its column says why.

Usage: .venv/bin/python bench/compaction_report.py [--no-peers]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.contracts import JSON
from agentcli.providers import scripted
from agentcli.session import Session, SessionOptions
from bench.loop_overhead import isolated
from bench.peers import MODEL, claude_code
from tests import fake_anthropic as fake

SUMMARY = "SUMMARY: work happened."
FOCUS = "focus on what is left to do"
INSTRUCTIONS = "INSTRUCTION-MARKER: indent with tabs."
SKILL = "SKILL-MARKER: short functions, no abbreviations."
LAST_QUESTION = "what is left?"
MODULES = 30

Step = tuple[str, Any]
"""("todo", [items]), ("read", path), ("edit", (path, old, new)), ("write", (path, content)), ("say", text)."""


@dataclass
class Scenario:
    name: str
    turns: list[tuple[str, list[Step]]]
    """Each request typed, and the model's steps answering it (the last one a "say")."""
    changed: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)
    skill: bool = False
    contents: dict[str, str] = field(default_factory=dict)
    """A changed file → a marker of its final content."""


def edits(files: int, rounds: int) -> list[Step]:
    steps: list[Step] = []
    for round_index in range(rounds):
        for n in range(files):
            path = f"src/m{n:02d}.py"
            steps += [("read", path), ("edit", (path, f"value = {round_index}", f"value = {round_index + 1}"))]
    return [*steps, ("say", f"Edited {files} files {rounds} times.")]


def scenarios() -> list[Scenario]:
    first = "Fix the parser's off-by-one. Never touch tests/: they are the spec."
    return [
        Scenario(
            "constraints, task list, skill, edits",
            [
                (first, [("todo", ["Fix the parser", "Add a changelog entry"]), *edits(2, 1)]),
                ("/house-style", [("say", "Noted the house style.")]),
                (
                    "Add a changelog entry; one line, no emoji.",
                    [("write", ("CHANGELOG.md", "- CHANGELOG-MARKER fix\n")), ("say", "Added the changelog entry.")],
                ),
                ("Use British spelling in everything you write from now on.", [("say", "Understood.")]),
            ],
            changed=["src/m00.py", "src/m01.py", "CHANGELOG.md"],
            todos=["Fix the parser", "Add a changelog entry"],
            skill=True,
            contents={"CHANGELOG.md": "CHANGELOG-MARKER", "src/m01.py": "value = 1  # module 1"},
        ),
        Scenario(
            "300 steps over 30 files",
            [("Bump every module's value five times; do not rename anything.", edits(MODULES, 5))],
            changed=[f"src/m{n:02d}.py" for n in range(MODULES)],
            contents={"src/m29.py": "value = 5  # module 29", "src/m28.py": "value = 5  # module 28"},
        ),
        Scenario(
            "60 requests (over the 8k-token budget)",
            [(f"Request {n}: " + "keep the public API stable, " * 40, [("say", "ok")]) for n in range(60)],
        ),
    ]


def prepare(project: Path) -> None:
    (project / "CLAUDE.md").write_text(INSTRUCTIONS + "\n")
    (project / "src").mkdir(exist_ok=True)
    for n in range(MODULES):
        (project / "src" / f"m{n:02d}.py").write_text(f"value = 0  # module {n}\n")
    for tool in (".agentcli", ".claude"):
        skill = project / tool / "skills" / "house-style"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"---\ndescription: House style\n---\n{SKILL}\n")


# ------------------------------------------------------------------ what the first request after carries


@dataclass
class Outcome:
    present: int
    total: int
    missing: list[str]
    before: int
    summary: int
    after: int


def texts(value: object) -> Iterator[str]:
    """Every `text` string (and tool result string) inside a request body."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("text", "content") and isinstance(item, str):
                yield item
            else:
                yield from texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from texts(item)


def tokens(body: JSON) -> int:
    return len(json.dumps([body.get("system"), body.get("tools"), body.get("messages")])) // 4


def judge(scenario: Scenario, before: JSON, summary: JSON, after: JSON) -> Outcome:
    carried = "\n".join(texts([after.get("system"), after["messages"]]))
    left_to_summary = "are left out here to save space; the summary covers them" in carried
    checks: list[tuple[str, bool]] = []
    for n, (request, _) in enumerate(scenario.turns, 1):
        checks.append((f"request {n}", request in carried or (left_to_summary and f"[{n}] " not in carried)))
    checks.append(("instructions", INSTRUCTIONS in carried))
    checks += [(f"todo {item!r}", item in carried) for item in scenario.todos]
    checks += [(f"changed {path}", path in carried) for path in scenario.changed]
    checks += [(f"content of {path}", marker in carried) for path, marker in scenario.contents.items()]
    if scenario.skill:
        checks.append(("skill", SKILL in carried))
    last_words = scenario.turns[-1][1][-1][1]
    checks.append(("where the work stood", last_words in carried))
    checks.append(("summary", SUMMARY in carried))
    checks.append(("/compact focus", FOCUS in json.dumps(summary["messages"])))
    missing = [what for what, ok in checks if not ok]
    return Outcome(len(checks) - len(missing), len(checks), missing, tokens(before), tokens(summary), tokens(after))


# ------------------------------------------------------------------ agentcli


def agentcli_block(step: Step) -> scripted.Block:
    kind, args = step
    if kind == "todo":
        return scripted.tool_use(
            "TodoWrite", {"todos": [{"content": c, "status": "pending", "activeForm": c} for c in args]}
        )
    if kind == "read":
        return scripted.tool_use("Read", {"file_path": args})
    if kind == "edit":
        return scripted.tool_use("Edit", {"file_path": args[0], "old_string": args[1], "new_string": args[2]})
    if kind == "write":
        return scripted.tool_use("Write", {"file_path": args[0], "content": args[1]})
    return scripted.text(args)


def run_agentcli(scenario: Scenario) -> Outcome:
    model = scripted.ScriptedModel()
    with tempfile.TemporaryDirectory() as tmp, isolated(Path(tmp), io.StringIO()) as project:
        prepare(project)
        with Session(SessionOptions(permission_mode="acceptEdits"), project, lambda event: None, model=model) as s:
            for request, steps in scenario.turns:
                model.script(*(scripted.reply(agentcli_block(step)) for step in steps))
                s.send(request)
            model.script(scripted.reply(scripted.text(SUMMARY)), scripted.reply(scripted.text("Carrying on.")))
            before = model.requests[-1]
            s.compact(FOCUS)
            s.send(LAST_QUESTION)
    summary, after = model.requests[-2:]
    as_body: Callable[[Any], JSON] = lambda r: {"system": r.system, "tools": r.tools, "messages": r.messages}  # noqa: E731
    return judge(scenario, as_body(before), as_body(summary), as_body(after))


# ------------------------------------------------------------------ Claude Code


def claude_block(step: Step, project: Path) -> fake.Block:
    kind, args = step
    if kind == "todo":
        return fake.tool_use(
            "TodoWrite", {"todos": [{"content": c, "status": "pending", "activeForm": c} for c in args]}
        )
    if kind == "read":
        return fake.tool_use("Read", {"file_path": str(project / args)})
    if kind == "edit":
        return fake.tool_use(
            "Edit", {"file_path": str(project / args[0]), "old_string": args[1], "new_string": args[2]}
        )
    if kind == "write":
        return fake.tool_use("Write", {"file_path": str(project / args[0]), "content": args[1]})
    return fake.text(args)


class ClaudeRouter:
    """Answers Claude Code's requests: the session's (with tools) from the current turn's steps,
    its compaction's summary request with the summary, anything else with a stock line."""

    def __init__(self) -> None:
        self.steps: list[fake.Block] = []
        self.compacting = False
        self.main: list[JSON] = []
        self.summaries: list[JSON] = []

    def __call__(self, request: fake.RecordedRequest) -> fake.Reply:
        body = request.body
        if self.compacting and "summary" in json.dumps(body["messages"][-1]).lower():
            self.summaries.append(body)
            return fake.reply(fake.text(SUMMARY))
        if not body.get("tools"):
            return fake.reply(fake.text("ok"))
        self.main.append(body)
        return fake.reply(self.steps.pop(0) if self.steps else fake.text("Carrying on."))


def run_claude(binary: str, env: dict[str, str], scenario: Scenario) -> Outcome:
    router = ClaudeRouter()
    with tempfile.TemporaryDirectory() as tmp, fake.FakeAnthropic(api_key="bench") as api:
        root = Path(tmp)
        project, home = root / "project", root / "home"
        project.mkdir()
        home.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        prepare(project)
        api.script(*([router] * 100_000))
        child_env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "AGENTCLI_"))}
        child_env.update(env, HOME=str(home), ANTHROPIC_API_KEY="bench", ANTHROPIC_BASE_URL=api.url)

        def claude(prompt: str, first: bool) -> None:
            flags = ["--model", MODEL, "--permission-mode", "acceptEdits", "--max-turns", "1000"]
            argv = [binary, "-p", *([] if first else ["-c"]), prompt, *flags]
            done = subprocess.run(argv, cwd=project, env=child_env, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                raise RuntimeError(f"claude exited {done.returncode}: {(done.stderr or done.stdout)[-300:]}")

        for index, (request, steps) in enumerate(scenario.turns):
            router.steps = [claude_block(step, project) for step in steps]
            claude(request, first=index == 0)
        before = router.main[-1]
        router.compacting = True
        claude(f"/compact {FOCUS}", first=False)
        router.compacting = False
        claude(LAST_QUESTION, first=False)
    if not router.summaries:
        raise RuntimeError("Claude Code sent no summary request for /compact")
    return judge(scenario, before, router.summaries[-1], router.main[-1])


# ------------------------------------------------------------------ the report


def cell(outcome: Outcome | str) -> str:
    if isinstance(outcome, str):
        return outcome
    share = f"{outcome.present}/{outcome.total} ({100 * outcome.present / outcome.total:.0f}%)"
    requests = [what for what in outcome.missing if what.startswith("request ")]
    others = [what for what in outcome.missing if not what.startswith("request ")]
    named = ([f"{len(requests)} requests"] if len(requests) > 1 else requests) + others
    missing = f"; missing: {', '.join(named)}" if named else ""
    sizes = f"before {outcome.before:,}, summary request {outcome.summary:,}, after {outcome.after:,}"
    return f"{share}{missing}; tokens: {sizes}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-peers", action="store_true", help="agentcli only")
    args = parser.parse_args()
    peer = None if args.no_peers else claude_code(install=True)
    print("| session | agentcli: items present; tokens | Claude Code: items present; tokens |")
    print("|---|---|---|")
    for scenario in scenarios():
        ours = cell(run_agentcli(scenario))
        theirs: Outcome | str = "skipped: --no-peers"
        if peer is not None and peer.ok and peer.prompt_argv is not None:
            binary = peer.prompt_argv("x", Path())[0]
            try:
                theirs = run_claude(binary, peer.env, scenario)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                theirs = f"not measured: {error}"
        elif peer is not None:
            theirs = peer.status
        print(f"| {scenario.name} | {ours} | {cell(theirs)} |", flush=True)


if __name__ == "__main__":
    main()
