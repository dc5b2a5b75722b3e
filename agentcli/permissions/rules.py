"""Permission rules: `Tool` or `Tool(specifier)`, and which tool calls a rule names.

- `Bash`, `Bash(npm run build)`, `Bash(git diff:*)`, `Bash(git diff *)`
- `Read(./.env)`, `Edit(src/**)`, `Write(//tmp/out.txt)`, `Read(~/notes/**)`
- `mcp__server` or `mcp__server__*` (every tool of that server), `mcp__server__tool`
- `Task(Explore)` (Claude Code's `Agent(Explore)`): Task calls starting that agent type
- `Skill(commit)`, `Skill(review *)`: Skill calls running that skill (a glob on its name)
- `WebFetch(domain:example.com)`, `WebFetch(domain:*.example.com)`: calls that contact that host

A `Read` rule also covers Grep and Glob; an `Edit` rule also covers Write.

An MCP rule names tools by the names they are offered under (`agentcli.mcp.names`): the server
part is what stands between `mcp__` and the next `__`, compared whole and case and all, so
`mcp__trusted` covers the server `trusted` and nothing else (not `trusted_evil`, not `Trusted`);
`mcp__server__tool` covers the one tool offered under that name, or the tool of that server
listed as `tool` whose name had to be shortened. A server whose name had to be shortened (over 32
characters: a plugin's `plugin_NAME_SERVER`) is also named by its full name, as Claude Code names it.

A rule for a tool agentcli does not know the specifiers of (`WebSearch(...)`, `PowerShell(...)`)
keeps its specifier uninterpreted (`Rule.opaque`): as an allow rule it allows nothing, as a
deny or ask rule it names every call of that tool. Rules read from settings files are read the
same way when they cannot be parsed at all (`permissions.sources`): fail closed.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass
from typing import Literal

from agentcli.contracts import McpOrigin
from agentcli.mcp.names import PREFIX, SEPARATOR, full_server_part, split_name
from agentcli.permissions.bash_rules import BashPattern, BashRuleError, parse_bash_specifier
from agentcli.permissions.paths import PathPattern, PathRuleError, parse_path_pattern

Behavior = Literal["allow", "ask", "deny"]
BEHAVIORS: tuple[Behavior, ...] = ("allow", "ask", "deny")

READ_FAMILY = frozenset({"Read", "Grep", "Glob"})
EDIT_FAMILY = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
FAMILIES: dict[str, frozenset[str]] = {"Read": READ_FAMILY, "Edit": EDIT_FAMILY}
PATH_RULE_TOOLS = frozenset({"Read", "Edit", "Write"})
"""Tools whose rules take a path specifier."""

KNOWN_TOOLS = (
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "Bash",
    "Grep",
    "Glob",
    "Task",
    "Skill",
    "WebFetch",
    "WebSearch",
)
NAME_FIELDS = {"Task": "subagent_type", "Skill": "skill"}
"""Tools whose rules name what a call starts, by this input field."""
TOOL_ALIASES = {"Agent": "Task"}
"""Claude Code's names for agentcli's tools (its Task tool is `Agent` since 2.1.63)."""
DOMAIN_PREFIX = "domain:"
DOMAIN_RULE_TOOLS = frozenset({"WebFetch"})
"""Tools whose rules name a host (`WebFetch(domain:example.com)`)."""
UNREAD_SPECIFIERS = frozenset({"WebSearch"})
"""Tools agentcli has whose rules' specifiers it gives no meaning (`WebSearch(cats)`): kept opaque."""

_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


class RuleError(ValueError):
    """A rule that cannot be understood; the message says what is wrong with it."""


@dataclass(frozen=True)
class RuleSource:
    """Where a rule came from, for messages: a settings file, a flag, or this session."""

    scope: str
    """"user", "project", "local", "flag" or "session"."""
    label: str
    """e.g. the settings file's path, or `--allowed-tools`."""


SESSION = RuleSource("session", "this session")


@dataclass(frozen=True)
class Rule:
    text: str
    tool: str
    behavior: Behavior
    source: RuleSource
    bash: BashPattern | None = None
    path: PathPattern | None = None
    name: str | None = None
    """For Task and Skill: a glob on the agent type or skill the call names."""
    domain: str | None = None
    """For WebFetch: the host (`example.com`, or `*.example.com` for its subdomains)."""
    opaque: str | None = None
    """A specifier agentcli cannot interpret: allows nothing; as deny or ask, names every call of the tool."""

    @property
    def tool_wide(self) -> bool:
        """True for `Bash`, `Edit`, `mcp__server`: no specifier narrows it."""
        return self.bash is None and self.path is None and self.name is None and self.domain is None and not self.opaque

    def names_subject(self, value: str) -> bool:
        """For a Task or Skill rule: whether it names the agent type or skill `value`."""
        return self.name is not None and fnmatch.fnmatchcase(value, self.name)

    def names_host(self, host: str) -> bool:
        """For a WebFetch rule: whether it names `host`."""
        if self.domain is None:
            return False
        host = host.lower().rstrip(".")
        if self.domain.startswith("*."):
            return host.endswith(self.domain[1:])
        return host == self.domain

    def names(self, tool_name: str, origin: McpOrigin | None = None) -> bool:
        """Whether this rule is about calls of `tool_name` at all (`origin`: an MCP tool's listed names)."""
        rule = split_name(self.tool)
        if rule is not None:
            offered = split_name(tool_name)
            if offered is None:
                return False
            if offered[0] != rule[0] and (origin is None or full_server_part(origin.server) != rule[0]):
                return False
            return rule[1] in ("", "*", offered[1]) or (origin is not None and rule[1] == origin.tool)
        return tool_name == self.tool or tool_name in FAMILIES.get(self.tool, ())

    def __str__(self) -> str:
        return self.text


def split_rule_list(text: str) -> list[str]:
    """`"Read,Bash(git status:*) Edit"` → ["Read", "Bash(git status:*)", "Edit"].

    Commas and spaces separate rules, except inside parentheses.
    """
    rules: list[str] = []
    depth, current = 0, ""
    for char in text:
        depth += char == "("
        depth -= char == ")"
        if char in ", " and depth == 0:
            if current:
                rules.append(current)
            current = ""
        else:
            current += char
    if current:
        rules.append(current)
    return rules


def parse_rule(text: str, behavior: Behavior, source: RuleSource) -> Rule:
    """Parse one rule; raises RuleError with a message fit to show next to the rule."""
    if not isinstance(text, str):
        raise RuleError(f"a rule must be a string, not {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise RuleError("the rule is empty")
    tool, specifier = _split(stripped)
    _check_tool_name(tool)
    tool = TOOL_ALIASES.get(tool, tool)
    if specifier is None:
        return Rule(stripped, tool, behavior, source)
    if tool in NAME_FIELDS:
        return Rule(stripped, tool, behavior, source, name=_name_glob(specifier))
    if tool in DOMAIN_RULE_TOOLS:
        return Rule(stripped, tool, behavior, source, domain=_domain(specifier))
    if tool == "Bash":
        if behavior != "allow" and "*" in specifier.strip().removesuffix(":*").removesuffix(" *"):
            # Claude Code's wildcards anywhere (`curl * -d *`, `push -f*`): matched literally here, a
            # deny or ask rule would miss what it means; `fallback_rule` widens it instead.
            raise RuleError("a wildcard before the end of the rule")
        try:
            pattern = parse_bash_specifier(specifier)
        except BashRuleError as error:
            raise RuleError(str(error)) from None
        return Rule(stripped, tool, behavior, source, bash=pattern)
    if tool in PATH_RULE_TOOLS:
        try:
            return Rule(stripped, tool, behavior, source, path=parse_path_pattern(specifier))
        except PathRuleError as error:
            raise RuleError(str(error)) from None
    if tool in READ_FAMILY:
        raise RuleError(f"{tool} takes no specifier; Read(...) rules cover {tool} too")
    if (tool in KNOWN_TOOLS and tool not in UNREAD_SPECIFIERS) or tool.startswith("mcp__"):
        raise RuleError(f"{tool} takes no specifier; write {tool} alone to cover every call")
    return Rule(stripped, tool, behavior, source, opaque=specifier)


def fallback_rule(text: str, behavior: Behavior, source: RuleSource) -> Rule | None:
    """For a deny or ask rule that cannot be parsed: the rule for every call of the tool it names
    (its specifier kept uninterpreted), so it refuses at least what it could mean; None when no
    tool name can be made out of it. A tool name in the wrong case is taken as the right one."""
    tool = text.strip().split("(", 1)[0].strip()
    known = next((name for name in (*KNOWN_TOOLS, *TOOL_ALIASES) if name.lower() == tool.lower()), None)
    tool = known or tool
    if not _TOOL_NAME.fullmatch(tool.removesuffix("__*")) or (tool.startswith("mcp__") and tool.count("__") > 2):
        return None
    if tool == "Bash" and (words := _words_before_wildcard(text)):
        prefix = " ".join(words)
        return Rule(text.strip(), tool, behavior, source, bash=BashPattern(words, True, f"{prefix}:*"))
    return Rule(text.strip(), TOOL_ALIASES.get(tool, tool), behavior, source, opaque=text.strip())


def _words_before_wildcard(text: str) -> tuple[str, ...]:
    """`Bash(curl * -d *)` → (`curl`,); `Bash(git push -f*)` → (`git`, `push`): the whole words
    before the first wildcard, whose prefix rule covers all the rule could mean; () when none."""
    inner = text.strip().partition("(")[2].removesuffix(")")
    head, star, _ = inner.partition("*")
    if not star:
        return ()
    try:
        words = shlex.split(head)
    except ValueError:
        return ()
    if head and not head[-1].isspace() and not head.endswith(":"):
        words = words[:-1]  # the word the wildcard ends is not whole
    return tuple(word for word in words if word != ":")


def _name_glob(specifier: str) -> str:
    """`Explore` → `Explore`; `review *`, `review:*` → `review*`: the rest is the call's arguments."""
    glob = specifier.strip()
    for suffix in (" *", ":*"):
        if glob.endswith(suffix):
            glob = glob[: -len(suffix)] + "*"
    if not glob:
        raise RuleError("the parentheses name nothing")
    return glob


def _domain(specifier: str) -> str:
    if not specifier.startswith(DOMAIN_PREFIX):
        raise RuleError(f"WebFetch rules name a host: WebFetch({DOMAIN_PREFIX}example.com)")
    host = specifier[len(DOMAIN_PREFIX) :].strip().lower().rstrip(".")
    if not re.fullmatch(r"(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d+)?", host):
        raise RuleError(f"{host!r} is not a host name")
    return host


def _split(text: str) -> tuple[str, str | None]:
    if "(" not in text:
        if ")" in text:
            raise RuleError("')' without '('")
        return text, None
    if not text.endswith(")"):
        raise RuleError("missing ')' at the end")
    tool, specifier = text[: text.index("(")], text[text.index("(") + 1 : -1]
    if not specifier.strip():
        raise RuleError(f"empty parentheses; write {tool or 'the tool name'} alone to cover every call")
    return tool.strip(), specifier


def _check_tool_name(tool: str) -> None:
    if not tool:
        raise RuleError("no tool name before '('")
    if not _TOOL_NAME.fullmatch(tool.removesuffix("__*") if tool.startswith(PREFIX) else tool):
        raise RuleError(f"{tool!r} is not a tool name")
    for known in KNOWN_TOOLS:
        if tool != known and tool.lower() == known.lower():
            raise RuleError(f"unknown tool {tool!r}; tool names are case-sensitive (did you mean {known}?)")
    if tool.lower().startswith(PREFIX) and not tool.startswith(PREFIX):
        raise RuleError(f"MCP rules begin with {PREFIX} in lower case")
    mcp = split_name(tool)
    if mcp is not None:
        server, rest = mcp
        if not server or server == "*" or ("*" in rest and rest != "*") or (not rest and tool.endswith(SEPARATOR)):
            raise RuleError("MCP rules look like mcp__server, mcp__server__* or mcp__server__tool")
        if server.startswith("_") or server.endswith("_"):
            raise RuleError(
                f"no MCP server is offered as {server!r}: server names never begin or end with _ in tool names"
            )
