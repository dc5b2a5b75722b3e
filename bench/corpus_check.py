"""Load every file of the corpus (bench/corpus.py) with agentcli's loaders and say how many behave
as Claude Code documents, by kind, with the reasons the others do not.

    .venv/bin/python bench/corpus_check.py [--corpus DIR] [--json FILE] [--examples N]

Each file is put where a Claude Code user would have it, alone in a throw-away project
(`.claude/commands/<its path below the collection's commands folder>`, `.claude/agents/…`, or its
skill folder as `.claude/skills/<name>/`), with an empty home, and read through agentcli's
public loaders only (`load_skills`, `load_agent_catalog`, `expand_skill`, `render_skill_list`),
so the same script measures any version of agentcli: run it with `PYTHONPATH` pointing at
another checkout to get that version's counts.

What "behaves" means, per kind (what Claude Code's documentation says of such a file):
- command: it loads; it answers to `/<file name>` typed (also in a subfolder); its `description` and
  `argument-hint` are the text written; its `allowed-tools` rules are understood; it expands with
  arguments (a `!` command answered by a stub, an `@file` that is not there left as a note).
- agent (only files with the `name` and `description` Claude Code requires): it loads under its
  `name` (also from a subfolder), with the description written, and can be started with the
  tools it names (the built-in tools there are; an MCP tool counts as available).
- skill: it loads as `/<folder name>` (typed too), with the description written, is listed to the model
  unless `disable-model-invocation: true`, and expands with arguments.
A `model:` alias (`sonnet`, `opus`, `haiku`) is counted apart: agentcli resolving it is not
measured here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # appended: a PYTHONPATH given for another checkout comes first

CORPUS = ROOT / "bench" / ".corpus"
ALIASES = {"sonnet", "opus", "haiku"}
MCP = "mcp__"


@dataclass
class Outcome:
    kind: str
    path: str
    counted: bool = True
    """False for a file Claude Code would not load either (an agent without name or description)."""
    loads: bool = False
    problems: list[str] = field(default_factory=list)
    alias: bool = False

    @property
    def behaves(self) -> bool:
        return self.counted and self.loads and not self.problems


# ----------------------------------------------------------------------------- reading as documented


def reference_fields(text: str) -> dict[str, Any] | None:
    """The frontmatter as written: YAML, or, where it is not YAML, each `key: rest of line` (with
    the lines that continue it: indented, or inside an `<example>` the value opened). None when
    the file has no frontmatter."""
    import yaml

    text = text.removeprefix("\ufeff")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return None
    raw = lines[1:end]
    try:
        data = yaml.safe_load("\n".join(raw))
        if isinstance(data, dict):
            return {str(k): v for k, v in data.items()}
    except yaml.YAMLError:
        pass
    fields: dict[str, Any] = {}
    key = None
    for line in raw:
        match = re.match(r"([A-Za-z_][\w.-]*)\s*:(?:\s+(.*))?$", line)
        inside_example = key is not None and fields[key].count("<example>") > fields[key].count("</example>")
        if match and not line[:1].isspace() and not inside_example:
            key = match.group(1)
            fields[key] = (match.group(2) or "").strip()
        elif key is not None and line.strip() and not line.startswith("#"):
            fields[key] = f"{fields[key]} {line.strip()}".strip()
    return fields


def words(value: object) -> list[str]:
    """A field's words, for comparing a reading with what was written (quotes, brackets and
    spacing aside)."""
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    return re.findall(r"[^\s\"'\[\],]+", str(value or ""))


def same_text(written: object, read: str) -> bool:
    return words(written) == words(read)


# ----------------------------------------------------------------------------- checking


@contextmanager
def project_with(kind: str, relative: str, source: Path, scratch: Path) -> Iterator[tuple[Path, Path, Path]]:
    """(project, agentcli home, where the file is in the project) for one corpus file."""
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        project, home = Path(tmp) / "project", Path(tmp) / "home"
        project.mkdir()
        (home / ".agentcli").mkdir(parents=True)
        if kind == "skill":
            placed = project / ".claude" / "skills" / relative
            placed.parent.mkdir(parents=True)
            placed.symlink_to(source.parent, target_is_directory=True)
            placed = placed / "SKILL.md"
        else:
            placed = project / ".claude" / ("commands" if kind == "command" else "agents") / relative
            placed.parent.mkdir(parents=True, exist_ok=True)
            placed.write_bytes(source.read_bytes())
        old = {name: os.environ.get(name) for name in ("HOME", "AGENTCLI_HOME")}
        os.environ.update(HOME=str(home), AGENTCLI_HOME=str(home / ".agentcli"))
        try:
            yield project, home / ".agentcli", placed
        finally:
            for name, value in old.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def rule_problems(rules: tuple[str, ...]) -> list[str]:
    from agentcli.permissions.rules import RuleError, RuleSource, parse_rule

    problems = []
    for rule in rules:
        try:
            parse_rule(rule, "allow", RuleSource("session", "corpus"))
        except RuleError:
            problems.append("allowed-tools: a rule agentcli does not understand")
    return problems[:1]


def typing_problems(name: str) -> list[str]:
    """Whether `/name args`, typed, is read as running `name`."""
    from agentcli.context.session import parse_command

    command = parse_command(f"/{name} some-arg")
    return [] if command is not None and command[0] == name else ["its name cannot be typed as /<name>"]


def expansion_problems(skill: Any, project: Path) -> list[str]:
    from agentcli.skills.expand import expand_skill

    try:
        expand_skill(skill, "first-arg second-arg", project, lambda command: "(output)")
    except Exception as error:
        text = str(error)
        if "does not exist" in text:
            return ["an @file that does not exist aborts the command"]
        return [f"expansion fails: {_gist(text)}"]
    return []


def check_command(entry: dict[str, str], source: Path, scratch: Path) -> Outcome:
    from agentcli.skills.loader import load_skills

    outcome = Outcome("command", f"{entry['source']}:{entry['path']}")
    written = reference_fields(source.read_text(errors="replace")) or {}
    outcome.alias = str(written.get("model", "")).strip() in ALIASES
    with project_with("command", entry["relative"], source, scratch) as (project, home, _):
        catalog = load_skills(project, home)
        parts = Path(entry["relative"]).with_suffix("").parts
        full, short = ":".join(parts), parts[-1]
        if full in catalog.errors:
            outcome.problems.append(_load_error(str(catalog.errors[full])))
            return outcome
        skill = catalog.skills.get(full)
        if skill is None:
            outcome.problems.append("not found")
            return outcome
        outcome.loads = True
        if catalog.get(short) is not skill:
            outcome.problems.append("a command in a subfolder does not answer to /<file name>")
        outcome.problems += typing_problems(short)
        _compare(outcome, written, "description", skill.description)
        _compare(outcome, written, "argument-hint", skill.argument_hint)
        outcome.problems += rule_problems(skill.allowed_tools)
        outcome.problems += expansion_problems(skill, project)
    return outcome


def check_agent(entry: dict[str, str], source: Path, scratch: Path, tool_names: set[str]) -> Outcome:
    from agentcli.agents.definitions import load_agent_catalog

    outcome = Outcome("agent", f"{entry['source']}:{entry['path']}")
    written = reference_fields(source.read_text(errors="replace")) or {}
    name = " ".join(str(written.get("name") or "").split())
    if not name or not str(written.get("description") or "").strip():
        outcome.counted = False  # Claude Code requires both
        return outcome
    outcome.alias = str(written.get("model", "")).strip() in ALIASES
    with project_with("agent", entry["relative"], source, scratch) as (project, home, placed):
        catalog = load_agent_catalog(project, home)
        agent = catalog.get(name)
        if agent is None or Path(agent.source) != placed:
            why = next((i.problem for i in catalog.invalid if i.path == placed), None)
            outcome.problems.append(_load_error(why) if why else "not found (under its name)")
            return outcome
        outcome.loads = True
        _compare(outcome, written, "description", agent.description)
        outcome.problems += tool_problems(agent, tool_names)
    return outcome


def tool_problems(agent: Any, tool_names: set[str]) -> list[str]:
    """Whether the sub-agent can start with what its `tools:` names (an MCP tool counts as there).
    A version of agentcli with `agents.tool_choice` starts it with the tools it has, as Claude Code
    does (`tools: []`: with none), and cannot only when none it names is there; an earlier one
    could not start it when any was missing."""
    named = list(agent.tools or ())
    there = sorted(tool_names | {t for t in named if t.startswith(MCP)})
    try:
        from agentcli.agents.tool_choice import choose_tools
    except ImportError:
        missing = [t for t in named if t not in there]
        return ["tools: names a tool agentcli does not have, so it cannot start"] if missing else []
    choice = choose_tools(there, agent.tools, getattr(agent, "disallowed_tools", ()))
    if choice.unknown and not choice.names:  # `tools: []` is no tools, as Claude Code has it
        return ["tools: names only tools agentcli does not have, so it cannot start"]
    return []


def check_skill(entry: dict[str, str], source: Path, scratch: Path) -> Outcome:
    from agentcli.skills.listing import render_skill_list
    from agentcli.skills.loader import load_skills

    outcome = Outcome("skill", f"{entry['source']}:{entry['path']}")
    written = reference_fields(source.read_text(errors="replace")) or {}
    outcome.alias = str(written.get("model", "")).strip() in ALIASES
    name = entry["relative"]
    with project_with("skill", name, source, scratch) as (project, home, placed):
        catalog = load_skills(project, home)
        if name in catalog.errors:
            outcome.problems.append(_load_error(str(catalog.errors[name])))
            return outcome
        skill = catalog.get(name)
        if skill is None or skill.path != placed:
            outcome.problems.append("not found (skill folders are not read)")
            return outcome
        outcome.loads = True
        outcome.problems += typing_problems(name)
        _compare(outcome, written, "description", skill.description)
        hidden = str(written.get("disable-model-invocation", "")).strip().lower() == "true"
        listed = f"/{name}" in render_skill_list(catalog)
        if listed == hidden:
            outcome.problems.append("listed to the model against disable-model-invocation" if hidden else "not listed")
        outcome.problems += rule_problems(skill.allowed_tools)
        outcome.problems += expansion_problems(skill, project)
    return outcome


def _compare(outcome: Outcome, written: dict[str, Any], key: str, read: str) -> None:
    if written.get(key) not in (None, "") and not same_text(written[key], read):
        outcome.problems.append(f"{key} is not the text written")


def _load_error(text: str) -> str:
    if "Malformed frontmatter" in text or "not valid YAML" in text:
        return "not loaded: frontmatter is not strict YAML"
    if "names Task" in text:
        return "not loaded: tools names Task"
    return f"not loaded: {_gist(text)}"


def _gist(text: str) -> str:
    """A message without its paths and quoted values, so that like failures count together."""
    text = re.sub(r"/\S+", "<path>", text.splitlines()[0])
    text = re.sub(r"'[^']*'|`[^`]*`|\"[^\"]*\"", "<…>", text)
    return text[:90]


# ----------------------------------------------------------------------------- report


def check_all(corpus: Path, progress: Callable[[int], None] = lambda n: None) -> list[Outcome]:
    from agentcli.agents.sources import builtin_source

    tool_names = {tool.name for tool in builtin_source().tools()} | {"TodoWrite", "Skill"}
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="agentcli-corpus-") as scratch:
        for index, entry in enumerate(manifest["files"]):
            source = corpus / entry["source"].replace("/", "+") / entry["path"]
            if entry["kind"] == "command":
                outcomes.append(check_command(entry, source, Path(scratch)))
            elif entry["kind"] == "agent":
                outcomes.append(check_agent(entry, source, Path(scratch), tool_names))
            else:
                outcomes.append(check_skill(entry, source, Path(scratch)))
            progress(index)
    return outcomes


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    kinds: dict[str, Any] = {}
    for kind in ("command", "agent", "skill"):
        mine = [o for o in outcomes if o.kind == kind]
        counted = [o for o in mine if o.counted]
        reasons: Counter[str] = Counter(p for o in counted for p in dict.fromkeys(o.problems))
        kinds[kind] = {
            "files": len(mine),
            "valid_for_claude_code": len(counted),
            "load": sum(o.loads for o in counted),
            "behave": sum(o.behaves for o in counted),
            "model_alias": sum(o.alias for o in counted),
            "reasons": dict(reasons.most_common()),
        }
    return kinds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--json", type=Path, help="write the counts and every file's outcome here")
    parser.add_argument("--examples", type=int, default=0, help="show N files for each reason")
    args = parser.parse_args(argv)
    if not (args.corpus / "MANIFEST.json").exists():
        print(f"No corpus in {args.corpus}: run bench/corpus.py first.", file=sys.stderr)
        return 2
    import agentcli

    outcomes = check_all(args.corpus)
    counts = summary(outcomes)
    print(f"agentcli from {Path(agentcli.__file__).parent}")
    print(f"{'kind':8} {'files':>6} {'valid':>6} {'load':>6} {'behave':>7} {'alias':>6}")
    for kind, row in counts.items():
        print(
            f"{kind:8} {row['files']:6} {row['valid_for_claude_code']:6} {row['load']:6} {row['behave']:7} "
            f"{row['model_alias']:6}"
        )
    examples: dict[tuple[str, str], list[str]] = defaultdict(list)
    for outcome in outcomes:
        for problem in outcome.problems:
            examples[(outcome.kind, problem)].append(outcome.path)
    for kind, row in counts.items():
        for reason, count in row["reasons"].items():
            print(f"  {kind}: {count:5}  {reason}")
            for path in examples[(kind, reason)][: args.examples]:
                print(f"           {path}")
    if args.json:
        detail = [o.__dict__ | {"behaves": o.behaves} for o in outcomes]
        args.json.write_text(json.dumps({"counts": counts, "files": detail}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
