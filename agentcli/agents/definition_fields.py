"""The fields of a Claude Code sub-agent definition beyond name, description, tools, model and
maxTurns, as agentcli honours them (`agents.definitions` reads the file):

- `disallowedTools`: tools taken out of the inherited or listed ones (`mcp__server` takes a
  server's, `mcp__*` every MCP tool's);
- `permissionMode`: the mode its calls are judged in, while the session is in `default` mode
  (a session in another mode keeps it for its sub-agents); `bypassPermissions` only from a
  definition of the user's own (`$AGENTCLI_HOME/agents/`, `~/.claude/agents/`) and never once
  `disableBypassPermissionsMode` is set; `manual` is `default`; `auto` is ignored;
- `skills`: skills whose text is put in its first message (not those with
  `disable-model-invocation`);
- `hooks`: run while it runs (`Stop` as `SubagentStop`), from a definition of the user's own
  only: a checked-in one never runs programs unasked;
- `color`: its name's colour in the REPL.

`mcpServers`, `memory`, `background`, `effort`, `isolation` and `initialPrompt` are read and
ignored, each named once in a notice (`AgentType.notes`); other unknown fields are ignored.
A field of the wrong kind makes the definition unusable (SkillFileError), as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcli.hooks.config import HookConfig, hooks_of
from agentcli.permissions.modes import ALIASES, CLAUDE_CODE_ONLY, MODES
from agentcli.permissions.rules import split_rule_list
from agentcli.skills.frontmatter import SkillFileError

IGNORED = {
    "mcpServers": "MCP servers of its own",
    "memory": "persistent memory",
    "background": "background sub-agents",
    "effort": "effort levels",
    "isolation": "worktree isolation",
    "initialPrompt": "an initial prompt (it runs only as the main agent in Claude Code)",
}
"""Claude Code's fields agentcli has no counterpart for, and what they would have asked for."""
COLOURS = {
    "red": "red",
    "blue": "blue",
    "green": "green",
    "yellow": "yellow",
    "purple": "magenta",
    "orange": "dark_orange",
    "pink": "hot_pink",
    "cyan": "cyan",
}
"""Claude Code's colours, as the terminal names them."""
SUB_AGENT_RENAMES = {"Stop": "SubagentStop"}
SPAWNING = ("Task", "Agent")


def more_fields(fields: dict[str, Any], path: Path) -> dict[str, Any]:
    """The AgentType fields of `fields` beyond the basic ones, and `notes` on what is ignored."""
    notes = [f"`{key}:` is ignored (agentcli has no {what})" for key, what in IGNORED.items() if key in fields]
    mode = _mode(fields.get("permissionMode"), path, notes)
    colour = _colour(fields.get("color"), path, notes)
    hooks = None
    if fields.get("hooks") is not None:
        hooks = hooks_of(fields["hooks"], "user", path, str(path), rename=SUB_AGENT_RENAMES)
        notes.extend(hooks.notices)
        hooks = HookConfig(hooks.commands, guards=hooks.guards)
    return {
        "disallowed_tools": names_of(fields.get("disallowedTools"), "disallowedTools", path),
        "permission_mode": mode,
        "skills": names_of(fields.get("skills"), "skills", path),
        "hooks": hooks,
        "color": colour,
        "notes": tuple(notes),
    }


def tool_entries(value: object, path: Path) -> tuple[tuple[str, ...] | None, list[str]]:
    """`tools:` as tool names, and notes: `Task`/`Agent` is dropped (sub-agents cannot start
    sub-agents), and the parentheses of `Bash(git *)` narrow nothing (rules do)."""
    if value is None:
        return None, []
    notes: list[str] = []
    names: list[str] = []
    for entry in names_of(value, "tools", path):
        name = entry.split("(", 1)[0].strip()
        if name in SPAWNING:
            notes.append(f"`tools:` names {entry}, but sub-agents cannot start sub-agents: left out")
            continue
        if name != entry:
            notes.append(f"`tools:` gives {entry}: it has {name}, and rules decide which of its calls run")
        names.append(name)
    return tuple(dict.fromkeys(names)), notes


def names_of(value: object, key: str, path: Path) -> tuple[str, ...]:
    """A comma-separated string (parentheses kept together) or a YAML list of names."""
    if value is None:
        return ()
    if isinstance(value, str):
        items = [part.strip() for part in split_rule_list(value)]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = [item.strip() for item in value]
    else:
        raise SkillFileError(f"In the agent definition {path}, `{key}:` must be a comma-separated list of names.")
    return tuple(dict.fromkeys(item for item in items if item))


def _mode(value: object, path: Path, notes: list[str]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise SkillFileError(f"In the agent definition {path}, `permissionMode:` must be text.")
    if value in CLAUDE_CODE_ONLY:
        notes.append(f"`permissionMode: {value}` is ignored (agentcli has no {value} mode)")
        return None
    mode = ALIASES.get(value, value)
    if mode not in MODES:
        raise SkillFileError(
            f"In the agent definition {path}, `permissionMode:` must be one of {', '.join(MODES)}, not {value!r}."
        )
    return mode


def _colour(value: object, path: Path, notes: list[str]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value.lower() not in COLOURS:
        notes.append(f"`color: {value}` is ignored (the colours are {', '.join(COLOURS)})")
        return None
    return COLOURS[value.lower()]
