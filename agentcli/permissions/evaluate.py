"""The pure decision for one call: deny rules, plan mode, ask rules, the sandbox, protected paths,
allow rules, the mode.

A call is judged by what its tool declares it will do (`Tool.access`, an `access.Access`):
the paths it reads and writes, the command it runs, the hosts it contacts, the MCP server it
acts through. Never by the tool's name, except that rules name tools (`Read(...)` names Read,
Grep and Glob; `Edit(...)` Edit and Write; `mcp__server` that server's tools; `Task(...)` and
`Skill(...)` what the call starts, `WebFetch(domain:...)` the hosts it declares). What no mode
approves, and so is asked about unless a rule allows it or the mode is bypassPermissions: a
command no allow rule covers, paths outside the project, an MCP call, hosts, and a call whose
tool does not say what it does (`Access.unknown`, which plan mode also refuses).

Hosts are judged one by one: an allow rule naming a host (`WebFetch(domain:example.com)`,
`WebFetch(domain:*.example.com)`) lets the call contact it, and only such a rule lets the tool
reach that host at a private, loopback or link-local address (`hosts_named`); a deny or ask
rule naming one of its hosts catches the call.

The sandbox: a command the model asked to run outside it (`Access.leaves_sandbox`) is asked
about every time, whatever the rules and the mode. A command that runs inside it
(`Access.sandboxed`) is allowed without a question once no deny or ask rule caught it, when
`sandbox.autoAllowBashIfSandboxed` is on (`auto_allow_sandboxed`): inside, the project's
protected paths are read-only and the rest of the machine too, so they are not asked about.

No prompting and no I/O beyond resolving paths; the gate turns an "ask" into a question
(or, non-interactively, a denial).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentcli.access import Access
from agentcli.contracts import JSON, FromMcpServer, McpOrigin, Tool, ToolContext, literal_path
from agentcli.permissions.bash_rules import BashPattern, Coverage, RuleMatch, covers, deny_match
from agentcli.permissions.modes import Mode
from agentcli.permissions.paths import real_path, within
from agentcli.permissions.protected import Protected, bash_targets, pattern_names, protected_writes
from agentcli.permissions.rules import NAME_FIELDS, Rule
from agentcli.permissions.sources import RuleSet

CallKind = Literal["read", "edit", "bash", "mcp", "none", "other"]
"""What a call mainly does, for how it is described and asked about (`kind_of`)."""


def kind_of(access: Access) -> CallKind:
    """`other` for a call whose effects are unknown (or that only contacts hosts), else what it
    mainly does: runs a command, writes, acts through an MCP server, reads, or nothing at all."""
    if access.unknown:
        return "other"
    if access.command is not None:
        return "bash"
    if access.writes:
        return "edit"
    if access.server is not None:
        return "mcp"
    if access.reads:
        return "read"
    return "other" if access.hosts else "none"


@dataclass(frozen=True)
class Call:
    """One tool call as the gate judges it."""

    tool: str
    tool_input: JSON
    access: Access
    """What the tool declared the call will do."""
    project: Path
    paths: tuple[Path, ...]
    """Absolute paths the call declares it reads, then those it writes, as named."""
    real_paths: tuple[Path, ...]
    """The same paths resolved, once (`..` and symlinks): what is judged, and what the tool is handed."""
    project_real: Path
    written: tuple[Path, ...] = ()
    """The real paths among `real_paths` that the call writes (a mode approves them only in acceptEdits)."""
    protected: tuple[Protected, ...] = ()
    """Protected paths the call would write (see `protected`)."""
    origin: McpOrigin | None = None
    """For an MCP tool: its server's and its own names as configured and listed."""
    more_folders: tuple[Path, ...] = ()
    """The session's other working folders (`additionalDirectories`), resolved: inside them is
    judged as inside the project (protected paths there are protected too)."""

    @property
    def kind(self) -> CallKind:
        return kind_of(self.access)

    @property
    def read_only(self) -> bool:
        return self.access.read_only

    @property
    def hosts(self) -> tuple[str, ...]:
        """Network hosts the call declares it contacts."""
        return self.access.hosts

    @property
    def command(self) -> str:
        return self.access.command or ""

    @property
    def outside(self) -> tuple[Path, ...]:
        """Touched paths that, after `..` and symlinks, are not in the project."""
        return self.outside_of(self.real_paths)

    def outside_of(self, reals: tuple[Path, ...]) -> tuple[Path, ...]:
        return tuple(p for p in reals if not within(p, self.project_real))

    def inside(self, real: Path) -> bool:
        return within(real, self.project_real) or any(within(real, folder) for folder in self.more_folders)

    def shown(self, real: Path) -> str:
        """A resolved path as the user reads it: relative to the project when inside it."""
        if not within(real, self.project_real):
            return str(real)
        rel = real.relative_to(self.project_real).as_posix()
        return rel if rel != "." else "the project"


def describe_call(tool: Tool, tool_input: JSON, ctx: ToolContext, protected: Sequence[Path] = ()) -> Call:
    """The call as its tool declares it (`Tool.access`), each path resolved once; `protected`,
    the session's own protected folders (resolved) besides the usual ones. Raises what the tool's
    declaration or resolving a path raises (the gate denies such a call)."""
    access = tool.access(tool_input, ctx)
    # the tool resolved them already (`ToolContext.resolve`): resolving again would unescape twice
    paths = tuple(literal_path(ctx.cwd / p) for p in (*access.reads, *access.writes))
    reals = tuple(real_path(p) for p in paths)
    written = reals[len(access.reads) :]
    targets = [*written, *(bash_targets(access.command, ctx.cwd) if access.command is not None else ())]
    writes_protected = protected_writes(targets, ctx.cwd, protected)
    origin = tool.origin if isinstance(tool, FromMcpServer) else None
    return Call(
        tool.name, tool_input, access, ctx.cwd, paths, reals, real_path(ctx.cwd), written, writes_protected, origin
    )


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
    leaves_sandbox: bool = False
    """The model asked to run the command outside the sandbox: asked every time."""


def evaluate(call: Call, rules: RuleSet, mode: Mode, *, auto_allow_sandboxed: bool = False) -> Verdict:
    """deny rules → plan mode → ask rules → the sandbox → protected paths → allow rules and the mode → ask."""
    for rule in rules.of("deny"):
        if match := _matches(rule, call):
            return Verdict("deny", rule=rule, unverified=match.unverified)
    if mode == "plan" and not call.read_only:
        return Verdict("deny", plan=True)
    for rule in rules.of("ask"):
        if match := _matches(rule, call):
            return Verdict("ask", rule=rule, unverified=match.unverified)
    if call.access.leaves_sandbox:
        return Verdict("ask", leaves_sandbox=True)
    if call.access.sandboxed and auto_allow_sandboxed:
        return Verdict("allow")
    allow = [r for r in rules.of("allow") if r.names(call.tool, call.origin)]
    if call.protected:
        unnamed = tuple(p for p in call.protected if not _named(p, call, allow))
        if unnamed:
            return Verdict("ask", protected=unnamed)
    broad = mode == "bypassPermissions" or any(r.tool_wide for r in allow)
    if call.access.command is not None and not broad:
        coverage = covers(call.command, [r.bash for r in allow if r.bash is not None])
        if not coverage.covered:
            return Verdict("ask", coverage=coverage)
    if call.paths:
        uncovered = tuple(p for p in call.real_paths if not _path_allowed(p, call, allow, mode))
        if uncovered:
            return Verdict("ask", uncovered_paths=uncovered)
    if call.hosts and not broad:
        not_allowed = tuple(h for h in call.hosts if not any(r.names_host(h) for r in allow))
        if not_allowed:
            return Verdict("ask", hosts=not_allowed)
    if (call.kind == "mcp" or call.access.unknown) and not broad:  # no mode approves what it does
        return Verdict("ask")
    return Verdict("allow")


def hosts_named(call: Call, rules: RuleSet) -> frozenset[str]:
    """The hosts of `call` an allow rule names (`WebFetch(domain:…)`): those it may reach at
    private addresses. Deny and ask rules were judged already."""
    allow = [r for r in rules.of("allow") if r.names(call.tool, call.origin)]
    return frozenset(h for h in call.hosts if any(r.names_host(h) for r in allow))


def _matches(rule: Rule, call: Call) -> RuleMatch | None:
    """For deny and ask rules: does the rule catch any part of this call? (fails closed)"""
    if not rule.names(call.tool, call.origin):
        return None
    if rule.tool_wide or rule.opaque:  # an uninterpreted specifier names every call (fails closed)
        return RuleMatch()
    if rule.name is not None or rule.domain is not None:
        return RuleMatch() if _narrowly_names(rule, call) else None
    if rule.bash is not None:
        return deny_match(call.command, rule.bash) if call.access.command is not None else None
    pattern = rule.path
    assert pattern is not None
    named = zip(call.paths, call.real_paths, strict=True)
    hit = any(pattern.matches(p, call.project) or pattern.matches(r, call.project) for p, r in named)
    return RuleMatch() if hit else None


def rule_names_call(rule: Rule, tool: Tool, tool_input: JSON, ctx: ToolContext) -> bool:
    """Whether `rule` names this call as a deny or ask rule would (a hook's `if`): any part of a
    Bash command, any path the call touches. A call whose paths cannot be resolved is named by
    any rule of its tool (the `if` errs on the side of running the hook)."""
    try:
        call = describe_call(tool, tool_input, ctx)
    except (OSError, ValueError, RuntimeError):
        return rule.names(tool.name, tool.origin if isinstance(tool, FromMcpServer) else None)
    return rule_catches(rule, call)


def rule_catches(rule: Rule, call: Call) -> bool:
    """Whether `rule` names `call` as a deny or ask rule would (any part of it)."""
    return _matches(rule, call) is not None


def _narrowly_names(rule: Rule, call: Call) -> bool:
    """A Task or Skill rule naming what the call starts, or a WebFetch rule naming a host it
    declares (or any call declaring none: its host is unknown, so it is caught; fails closed)."""
    if rule.name is not None:
        value = call.tool_input.get(NAME_FIELDS.get(rule.tool, ""))
        return isinstance(value, str) and rule.names_subject(value.removeprefix("/"))
    return rule.domain is not None and (not call.hosts or any(rule.names_host(host) for host in call.hosts))


def _named(protected: Protected, call: Call, allow: list[Rule]) -> bool:
    """Only an allow rule that names a protected path lets a write to it through (never a mode or `Edit`)."""
    if call.access.command is not None:
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
    return mode == "bypassPermissions" or any(r.tool_wide for r in allow) or _mode_approves(real in call.written, mode)


def _mode_approves(written: bool, mode: Mode) -> bool:
    """Inside the project every mode approves reading, and acceptEdits writing."""
    return mode == "acceptEdits" if written else True
