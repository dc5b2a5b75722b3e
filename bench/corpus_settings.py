"""Claude Code settings and hooks files from public collections, and whether agentcli honours them.

    .venv/bin/python bench/corpus_settings.py fetch [--mirror DIR]   # into bench/.corpus-settings/
    .venv/bin/python bench/corpus_settings.py check [--json] [--as-own]

`fetch` extracts, from each source below at its pinned commit, the settings files and hooks
files it names into `bench/.corpus-settings/<owner>+<name>/` (git-ignored: the files stay their
authors', never committed), with `MANIFEST.json` saying where Claude Code reads each one: a
repository's `.claude/settings.json` is a project file, `.claude/settings.local.json` a local one,
and a personal `settings.json`, a plugin's `hooks/hooks.json` or a template's component a user
file (`~/.claude/settings.json`). By default each repository is cloned from GitHub (blobs fetched
lazily); `--mirror DIR` reads local git directories `DIR/<owner>+<name>/repo` instead.

`check` puts each file where Claude Code reads it, in an empty project with an empty home, and
starts an agentcli session there (the one a `run` or the REPL starts, with a scripted model, the
project's hooks trusted), then compares what is in force with what Claude Code documents for it:

- loads: the session starts (a file agentcli refuses stops it with a usage error);
- rules: every `permissions.allow|ask|deny` rule is in force with its behaviour;
- hooks: every hook handler is registered for its event, matcher and command;
- mode: a `permissions.defaultMode` is the session's mode (`auto` has no equivalent);
- model: a `model` names a model agentcli will send (an alias resolved, not sent as `opus`).

A file "behaves" when it loads and each of these that it uses holds. What was left out is
counted by kind (hook events and types, keys agentcli does not use), and the notices agentcli
gave are counted too. `--as-own` puts every file in agentcli's own places instead
(`$AGENTCLI_HOME/settings.json`, `.agentcli/settings.json`, `.agentcli/settings.local.json`):
what copying the file over to agentcli did before agentcli read Claude Code's.

The numbers are reported in docs/dev/benchmarks.md; a test never asserts them.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / ".corpus-settings"
USER, PROJECT, LOCAL = "user", "project", "local"
ALIASES = frozenset({"default", "best", "fable", "opus", "sonnet", "haiku", "opusplan"})
"""Claude Code's model aliases: sent to an API as written, no model answers to them."""


@dataclass(frozen=True)
class Source:
    repo: str
    commit: str
    globs: tuple[str, ...]
    """`fnmatch` patterns of repository paths (`*` crosses folders)."""
    exclude: tuple[str, ...] = ()


SOURCES = (
    Source(
        "anthropics/claude-code",
        "5cfc0a1905ce0c0a9bd81d8a90fe6b62ff614357",
        ("examples/settings/*.json", "plugins/*/hooks/hooks.json"),
    ),
    Source("anthropics/claude-plugins-official", "340e33aef211d95769d252324854497af871dafe", ("*/hooks/hooks.json",)),
    Source(
        "davila7/claude-code-templates",
        "c2b584d4b8493e98a885b1b9aabb0736bccfe7cf",
        ("cli-tool/components/hooks/*.json", "cli-tool/components/settings/*.json"),
        ("*PATTERNS*", "*schema*"),
    ),
    Source("disler/claude-code-hooks-mastery", "052ad1cbd5aeb1ec4a1def22012d1293c6225625", (".claude/settings.json",)),
    Source("feiskyer/claude-code-settings", "535ca628f79a78aabdd8b0fdf68a6bda378ad32d", ("settings.json",)),
    Source("trailofbits/claude-code-config", "7db11a2803d304d294ebace78c0687e701385947", ("settings.json",)),
    Source("trailofbits/skills", "293fb74c3151cceda32a85a545fe8acd67f8f5c6", ("plugins/*/hooks/hooks.json",)),
    Source("wshobson/agents", "367cb6a4a182cf7e9b0a17c9429f7411ddd9cf35", ("plugins/*/hooks/hooks.json",)),
    Source("obra/superpowers", "44c9b2d6e889982ac18c27d05a19fefe335194e1", ("hooks/hooks.json",)),
    Source(
        "affaan-m/everything-claude-code",
        "c40b6c0cf5968f606ff0d45071a0495b015d0ff5",
        ("hooks/hooks.json", "hooks/*/hooks.json"),
    ),
    Source("greyhaven-ai/claude-code-config", "d093a5a93cf483ed055b2a4fefcad3456ffd855d", ("*/hooks/hooks.json",)),
    Source(
        "alexei-led/claude-code-config", "543c72cf7535c4c223eafa9d85abd7718b62cf12", ("dist/claude/*/hooks/hooks.json",)
    ),
    Source("nathanvale/claude-code-config", "175e1bd20c4d7470c0e5050160dbcf76d40b14cb", ("hooks.json",)),
    Source(
        "philoserf/claude-code-config",
        "b735b1b08e7cec5c71e806158dfbf1341a135e32",
        ("settings.json", ".claude/settings.json"),
    ),
    Source("johnlindquist/claude-hooks", "af5b18d864e2ac7a2bdb0e35d6bb3c31547e145c", (".claude/settings.local.json",)),
    Source("decider/claude-hooks", "5278ebda86544cf3d06cfdde6d1c0f8f36727a46", (".claude/settings.json",)),
    Source("ChrisWiles/claude-code-showcase", "a95518f0cb67e86230119da40429169bc4c35a6f", (".claude/settings.json",)),
    Source("carlrannaberg/claudekit", "f22a4f9030520394bf1a517b46ad7585badf5130", (".claude/settings.json",)),
    Source(
        "centminmod/my-claude-code-setup",
        "8132d26d07117a25f7dc27ead6e1c47b43a60440",
        (".claude/settings.json", ".claude/settings.local.json"),
    ),
    Source("Yugoge/claude-code-config", "e2101a43e13867d4f4b516742f0033969ab7b657", ("settings.json",)),
    Source("YoniChechik/claude-code-config", "dc5070853aad34ee8945664eb93a2abb1f17d669", ("settings.json",)),
    Source(
        "fxmartin/claude-code-config",
        "621b6dd28368bd95b393c87d496a3675a7191773",
        ("settings.json", ".claude/settings.local.json"),
    ),
    Source("ngc-shj/claude-code-config", "fb4f60500448ec8119bc3ab83a7b5e2f4c1a5341", ("settings.json",)),
    Source("thomasholknielsen/claude-code-config", "dac8fcd2ac89c261432e610090b1ac635569ef14", ("settings.json",)),
    Source(
        "jl-cmd/claude-code-config",
        "ea2d227e01ee79f7d0f47361b8508dc28039875c",
        (".claude/settings.json", "packages/*/hooks/hooks.json", "packages/*/settings.json"),
    ),
    Source(
        "cjthompson/claude-code-config",
        "9d6342afbfaf280d3d5f101c50004bf5321cf378",
        (".claude/settings.json", "plugins/*/hooks/hooks.json"),
    ),
    Source("gutyoh/claude-code-config", "42f1c0b63696acf2238497ed85342ce461e300b5", (".claude/settings.json",)),
    Source("myk-org/claude-code-config", "655861de7fa00d3d573f082d54a139507e1dd90d", ("settings.json",)),
    Source(
        "edjchapman/claude-code-config",
        "b85d4a73f3dee182fc8611d8c9018bfd9a1b4a13",
        ("settings.json", "hooks/hooks.json", ".claude/settings.local.json"),
    ),
    Source(
        "seabbs/claude-code-config",
        "b48756c8c4f62bf38d5c066123c5bb5540f1ee8c",
        ("commands/.claude/settings.local.json",),
    ),
    Source("minorun365/my-claude-code-settings", "e5f835e6c3d36d8af673bcdd0db70eeb0c0be500", ("claude/settings.json",)),
    Source(
        "tubone24/claude-code-settings",
        "39c83cb9f2fab1573638504acdb1bc23e351385b",
        ("settings.json", "hooks/hooks.json"),
    ),
    Source("costa92/claude-code-settings", "085b5b9830bbba9f053479bda2a6acdd0a677496", ("plugins/*/hooks/hooks.json",)),
)


# ------------------------------------------------------------------ fetch


def place_of(path: str) -> str:
    """Where Claude Code reads the file at `path` of its repository."""
    if path.endswith(".claude/settings.local.json"):
        return LOCAL
    if path.endswith(".claude/settings.json"):
        return PROJECT
    return USER


def fetch(mirror: Path | None) -> None:
    manifest: list[dict[str, str]] = []
    for source in SOURCES:
        git_dir = _repository(source, mirror)
        names = _git(git_dir, "ls-tree", "-r", "--name-only", source.commit).splitlines()
        chosen = [
            name
            for name in names
            if any(fnmatch.fnmatch(name, glob) for glob in source.globs)
            and not any(fnmatch.fnmatch(name, pattern) for pattern in source.exclude)
        ]
        folder = CORPUS / source.repo.replace("/", "+")
        for name in chosen:
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_git_bytes(git_dir, "show", f"{source.commit}:{name}"))
            manifest.append({"file": str(target.relative_to(CORPUS)), "repo": source.repo, "place": place_of(name)})
        print(f"{source.repo}: {len(chosen)} files")
    (CORPUS / "MANIFEST.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(manifest)} files in {CORPUS}")


def _repository(source: Source, mirror: Path | None) -> Path:
    if mirror is not None:
        return mirror / source.repo.replace("/", "+") / "repo"
    clone = CORPUS / ".git" / source.repo.replace("/", "+")
    if not clone.exists():
        url = f"https://github.com/{source.repo}.git"
        subprocess.run(["git", "clone", "-q", "--bare", "--filter=blob:none", url, str(clone)], check=True)
    return clone


def _git(git_dir: Path, *args: str) -> str:
    return _git_bytes(git_dir, *args).decode()


def _git_bytes(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True).stdout


# ------------------------------------------------------------------ check


@dataclass
class Verdict:
    loads: bool = True
    configures: bool = True
    """It sets rules, hooks, a mode or a model."""
    behaves: bool = True
    problems: list[str] = field(default_factory=list)
    """What Claude Code would do with the file that agentcli does not, one line each."""
    notices: list[str] = field(default_factory=list)


@dataclass
class Tally:
    files: int = 0
    loads: int = 0
    configuring: int = 0
    """Files that set rules, hooks, a mode or a model (the others hold only keys agentcli does not use)."""
    behaves: int = 0
    uses: Counter[str] = field(default_factory=Counter)
    """How many files use rules, hooks, a mode, a model."""
    held: Counter[str] = field(default_factory=Counter)
    """...and of those, how many agentcli honoured."""
    left_out: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)


def check(as_own: bool) -> Tally:
    manifest = json.loads((CORPUS / "MANIFEST.json").read_text())
    tally = Tally()
    for entry in manifest:
        data_text = (CORPUS / entry["file"]).read_text(errors="replace")
        verdict = check_file(data_text, entry["place"], as_own, tally)
        tally.files += 1
        tally.loads += verdict.loads
        tally.configuring += verdict.configures
        tally.behaves += verdict.loads and verdict.behaves and verdict.configures
        if os.environ.get("CORPUS_VERBOSE") and not (verdict.loads and verdict.behaves):
            print(entry["file"], verdict.problems[:3], file=sys.stderr)
    return tally


def check_file(text: str, place: str, as_own: bool, tally: Tally) -> Verdict:
    verdict = Verdict()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        verdict.loads = False
        tally.failures["not a JSON object"] += 1
        return verdict
    with _places() as (project, home):
        _write(_path_for(place, project, home, as_own), text)
        try:
            session_state = _start(project)
        except Exception as error:  # a usage error: the file stops agentcli
            verdict.loads = False
            tally.failures[_kind_of_failure(str(error))] += 1
            return verdict
    _compare(data, session_state, verdict, tally)
    return verdict


@dataclass
class SessionState:
    rules: set[tuple[str, str]]
    hooks: set[tuple[str, str, str]]
    mode: str
    model: str
    notices: list[str]


def _start(project: Path) -> SessionState:
    from agentcli.events import Event, Notice
    from agentcli.providers.scripted import ScriptedModel
    from agentcli.session import Session, SessionOptions

    notices: list[str] = []

    def on_event(event: Event) -> None:
        if isinstance(event, Notice):
            notices.append(event.text)

    with Session(
        SessionOptions(), project, on_event, model=ScriptedModel(), approve_hooks=lambda hooks: True
    ) as session:
        return SessionState(
            rules={(rule.behavior, rule.text) for rule in session.gate.rules.rules},
            hooks={(hook.event, hook.matcher, hook.command) for hook in session.hooks.config.commands},
            mode=session.gate.mode,
            model=session.model_name,
            notices=notices,
        )


def _compare(data: dict[str, Any], state: SessionState, verdict: Verdict, tally: Tally) -> None:
    from agentcli.catalog import is_known

    permissions = data.get("permissions") if isinstance(data.get("permissions"), dict) else {}
    assert isinstance(permissions, dict)
    rules = [
        (behavior, text)
        for behavior in ("allow", "ask", "deny")
        for text in (permissions.get(behavior) or [])
        if isinstance(text, str)
    ]
    if rules:
        tally.uses["rules"] += 1
        missing = [rule for rule in rules if (rule[0], rule[1].strip()) not in state.rules]
        if missing:
            _fail(verdict, tally, "rules", f"rules not in force: {missing[:3]}")
        else:
            tally.held["rules"] += 1
    handlers = list(_handlers(data.get("hooks")))
    if handlers:
        tally.uses["hooks"] += 1
        lost = [h for h in handlers if (h[0], h[1], h[3]) not in state.hooks]
        for event, _, kind, _ in lost:
            tally.left_out[f"hook {event}/{kind}"] += 1
        if lost:
            _fail(verdict, tally, "hooks", f"{len(lost)} of {len(handlers)} hook handlers not registered")
        else:
            tally.held["hooks"] += 1
    mode = permissions.get("defaultMode")
    if isinstance(mode, str):
        tally.uses["mode"] += 1
        if state.mode == ("default" if mode == "manual" else mode):
            tally.held["mode"] += 1
        else:
            _fail(verdict, tally, "mode", f"defaultMode {mode} is {state.mode}")
    model = data.get("model")
    if isinstance(model, str):
        tally.uses["model"] += 1
        if is_known(state.model) or state.model.split("[")[0].lower() not in ALIASES:  # an id passed on as written
            tally.held["model"] += 1
        else:
            _fail(verdict, tally, "model", f"model {model!r} is sent as {state.model!r}")
    verdict.configures = bool(rules or handlers or isinstance(mode, str) or isinstance(model, str))
    for key in data:
        if key not in ("permissions", "hooks", "model", "$schema", "description"):
            tally.left_out[f"key {key}"] += 1
    verdict.notices = state.notices


def _handlers(hooks: object) -> Iterator[tuple[str, str, str, str]]:
    """(event, matcher, type, command) of every handler of a `hooks` value written as Claude Code documents it."""
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            if not isinstance(group, dict):
                continue
            matcher = group.get("matcher", "")
            for handler in group.get("hooks", []) if isinstance(group.get("hooks"), list) else []:
                if isinstance(handler, dict):
                    kind = str(handler.get("type", "command"))
                    yield str(event), matcher if isinstance(matcher, str) else "", kind, str(handler.get("command"))


def _fail(verdict: Verdict, tally: Tally, what: str, problem: str) -> None:
    verdict.behaves = False
    verdict.problems.append(problem)


def _kind_of_failure(message: str) -> str:
    for marker, kind in (
        ("is not a hook event", "unknown hook event"),
        ("agentcli runs only", "hook type other than command"),
        ("unknown key", "unknown key in permissions"),
        ("Invalid permission rule", "a permission rule agentcli could not read"),
        ("Unknown permission mode", "a permission mode agentcli does not have"),
        ("hooks", "a hook agentcli could not read"),
    ):
        if marker in message:
            return kind
    return message.split(":")[0][:80]


@contextlib.contextmanager
def _places() -> Iterator[tuple[Path, Path]]:
    """An empty git project and an empty home, as the environment of this process."""
    with tempfile.TemporaryDirectory(prefix="corpus-") as scratch:
        project, home = Path(scratch) / "project", Path(scratch) / "home"
        project.mkdir()
        (home / ".agentcli").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        saved = {name: os.environ.get(name) for name in ("HOME", "AGENTCLI_HOME", "CLAUDE_CONFIG_DIR")}
        os.environ.update(HOME=str(home), AGENTCLI_HOME=str(home / ".agentcli"))
        os.environ.pop("CLAUDE_CONFIG_DIR", None)
        try:
            yield project, home
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _path_for(place: str, project: Path, home: Path, as_own: bool) -> Path:
    if as_own:
        return {
            USER: home / ".agentcli" / "settings.json",
            PROJECT: project / ".agentcli" / "settings.json",
            LOCAL: project / ".agentcli" / "settings.local.json",
        }[place]
    return {
        USER: home / ".claude" / "settings.json",
        PROJECT: project / ".claude" / "settings.json",
        LOCAL: project / ".claude" / "settings.local.json",
    }[place]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _percent(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.0f}%)" if whole else "0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    fetching = commands.add_parser("fetch")
    fetching.add_argument("--mirror", type=Path)
    checking = commands.add_parser("check")
    checking.add_argument("--json", action="store_true")
    checking.add_argument("--as-own", action="store_true")
    args = parser.parse_args()
    if args.command == "fetch":
        CORPUS.mkdir(parents=True, exist_ok=True)
        fetch(args.mirror)
        return
    os.environ.setdefault("ANTHROPIC_API_KEY", "corpus-check")
    tally = check(args.as_own)
    if args.json:
        shown = {key: dict(value) if isinstance(value, Counter) else value for key, value in tally.__dict__.items()}
        print(json.dumps(shown, indent=1))
        return
    print(
        f"{tally.files} files: {_percent(tally.loads, tally.files)} load; of the {tally.configuring} that set rules, "
        f"hooks, a mode or a model, {_percent(tally.behaves, tally.configuring)} behave as Claude Code documents"
    )
    for what in ("rules", "hooks", "mode", "model"):
        print(f"  {what}: used by {tally.uses[what]}, honoured in {_percent(tally.held[what], tally.uses[what])}")
    if tally.failures:
        print("Why files did not load:")
        for why, count in tally.failures.most_common():
            print(f"  {count:4}  {why}")
    print("Left out most often:")
    for what, count in tally.left_out.most_common(25):
        print(f"  {count:4}  {what}")


if __name__ == "__main__":
    main()
