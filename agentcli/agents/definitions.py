"""Agent types: what a Task call may start. Two built in, more defined in Markdown files.

- `general-purpose`: every tool the parent has but Task, ExitPlanMode and AskUserQuestion (which a
  sub-agent has only when its definition names it, see `agents.subagent`), for multi-step work.
- `Explore`: read-only (Read, Grep, Glob), told to search fast and report with paths and lines.
- Definitions: `*.md` in `.agentcli/agents/` and `.claude/agents/` and their subfolders (from the
  working directory up to the repository's top, nearest first), in `$AGENTCLI_HOME/agents/`,
  in Claude Code's `~/.claude/agents/`, and in the enabled plugins' `agents/` (a plugin `p`'s
  agent `a` is the type `p:a`; as Claude Code has it, a plugin's definition is treated as a
  project's: no `hooks:`, no bypassPermissions). The first
  definition of a name wins: project over user, `.agentcli/` over `.claude/`, and a definition
  over a built-in type of the same name. A file is YAML frontmatter then the system prompt:

      ---
      name: reviewer
      description: Reviews a change for bugs and missing tests.
      tools: Read, Grep, Glob     # omitted: every tool but Task, AskUserQuestion, ExitPlanMode
      model: inherit              # omitted or `inherit`: the parent's model
      maxTurns: 20                # omitted: 50
      ---
      You review code changes. ...

A frontmatter that is not strict YAML is read line by line (skills/lenient.py), with a warning
(`AgentType.warning`). A file that cannot be used (unreadable, no name or description, a field
of the wrong kind, a name taken by another file of the same agents folder) is skipped;
ExitPlanMode named in `tools:` is left out (sub-agents never have it), with a warning too;
`AgentCatalog.invalid` says why, for a notice. `load_agent_types` is what `/agents` lists.

Claude Code's other fields (`disallowedTools`, `permissionMode`, `skills`, `hooks`, `color`, and
those read and ignored) are `agents.definition_fields`'. What a definition asks that agentcli
does not do is kept in `AgentType.notes` and said once. A definition of the user's own
(`$AGENTCLI_HOME/agents/`, `~/.claude/agents/`) may run hooks and ask for bypassPermissions; a
project's may not (`with_trust`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agentcli.agents.definition_fields import more_fields, tool_entries
from agentcli.hooks.config import HookConfig
from agentcli.plugins.manifest import Plugin
from agentcli.regular_file import read_regular_file
from agentcli.settings import agentcli_home, claude_home
from agentcli.skills.frontmatter import SkillFileError, read_frontmatter
from agentcli.skills.loader import project_roots
from agentcli.tools.exit_plan import NAME as EXIT_PLAN_MODE

BUILT_IN = "built-in"
DEFAULT_MAX_TURNS = 50
MAX_DEFINITION_BYTES = 256 * 1024
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")

GENERAL_PURPOSE_PROMPT = """\
You are a sub-agent of agentcli, a coding assistant: another agent gave you the task below and
sees only your final message, not your tool calls. Work on your own until the task is done:
search and read the code you need, make the changes the task asks for in the project's style,
and check them when you can. Do not ask questions; when something is ambiguous, choose the
sensible reading and say which.

End with one final message that stands on its own: what you found or changed (with file paths
and line numbers), how you checked it, and anything left undone or uncertain. Be concise."""

EXPLORE_PROMPT = """\
You are Explore, a fast, read-only search agent of agentcli, a coding assistant: another agent
asked you the question below and sees only your final message. You cannot change anything:
you have Read, Grep and Glob only.

Search fast: Glob for file names, Grep (files_with_matches first) to find where something is,
then Read only the parts that matter. Call several searches at once when they are independent.
Stop as soon as you can answer.

Report your findings concisely: the answer first, then the evidence as `path/to/file.py:42`
references with a few words on each. Say what you did not find and where you looked."""


@dataclass(frozen=True)
class AgentType:
    """One type of sub-agent a Task call may start."""

    name: str
    description: str
    """For the model (the Task tool lists it) and for `/agents`."""
    prompt: str
    """Its system prompt (the environment facts are added to it)."""
    tools: tuple[str, ...] | None = None
    """The tools it is offered, by name; None: every tool the parent has but Task, AskUserQuestion, ExitPlanMode."""
    model: str | None = None
    """None: the parent's model."""
    max_turns: int = DEFAULT_MAX_TURNS
    source: str = BUILT_IN
    """`built-in`, or the path of its definition file."""
    warning: str | None = None
    """How its frontmatter was read, when it was not strict YAML, and what of it was left out
    (reported once)."""
    hooks: HookConfig | None = None
    """Its definition's own `hooks`, run while it runs (`Stop` as `SubagentStop`)."""
    disallowed_tools: tuple[str, ...] = ()
    """Tools taken out of what it is offered (`mcp__server` patterns too)."""
    permission_mode: str | None = None
    """The mode its calls are judged in while the session is in default mode; None: the session's."""
    skills: tuple[str, ...] = ()
    """Skills whose text its first message carries."""
    color: str | None = None
    """The terminal colour of its name."""
    notes: tuple[str, ...] = ()
    """What its definition asks that agentcli does not do (said once)."""
    own: bool = False
    """Defined in the user's own folder (not a checked-in project's)."""

    @property
    def tools_text(self) -> str:
        """`Read, Grep, Glob`, or `all tools but Task`: for listings."""
        return ", ".join(self.tools) if self.tools is not None else "all tools but Task"


BUILT_IN_TYPES = (
    AgentType(
        "general-purpose",
        "For research and multi-step tasks: searching the code, changing it, running commands.",
        GENERAL_PURPOSE_PROMPT,
    ),
    AgentType(
        "Explore",
        "Fast, read-only search of the code base: finds files and code and answers questions about "
        "them with file paths and line numbers.",
        EXPLORE_PROMPT,
        tools=("Read", "Grep", "Glob"),
    ),
)


@dataclass(frozen=True)
class InvalidDefinition:
    path: Path
    problem: str
    """A sentence naming the file: what is wrong and what to change."""


@dataclass(frozen=True)
class AgentCatalog:
    types: tuple[AgentType, ...]
    """In listing order: the built-in types, then definitions by name."""
    invalid: tuple[InvalidDefinition, ...] = ()

    def get(self, name: str) -> AgentType | None:
        return next((t for t in self.types if t.name == name), None)

    def names(self) -> list[str]:
        return [t.name for t in self.types]

    def warnings(self) -> list[str]:
        return [t.warning for t in self.types if t.warning]


def definition_folders(cwd: Path, home: Path | None = None) -> list[Path]:
    """Where definitions live, highest precedence first."""
    folders = [folder for root in project_roots(cwd) for folder in (root / ".agentcli/agents", root / ".claude/agents")]
    return [*folders, *user_definition_folders(home)]


def user_definition_folders(home: Path | None = None) -> list[Path]:
    """The user's own definition folders: agentcli's, then Claude Code's."""
    return [(home or agentcli_home()) / "agents", claude_home() / "agents"]


def definition_files(cwd: Path, home: Path | None = None, plugins: Sequence[Plugin] = ()) -> list[Path]:
    """Every `*.md` of the definition folders and their subfolders, in precedence order."""
    return [path for _, path, _ in _definitions(cwd, home, plugins)]


def _definitions(
    cwd: Path, home: Path | None, plugins: Sequence[Plugin] = ()
) -> list[tuple[Path, Path, Plugin | None]]:
    """(agents folder, definition file, its plugin), in precedence order (sorted within a folder;
    hidden ones left out)."""
    found: list[tuple[Path, Path, Plugin | None]] = []
    folders: list[tuple[Path, Plugin | None]] = [(folder, None) for folder in definition_folders(cwd, home)]
    folders += [(folder, plugin) for plugin in plugins for folder in plugin.agents]
    for folder, plugin in folders:
        if folder.is_file():
            found.append((folder.parent, folder, plugin))
            continue
        with contextlib.suppress(OSError):  # no such folder (the usual case), or unreadable
            files = sorted(
                path
                for path in folder.rglob("*.md")
                if not any(part.startswith(".") for part in path.relative_to(folder).parts) and not path.is_dir()
            )
            found.extend((folder, path, plugin) for path in files)
    return found


def load_agent_catalog(cwd: Path, home: Path | None = None, plugins: Sequence[Plugin] = ()) -> AgentCatalog:
    """The built-in types and the definitions on disk now, and the files that could not be used."""
    defined: dict[str, AgentType] = {}
    folder_of: dict[str, Path] = {}
    invalid: list[InvalidDefinition] = []
    own_folders = user_definition_folders(home)
    for folder, path, plugin in _definitions(cwd, home, plugins):
        try:
            agent_type = with_trust(read_definition(path), any(mine in path.parents for mine in own_folders))
            if plugin is not None:
                agent_type = replace(
                    agent_type, name=f"{plugin.name}:{agent_type.name}", source=f"{path} ({plugin.label})"
                )
        except SkillFileError as error:
            invalid.append(InvalidDefinition(path, str(error)))
            continue
        earlier = defined.get(agent_type.name)
        if earlier is not None and folder_of[agent_type.name] == folder:
            invalid.append(
                InvalidDefinition(
                    path,
                    f"{path} defines the agent type {agent_type.name!r}, as {earlier.source} "
                    "does already; rename one of them.",
                )
            )
        elif earlier is None:
            defined[agent_type.name] = agent_type
            folder_of[agent_type.name] = folder
    built_in = [t for t in BUILT_IN_TYPES if t.name not in defined]
    return AgentCatalog((*built_in, *sorted(defined.values(), key=lambda t: t.name.lower())), tuple(invalid))


def load_agent_types(cwd: Path, home: Path | None = None, plugins: Sequence[Plugin] = ()) -> list[AgentType]:
    """The agent types a Task call may start here, in listing order (for `/agents`)."""
    return list(load_agent_catalog(cwd, home, plugins).types)


def read_definition(path: Path) -> AgentType:
    """The agent type `path` defines; SkillFileError saying what is wrong with it."""
    try:
        data = read_regular_file(path, MAX_DEFINITION_BYTES)  # a FIFO is refused, not waited on
    except OSError as error:
        raise SkillFileError(f"Cannot read the agent definition {path}: {error.strerror or error}.") from None
    if len(data) >= MAX_DEFINITION_BYTES:
        raise SkillFileError(f"The agent definition {path} is over {MAX_DEFINITION_BYTES // 1024} KiB; shorten it.")
    front = read_frontmatter(data.decode("utf-8", errors="replace"), str(path))
    fields, body = front.fields, front.body
    name = _text(fields, "name", path)
    if not NAME.fullmatch(name):
        raise SkillFileError(
            f"The agent definition {path} needs a `name:` in its frontmatter: letters, digits, `-`, `_`, `.` or `:` "
            f"(up to 64){f', not {name!r}' if name else ''}."
        )
    description = _text(fields, "description", path)
    if not description:
        raise SkillFileError(
            f"The agent definition {path} needs a `description:` in its frontmatter: when the model should use it."
        )
    if not body.strip():
        raise SkillFileError(f"The agent definition {path} has no system prompt: write it below the frontmatter.")
    model = _text(fields, "model", path)
    tools, tool_notes = tool_entries(fields.get("tools"), path)
    more = more_fields(fields, path)
    more["notes"] = (*tool_notes, *more["notes"])
    warning = front.warning
    if tools is not None and EXIT_PLAN_MODE in tools:  # Claude Code leaves it out of a sub-agent's tools too
        tools = tuple(tool for tool in tools if tool != EXIT_PLAN_MODE)
        left_out = (
            f"The agent definition {path} names {EXIT_PLAN_MODE} in `tools:`, which only the main agent has (it hands "
            "a plan over to the user); it is left out."
        )
        warning = f"{warning} {left_out}" if warning else left_out
    return AgentType(
        name=name,
        description=description,
        prompt=body.strip(),
        tools=tools,
        model=None if model in ("", "inherit") else model,
        max_turns=_max_turns(fields.get("maxTurns"), path),
        source=str(path),
        warning=warning,
        **more,
    )


def with_trust(agent_type: AgentType, own: bool) -> AgentType:
    """`agent_type` as its folder allows: a definition checked in with a project runs no hooks
    and cannot ask for bypassPermissions (each said in a note)."""
    if own:
        return replace(agent_type, own=True)
    notes = list(agent_type.notes)
    hooks, mode = agent_type.hooks, agent_type.permission_mode
    if hooks is not None and hooks.commands:
        notes.append(
            "its `hooks:` do not run: a project's definition never runs programs unasked (put it in "
            "~/.claude/agents/ or $AGENTCLI_HOME/agents/, or the hooks in your settings)"
        )
        hooks = None
    if mode == "bypassPermissions":
        notes.append("`permissionMode: bypassPermissions` is ignored: only a definition of your own may ask for it")
        mode = None
    return replace(agent_type, hooks=hooks, permission_mode=mode, notes=tuple(notes))


def _text(fields: dict[str, object], key: str, path: Path) -> str:
    value = fields.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise SkillFileError(f"In the agent definition {path}, `{key}:` must be text.")
    return " ".join(value.split())


def _max_turns(value: object, path: Path) -> int:
    if value is None:
        return DEFAULT_MAX_TURNS
    if type(value) is not int or value < 1:  # not a bool either
        raise SkillFileError(f"In the agent definition {path}, `maxTurns:` must be a whole number of 1 or more.")
    return value
