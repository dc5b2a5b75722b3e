"""The rule to offer for "don't ask again" (and to name in a non-interactive denial).

The narrowest rule that is still useful: `git diff:*` for `git diff HEAD~1`, `npm run
build:*` for `npm run build -- --watch`, the exact command for `rm -rf build` (a prefix
on rm, sudo, bash, python… would allow anything), `Edit(./src/pkg/**)` for an edit there,
`WebFetch(domain:example.com)` for a fetch from that host (saved: one question per host).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentcli.permissions.bash_rules import Coverage, SimpleCommand
from agentcli.permissions.evaluate import Call, Verdict
from agentcli.permissions.paths import escape_pattern
from agentcli.permissions.rules import DOMAIN_PREFIX, DOMAIN_RULE_TOOLS, SESSION, RuleError, parse_rule

Scope = Literal["local", "session"]

NEVER_PREFIX = {
    "rm", "rmdir", "shred", "dd", "mkfs", "chmod", "chown", "chgrp", "kill", "pkill", "killall",
    "sudo", "su", "doas", "eval", "exec", "source", ".", "env", "command", "builtin", "xargs",
    "nohup", "time", "timeout", "nice", "watch", "find", "awk", "gawk", "sed", "perl", "ruby",
    "node", "deno", "php", "lua", "osascript", "ssh", "scp", "rsync", "curl", "wget",
    "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "pypy", "pypy3",
}  # fmt: skip
"""Commands whose prefix rule would allow nearly anything: offer the exact command."""
MODULE_RUNNERS = {"python", "python3", "pypy", "pypy3"}
"""`python -m pytest …` → `python -m pytest:*`."""
SUBCOMMAND_TOOLS = {
    "git", "npm", "pnpm", "yarn", "bun", "npx", "pnpx", "cargo", "go", "docker", "podman",
    "kubectl", "helm", "pip", "pip3", "uv", "poetry", "pipenv", "pdm", "hatch", "conda", "brew",
    "apt", "apt-get", "gh", "terraform", "make", "just", "dotnet", "mvn", "gradle", "rustup",
    "nix", "systemctl", "tox", "nox", "ruff", "mypy",
}  # fmt: skip
RUN_WORDS = {"run", "run-script", "exec", "x"}
"""`npm run build`, `uv run pytest`: the script is part of the useful prefix."""


@dataclass(frozen=True)
class Suggestion:
    rules: tuple[str, ...]
    scope: Scope
    """"local": saved to .agentcli/settings.local.json; "session": kept until the session ends."""

    @property
    def label(self) -> str:
        return ", ".join(self.rules)


def suggest(call: Call, verdict: Verdict) -> Suggestion | None:
    """Rules that would let this call through; None when no rule can, or when the call must be asked
    about every time (an ask rule, a protected path, a command leaving the sandbox)."""
    if verdict.outcome != "ask" or verdict.rule is not None or verdict.protected or verdict.leaves_sandbox:
        return None
    if call.kind == "bash":
        rules = bash_rules_for(call.command, verdict.coverage)
        return Suggestion(rules, "local") if rules else None
    if verdict.hosts and call.tool in DOMAIN_RULE_TOOLS:
        return Suggestion(tuple(domain_rule(call.tool, host) for host in verdict.hosts), "local")
    if verdict.uncovered_paths:
        return Suggestion(_unique(path_rule(call, p) for p in verdict.uncovered_paths), "session")
    return Suggestion((call.tool,), "local" if call.kind == "mcp" else "session")


def domain_rule(tool: str, host: str) -> str:
    """`WebFetch(domain:example.com)`: the rule that lets `tool` contact `host`."""
    return f"{tool}({DOMAIN_PREFIX}{host.strip('[]')})"


def bash_rules_for(command: str, coverage: Coverage | None) -> tuple[str, ...]:
    """One rule per uncovered part, or the whole command exactly if a part cannot have one."""
    parts = coverage.uncovered if coverage is not None else None
    if parts is not None:
        per_part = [part_rule(p) for p in parts]
        if all(per_part):
            return _unique(r for r in per_part if r)
    whole = exact_rule(command.strip())
    return (whole,) if whole else ()


def part_rule(part: SimpleCommand) -> str | None:
    if not part.plain or not part.literal:
        return None
    depth = 0 if part.risky_flag else prefix_depth(part.words)  # a prefix would not cover `--output=…`
    if 0 < depth <= part.literal:
        return f"Bash({shlex.join(part.words[:depth])}:*)"
    if part.literal == len(part.words):
        return f"Bash({shlex.join(part.words)})"
    return None


def prefix_depth(words: tuple[str, ...]) -> int:
    """How many leading words make a useful prefix; 0 means only the exact command is safe."""
    name = words[0]
    if name in NEVER_PREFIX:
        return 3 if name in MODULE_RUNNERS and len(words) > 2 and words[1] == "-m" else 0
    if name not in SUBCOMMAND_TOOLS:
        return 1
    if len(words) < 2 or words[1].startswith("-"):
        return 0
    depth = 3 if words[1] in RUN_WORDS or name == "gh" else 2
    return min(depth, len(words))


def exact_rule(command: str) -> str | None:
    """`Bash(<command>)` if that rule would read back as exactly this one-line command."""
    if not command or "\n" in command:
        return None
    text = f"Bash({command})"
    try:
        rule = parse_rule(text, "allow", SESSION)
    except RuleError:
        return None
    return text if rule.bash is not None and not rule.bash.prefix and rule.bash.text == command else None


def naming_rules(call: Call, verdict: Verdict) -> tuple[str, ...]:
    """Rules that name the protected paths a call writes: the exact Bash command, or each exact file."""
    if call.kind == "bash":
        exact = exact_rule(call.command.strip())
        return (exact,) if exact else ()
    family = "Edit" if call.kind == "edit" else call.tool
    return _unique(f"{family}({_exact_path(p.path, call)})" for p in verdict.protected)


def _exact_path(real: Path, call: Call) -> str:
    if call.inside(real):
        return "./" + escape_pattern(real.relative_to(call.project_real).as_posix())
    return "//" + escape_pattern(real.as_posix().lstrip("/"))


def path_rule(call: Call, real: Path) -> str:
    """`Edit(./src/**)` for an edit in the project; the exact file, or its folder for reads, outside."""
    family = "Edit" if call.kind == "edit" else "Read" if call.kind == "read" else None
    if family is None:
        return call.tool
    if call.inside(real):
        rel = real.relative_to(call.project_real)
        if real.is_dir():
            return f"{family}(./{escape_pattern(rel.as_posix())}/**)" if rel.parts else f"{family}(./**)"
        if len(rel.parts) > 1:
            return f"{family}(./{escape_pattern(rel.parent.as_posix())}/**)"
        return f"{family}(./{escape_pattern(rel.as_posix())})"
    if family == "Read":
        folder = real if real.is_dir() else real.parent
        return f"Read(//{escape_pattern(folder.as_posix().lstrip('/'))}/**)"
    return f"Edit(//{escape_pattern(real.as_posix().lstrip('/'))})"


def _unique(rules: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(rules))
