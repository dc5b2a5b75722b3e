"""The pure decision for one call: deny rules, plan mode, ask rules, protected paths, allow rules, the mode.

A call that contacts network hosts (its tool is `ContactsHosts`: WebFetch) is asked about per
host: no mode approves a host, only bypassPermissions, an allow rule for the whole tool or one
naming the host (`WebFetch(domain:example.com)`); deny and ask rules naming a host catch it.

No prompting and no I/O beyond resolving paths; the gate turns an "ask" into a question
(or, non-interactively, a denial).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentcli.contracts import JSON, ContactsHosts, FromMcpServer, McpOrigin, Tool, ToolContext, literal_path
from agentcli.permissions.bash_rules import BashPattern, Coverage, RuleMatch, covers, deny_match
from agentcli.permissions.modes import Mode
from agentcli.permissions.paths import real_path, within
from agentcli.permissions.protected import Protected, bash_targets, pattern_names, protected_writes
from agentcli.permissions.rules import EDIT_FAMILY, READ_FAMILY, Rule
from agentcli.permissions.sources import RuleSet

CallKind = Literal["read", "edit", "bash", "mcp", "other"]


@dataclass(frozen=True)
class Call:
    """One tool call as the gate judges it."""

    tool: str
    tool_input: JSON
    kind: CallKind
    read_only: bool
    project: Path
    paths: tuple[Path, ...]
    """Absolute paths the call touches, as named (for read/edit kinds, the project when none given)."""
    real_paths: tuple[Path, ...]
    """The same paths resolved, once (`..` and symlinks): what is judged, and what the tool is handed."""
    project_real: Path
    protected: tuple[Protected, ...] = ()
    """Protected paths the call would write (see `protected`)."""
    origin: McpOrigin | None = None
    """For an MCP tool: its server's and its own names as configured and listed."""
    hosts: tuple[str, ...] = ()
    """Network hosts the call contacts (`ContactsHosts`)."""

    @property
    def command(self) -> str:
        value = self.tool_input.get("command")
        return value if isinstance(value, str) else ""

    @property
    def outside(self) -> tuple[Path, ...]:
        """Touched paths that, after `..` and symlinks, are not in the project."""
        return self.outside_of(self.real_paths)

    def outside_of(self, reals: tuple[Path, ...]) -> tuple[Path, ...]:
        return tuple(p for p in reals if not within(p, self.project_real))

    def inside(self, real: Path) -> bool:
        return within(real, self.project_real)

    def shown(self, real: Path) -> str:
        """A resolved path as the user reads it: relative to the project when inside it."""
        if not self.inside(real):
            return str(real)
        rel = real.relative_to(self.project_real).as_posix()
        return rel if rel != "." else "the project"


def describe_call(tool: Tool, tool_input: JSON, ctx: ToolContext) -> Call:
    name = tool.name
    origin = tool.origin if isinstance(tool, FromMcpServer) else None
    hosts = tool.hosts(tool_input) if isinstance(tool, ContactsHosts) else ()
    kind: CallKind
    if isinstance(tool, ContactsHosts):
        kind = "other"  # it reads, but from the network: no mode approves that
    elif name == "Bash":
        kind = "bash"
    elif origin is not None or name.startswith("mcp__"):
        kind = "mcp"
    elif name in EDIT_FAMILY:
        kind = "edit"
    elif name in READ_FAMILY or tool.read_only:
        kind = "read"
    else:
        kind = "other"
    # touched_paths resolved them already (`ToolContext.resolve`): resolving again would unescape twice
    paths = tuple(literal_path(ctx.cwd / p) for p in tool.touched_paths(tool_input, ctx))
    if not paths and kind in ("read", "edit"):
        paths = (literal_path(ctx.cwd),)
    reals = tuple(real_path(p) for p in paths)
    written: tuple[Path, ...] | list[Path] = ()
    if kind == "edit" and not tool.read_only:
        written = reals
    elif kind == "bash":
        command = tool_input.get("command")
        written = bash_targets(command, ctx.cwd) if isinstance(command, str) else []
    project_real = real_path(ctx.cwd)
    protected = protected_writes(written, ctx.cwd)
    return Call(name, tool_input, kind, tool.read_only, ctx.cwd, paths, reals, project_real, protected, origin, hosts)


@dataclass(frozen=True)
class Verdict:
    outcome: Literal["allow", "ask", "deny"]
    rule: Rule | None = None
    """The deny or ask rule that decided, if one did."""
    unverified: str | None = None
    """With a Bash deny/ask rule: why the command could not be shown not to match it."""
    plan: bool = False
    """Refused because the session is in plan mode."""
    coverage: Coverage | None = None
    """For Bash: which parts no allow rule covers."""
    uncovered_paths: tuple[Path, ...] = ()
    """For path tools: the (resolved) paths nothing allowed."""
    protected: tuple[Protected, ...] = ()
    """Protected paths no allow rule names: asked every time, whatever the mode."""
    hosts: tuple[str, ...] = ()
    """Network hosts the call contacts that nothing allowed."""


def evaluate(call: Call, rules: RuleSet, mode: Mode) -> Verdict:
    """deny rules → plan mode → ask rules → protected paths → allow rules and the mode → ask."""
    for rule in rules.of("deny"):
        if match := _matches(rule, call):
            return Verdict("deny", rule=rule, unverified=match.unverified)
    if mode == "plan" and not call.read_only:
        return Verdict("deny", plan=True)
    for rule in rules.of("ask"):
        if match := _matches(rule, call):
            return Verdict("ask", rule=rule, unverified=match.unverified)
    allow = [r for r in rules.of("allow") if r.names(call.tool, call.origin)]
    if call.protected:
        unnamed = tuple(p for p in call.protected if not _named(p, call, allow))
        if unnamed:
            return Verdict("ask", protected=unnamed)
    if call.kind == "bash":
        return _bash_verdict(call, allow, mode)
    if call.paths:
        uncovered = tuple(p for p in call.real_paths if not _path_allowed(p, call, allow, mode))
        return Verdict("ask", uncovered_paths=uncovered) if uncovered else Verdict("allow")
    if mode == "bypassPermissions" or any(r.tool_wide for r in allow):
        return Verdict("allow")
    if call.hosts:
        unnamed_hosts = tuple(h for h in call.hosts if not any(r.names_host(h) for r in allow))
        return Verdict("ask", hosts=unnamed_hosts) if unnamed_hosts else Verdict("allow")
    return Verdict("allow") if _mode_approves(call, mode) else Verdict("ask")


def hosts_named(call: Call, rules: RuleSet) -> frozenset[str]:
    """The hosts of `call` an allow rule names (`WebFetch(domain:…)`): those it may reach at
    private addresses. Deny and ask rules were judged already."""
    allow = [r for r in rules.of("allow") if r.names(call.tool, call.origin)]
    return frozenset(h for h in call.hosts if any(r.names_host(h) for r in allow))


def _bash_verdict(call: Call, allow: list[Rule], mode: Mode) -> Verdict:
    if mode == "bypassPermissions" or any(r.tool_wide for r in allow):
        return Verdict("allow")
    coverage = covers(call.command, [r.bash for r in allow if r.bash is not None])
    return Verdict("allow") if coverage.covered else Verdict("ask", coverage=coverage)


def _matches(rule: Rule, call: Call) -> RuleMatch | None:
    """For deny and ask rules: does the rule catch any part of this call? (fails closed)"""
    if not rule.names(call.tool, call.origin):
        return None
    if rule.tool_wide:
        return RuleMatch()
    if rule.domain is not None:  # a call whose host is unknown is caught (fails closed)
        return RuleMatch() if not call.hosts or any(rule.names_host(h) for h in call.hosts) else None
    if rule.bash is not None:
        return deny_match(call.command, rule.bash) if call.kind == "bash" else None
    pattern = rule.path
    assert pattern is not None
    named = zip(call.paths, call.real_paths, strict=True)
    hit = any(pattern.matches(p, call.project) or pattern.matches(r, call.project) for p, r in named)
    return RuleMatch() if hit else None


def _named(protected: Protected, call: Call, allow: list[Rule]) -> bool:
    """Only an allow rule that names a protected path lets a write to it through (never a mode or `Edit`)."""
    if call.kind == "bash":
        naming = [r.bash for r in allow if r.bash is not None and _spells(r.bash, protected)]
        return covers(call.command, naming).covered
    return any(r.path is not None and pattern_names(r.path, protected, call.project) for r in allow)


def _spells(pattern: BashPattern, protected: Protected) -> bool:
    """An exact Bash rule names everything the command writes; a prefix rule must spell the protected folder."""
    folder = protected.root.name.lower()
    return not pattern.prefix or any(folder in word.lower() for word in pattern.words)


def _path_allowed(real: Path, call: Call, allow: list[Rule], mode: Mode) -> bool:
    """An allow rule naming the real path, or (inside the project only) a tool-wide rule or the mode."""
    if any(r.path is not None and r.path.matches(real, call.project) for r in allow):
        return True
    if not call.inside(real):
        return mode == "bypassPermissions"
    return mode == "bypassPermissions" or any(r.tool_wide for r in allow) or _mode_approves(call, mode)


def _mode_approves(call: Call, mode: Mode) -> bool:
    if call.kind == "read":
        return True
    return call.kind == "edit" and mode == "acceptEdits"
