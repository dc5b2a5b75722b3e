"""Built-in slash commands of the REPL. Skills cannot shadow these (a clash is reported in /help)."""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Column, Table

from agentcli.contracts import JSON
from agentcli.conversation import block_text, blocks_of, is_text, text_of, tool_results
from agentcli.errors import Halt, UsageError
from agentcli.hooks.config import EVENTS
from agentcli.loop import INTERRUPTED_MARKER
from agentcli.mcp.status import ServerStatus
from agentcli.output.labels import format_tokens
from agentcli.permissions.persist import change_rules
from agentcli.permissions.rules import BEHAVIORS, SESSION, Rule, RuleError, RuleSource, parse_rule, split_rule_list
from agentcli.safe_text import for_terminal
from agentcli.sessions.store import SessionInfo, find_session, list_sessions
from agentcli.skills.catalog import BUILT_IN_HOLDER, BUILTIN_NAMES, Skill
from agentcli.tools.todo import progress_line
from agentcli.ui.tool_render import TodoListView

if TYPE_CHECKING:
    from agentcli.mcp.manager import McpManager
    from agentcli.repl.app import Repl
    from agentcli.session import Session

INIT_PROMPT = """Survey this project and write a CLAUDE.md at its root for future coding sessions.
Read the README, the build and test configuration, and a few central source files first.
Keep it short (under 60 lines): what the project is, how to install, build, test and lint
it (exact commands), the layout of the code, and conventions a newcomer would get wrong.
If a CLAUDE.md exists, improve it instead of starting over."""


@dataclass(frozen=True)
class Builtin:
    name: str
    description: str
    run: Callable[[Repl, str], None]
    args: str = ""


class ExitRepl(Exception):
    """Raised by /exit to leave the REPL."""


def _help(repl: Repl, args: str) -> None:
    table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
    table.add_row("[bold]Built-in commands[/bold]", "")
    for builtin in BUILTINS.values():
        table.add_row(escape(f"/{builtin.name} {builtin.args}".rstrip()), builtin.description)
    catalog = repl.session.context.skills()
    skills = catalog.user_invocable()
    if skills:
        table.add_row("", "")
        table.add_row("[bold]Skills and commands[/bold]", "")
    for skill in skills:
        shown = catalog.shown_name(skill)
        name = escape(f"/{shown} {skill.argument_hint or ''}".rstrip())
        also = f" also /{skill.name}" if shown != skill.name else ""
        note = f"  [dim]({escape(_where(skill))}){escape(also)}[/dim]"
        if shown in BUILTINS:
            note += "  [yellow]hidden by the built-in[/yellow]"
        table.add_row(name, escape(skill.description or "") + note)
    for hidden, winner in catalog.shadowed:
        table.add_row(
            escape(f"/{hidden.name}"),
            f"[dim]({escape(_where(hidden))}) hidden by the {escape(winner.source)} {winner.kind}"
            f" {escape(str(winner.path))}[/dim]",
        )
    for lost, holder in catalog.short_names_lost:
        taken = "a built-in command" if holder == BUILT_IN_HOLDER else f"/{escape(holder)}"
        table.add_row(
            escape(f"/{lost.name}"),
            f"[dim]({escape(_where(lost))}) only by this name: /{escape(lost.short_name)} is {taken}[/dim]",
        )
    for name, error in sorted(catalog.errors.items()):
        table.add_row(escape(f"/{name}"), f"[red]unusable: {escape(str(error))}[/red]")
    prompts = repl.session.mcp_content.prompts()
    if prompts:
        table.add_row("", "")
        table.add_row("[bold]MCP prompts[/bold]", "")
    for name, command in sorted(prompts.items()):
        table.add_row(
            escape(for_terminal(f"/{name} {command.hint}".rstrip())),
            escape(for_terminal(command.prompt.description)) + f"  [dim]({escape(for_terminal(command.server))})[/dim]",
        )
    repl.console.print(table)
    web = repl.session.web
    if web.search is None:
        repl.console.print(f"[dim]{escape(web.why_no_search)}[/dim]")
    else:
        repl.console.print(f"[dim]WebSearch searches with {escape(web.search.backend.label)}.[/dim]")
    repl.console.print(
        "[dim]Enter sends · Esc then Enter or a trailing \\ adds a line · Shift-Tab cycles permission modes · "
        "Ctrl-O shows cut-short tool output · # note adds to memory · Ctrl-C interrupts · Ctrl-D exits[/dim]"
    )


def _where(skill: Skill) -> str:
    """`project`, `user (~/.claude)`; `project skill` for a skill folder."""
    return skill.source if skill.kind == "command" else f"{skill.source} skill"


def _clear(repl: Repl, args: str) -> None:
    repl.session.clear()
    repl.last_context_tokens = 0
    repl.console.clear()  # the screen only: what scrolled off stays in the terminal's scrollback
    repl.console.print("[dim]Started a new conversation.[/dim]")


def _resume(repl: Repl, args: str) -> None:
    """`/resume` lists the project's recent sessions and asks for a number; `/resume N|ID` picks directly."""
    sessions = list_sessions(repl.session.cwd)
    if not sessions:
        repl.console.print("[dim]No earlier sessions in this project.[/dim]")
        return
    choice = args.strip()
    if not choice:
        table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
        for number, info in enumerate(sessions, 1):
            current = "  [dim](current)[/dim]" if info.id == repl.session.id else ""
            table.add_row(f"{number}.", escape(info.describe()) + current)
        repl.console.print(table)
        choice = ask("Resume which session? Number (Enter to cancel): ")
        if not choice:
            return
    picked = _pick(repl, sessions, choice)
    if picked is None:
        return
    if picked.id == repl.session.id:
        repl.console.print("[dim]That is the current session.[/dim]")
        return
    try:
        repl.session.resume(picked)
    except UsageError as error:
        repl.console.print(str(error), style="red", markup=False)
        return
    show_resumed(repl)


def _pick(repl: Repl, sessions: list[SessionInfo], choice: str) -> SessionInfo | None:
    if choice.isascii() and choice.isdigit():
        digits = choice.lstrip("0") or "0"
        if len(digits) <= len(str(len(sessions))) and 1 <= int(digits) <= len(sessions):  # never int() of 5,000 digits
            return sessions[int(digits) - 1]
        shown = digits if len(digits) <= 12 else f"{digits[:12]}… ({len(digits):,} digits)"
        repl.console.print(f"No session number {shown}: pick one from 1 to {len(sessions)}.", style="yellow")
        return None
    try:
        return find_session(repl.session.cwd, choice)
    except UsageError as error:
        repl.console.print(str(error), style="red", markup=False)
        return None


def ask(question: str) -> str:
    from prompt_toolkit import prompt

    try:
        return prompt(question).strip()
    except Halt:
        raise
    except (KeyboardInterrupt, EOFError):
        return ""


def show_resumed(repl: Repl) -> None:
    """What the user needs to pick up a resumed conversation: its title, size, and last exchange
    (the answer rendered as Markdown, as it was shown live)."""
    session = repl.session
    loaded = session.resumed
    if loaded is None:
        return
    messages = session.agent.messages
    title = " ".join(loaded.title.split())[:80]
    repl.console.print(
        f"[dim]Resumed “{escape(title)}” · {len(messages)} messages · session {session.id[:8]}[/dim]", highlight=False
    )
    prompt = next((t for m in reversed(messages) if (t := _prompt_of(m))), "")
    answer = next((t for m in reversed(messages) if m["role"] == "assistant" and (t := _text_of(m))), "")
    if prompt:
        repl.console.print(f"> {_clip(prompt)}", style="dim", markup=False)
    if answer:
        from agentcli.ui.markdown_stream import MarkdownStream  # not before the prompt otherwise (see repl.warmup)

        with MarkdownStream(repl.console) as view:  # shows control characters escaped, as live answers do
            view.feed(answer.strip())
    repl.last_context_tokens = session.agent.context_tokens


def _prompt_of(message: JSON) -> str:
    """The user's own words in a user message ("" for tool results, reminders, interrupt markers)."""
    if message["role"] != "user" or not isinstance(message["content"], list):
        return ""
    if tool_results(message["content"]):
        return ""
    texts = [block_text(b) for b in message["content"] if is_text(b)]
    own = [t for t in texts if not t.startswith("<system-reminder>") and t != INTERRUPTED_MARKER]
    return own[-1] if own else ""


def _text_of(message: JSON) -> str:
    return text_of(blocks_of(message))


def _clip(text: str, lines: int = 2) -> str:
    """The first `lines` lines of a message, with every control character shown (`for_terminal`)."""
    kept = for_terminal(text.strip()).split("\n")
    clipped = "\n".join(line[:200] for line in kept[:lines])
    return clipped + ("\n…" if len(kept) > lines else "")


def _rewind(repl: Repl, args: str) -> None:
    from agentcli.repl.rewind import rewind

    rewind(repl, args, ask)


def _compact(repl: Repl, args: str) -> None:
    session = repl.session
    if not session.agent.messages:
        repl.console.print("[dim]Nothing to compact yet.[/dim]")
        return
    try:
        with repl.console.status("Compacting the conversation…"):
            result = session.compact(args.strip())
    except Halt:
        raise
    except KeyboardInterrupt:
        repl.console.print("Compaction cancelled; the conversation is unchanged.", style="yellow")
        return
    repl.console.print(result.describe(), style="dim", markup=False)
    repl.last_context_tokens = session.context_size()


def _exit(repl: Repl, args: str) -> None:
    raise ExitRepl


def _cost(repl: Repl, args: str) -> None:
    """The conversation's spend, a resumed one's earlier spend included (priced at the current model's
    rates; its sub-agents' at theirs)."""
    session = repl.session
    usage = session.usage
    elapsed = time.monotonic() - repl.started
    repl.console.print(
        f"Input: {format_tokens(usage.input_tokens)} · cache reads: {format_tokens(usage.cache_read_input_tokens)}"
        f" · cache writes: {format_tokens(usage.cache_creation_input_tokens)}"
        f" · output: {format_tokens(usage.output_tokens)}\n"
        f"Cost: ${session.cost_usd(usage):.4f}{_spent_before(session)}"
        f" · session time: {int(elapsed // 60)}m {int(elapsed % 60):02d}s"
    )


def _stats(repl: Repl, args: str) -> None:
    """This session's figures, read from its transcript as `agentcli stats` reads every session's."""
    from agentcli.stats.command import session_card

    repl.console.print(session_card(repl.session.transcript.path, repl.session.cwd))


def _spent_before(session: Session) -> str:
    """What /cost says about a resumed conversation's earlier spend ("" for a new conversation)."""
    earlier = session.resumed
    if earlier is None:
        return ""
    if earlier.usage.total_input + earlier.usage.output_tokens:
        return f" (${session.model_info.cost_usd(earlier.usage):.4f} of it before it was resumed)"
    if earlier.messages:
        return " (what it spent before it was resumed was not recorded)"
    return ""


def _model(repl: Repl, args: str) -> None:
    name = args.strip()
    session = repl.session
    if not name:
        repl.console.print(f"Model: {session.model_choice.describe()} ({session.provider})", markup=False)
        return
    try:
        session.set_model(name)
    except UsageError as error:
        repl.console.print(
            f"{error} The model is still {session.model_choice.describe()} ({session.provider}).",
            style="red",
            markup=False,
        )
        return
    repl.console.print(f"Model set to {session.model_choice.describe()} ({session.provider}).", markup=False)


PERMISSIONS_USAGE = (
    "Usage: /permissions [allow|ask|deny RULES] [remove RULES], RULES as for --allowed-tools, "
    "e.g. /permissions allow Read,Bash(git status:*) Edit(src/**)"
)


def _permissions(repl: Repl, args: str) -> None:
    """`/permissions` lists the rules and where each lives; `allow|ask|deny RULES` adds them to the
    local settings file, `remove RULES` takes them out (of that file too, when they are in it)."""
    action, _, rest = args.strip().partition(" ")
    if not action:
        _list_rules(repl)
        return
    texts = split_rule_list(rest)
    if action not in (*BEHAVIORS, "remove") or not texts:
        repl.console.print(PERMISSIONS_USAGE, style="yellow", markup=False)
        return
    if action == "remove":
        _remove_rules(repl, texts)
        return
    behavior = next(b for b in BEHAVIORS if b == action)
    gate = repl.session.gate
    local = gate.local_settings or repl.session.cwd / ".agentcli" / "settings.local.json"
    rules: list[Rule] = []
    for text in texts:
        try:
            rules.append(parse_rule(text, behavior, RuleSource("local", str(local))))
        except RuleError as error:
            repl.console.print(f"Invalid rule {text!r}: {error}. Nothing was added.", style="red", markup=False)
            return
    change_rules(local, behavior, add=[r.text for r in rules])  # the file first: a failure adds nothing
    added = [r.text for r in rules if gate.rules.add(r)]
    already = [r.text for r in rules if r.text not in added]
    where = _shown_path(local, repl.session.cwd)
    if added:
        noun = "rule" if len(added) == 1 else "rules"
        repl.console.print(f"Added {behavior} {noun} {', '.join(added)} to {where}.", markup=False)
    if already:
        repl.console.print(f"Already in force: {', '.join(already)} (now also in {where}).", style="dim", markup=False)


def _remove_rules(repl: Repl, texts: list[str]) -> None:
    """Each rule leaves this session; from a local settings file it is deleted, from the user's or the
    project's file it is not (those are shared): the message says so."""
    gate = repl.session.gate
    for text in texts:
        matching = [r for r in gate.rules.rules if r.text == text.strip()]
        if not matching:
            repl.console.print(f"No rule {text} is in force; /permissions lists them.", style="yellow", markup=False)
            continue
        for rule in matching:
            gate.rules.remove(rule)
            source = rule.source
            if source.scope == "local":
                change_rules(Path(source.label), rule.behavior, remove=[rule.text])
                said = f"Removed {rule.text} from {_shown_path(Path(source.label), repl.session.cwd)}."
            elif source.scope in ("user", "project"):
                shown = _shown_path(Path(source.label), repl.session.cwd)
                said = (
                    f"Removed {rule.text} for this session; it stays in {shown} (edit that file to drop it for good)."
                )
            else:
                said = f"Removed {rule.text} for this session."
            repl.console.print(said, markup=False)


def _list_rules(repl: Repl) -> None:
    gate = repl.session.gate
    repl.console.print(f"Permission mode: [bold]{gate.mode}[/bold]")
    if not gate.rules.rules:
        repl.console.print("[dim]No rules yet. Add one with /permissions allow Bash(npm test:*)[/dim]")
        return
    table = Table("rule", "behaviour", "from", box=None)
    for behavior in BEHAVIORS:
        for rule in gate.rules.of(behavior):
            label = _source_label(rule.source, repl.session.cwd)
            table.add_row(escape(for_terminal(rule.text)), behavior, escape(for_terminal(label)))
    repl.console.print(table)


def _source_label(source: RuleSource, cwd: Path) -> str:
    """Where a rule lives: `local settings .agentcli/settings.local.json`, `--allowed-tools`, …"""
    if source.scope in ("user", "project", "local"):
        return f"{source.scope} settings {_shown_path(Path(source.label), cwd)}"
    return "this session only (not saved)" if source == SESSION else source.label


def _shown_path(path: Path, cwd: Path) -> str:
    """Relative to the project when inside it."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


AGENTS_USAGE = "Usage: /agents lists the agent types; /agents last shows the latest sub-agent's conversation."


def _agents(repl: Repl, args: str) -> None:
    """`/agents` lists the types the Task tool can start and where each is defined; `/agents last`
    prints the conversation of the latest sub-agent to finish."""
    from agentcli.agents.definitions import BUILT_IN

    choice = args.strip()
    if choice == "last":
        repl.view.show_last_subagent()
        return
    if choice:
        repl.console.print(AGENTS_USAGE, style="yellow", markup=False)
        return

    types = repl.session.agent_types.catalog().types  # an unusable definition file is reported as a notice
    table = Table("type", "tools", "model", "from", box=None)
    for kind in types:
        tools = ", ".join(kind.tools) if kind.tools is not None else "all but Task"
        source = kind.source if kind.source == BUILT_IN else _shown_path(Path(kind.source), repl.session.cwd)
        table.add_row(
            f"[bold]{escape(for_terminal(kind.name))}[/bold]\n[dim]{escape(for_terminal(kind.description))}[/dim]",
            escape(for_terminal(tools)),
            escape(for_terminal(kind.model or "inherit")),
            escape(for_terminal(source)),
        )
    repl.console.print(table)
    repl.console.print(
        "[dim]Custom types: .agentcli/agents/*.md or .claude/agents/*.md in the project, "
        "$AGENTCLI_HOME/agents/*.md or ~/.claude/agents/*.md for all projects · /agents last shows the latest "
        "sub-agent's conversation[/dim]"
    )


def _hooks(repl: Repl, args: str) -> None:
    """`/hooks` lists the hooks that run in this session, by event, with the file of each, and the
    guards left for PreToolUse entries that could not be used (`hooks.config`)."""
    hooks = (*repl.session.hooks.config.commands, *repl.session.hooks.config.guards)
    if not hooks:
        repl.console.print(
            '[dim]No hooks. Add them under "hooks" in .agentcli/settings.json, .agentcli/settings.local.json '
            "or $AGENTCLI_HOME/settings.json, or Claude Code's .claude/settings.json, .claude/settings.local.json "
            "or ~/.claude/settings.json (Claude Code's format).[/dim]"
        )
        return
    table = Table("event", "matcher", "command", "timeout", "from", box=None)
    for hook in sorted(hooks, key=lambda h: EVENTS.index(h.event)):
        matcher = (hook.matcher or "*") + (f" if {hook.condition.text}" if hook.condition else "")
        command = " ".join((hook.command, *(hook.args or ()))) + (" (async)" if hook.background else "")
        if hook.unread:
            command = "(bad: asks)"
        table.add_row(
            hook.event,
            escape(for_terminal(matcher)),
            escape(for_terminal(command)),
            f"{hook.timeout:g} s" if not hook.unread else "",
            escape(for_terminal(hook.origin or _shown_path(hook.source, repl.session.cwd))),
        )
    repl.console.print(table)


def _plugin(repl: Repl, args: str) -> None:
    """`/plugin …`: what `agentcli plugin …` does (agentcli.plugins.manage), asking here before
    anything is installed or enabled. A change applies to the next session."""
    from agentcli.plugins.manage import PluginCommands, run_words
    from agentcli.plugins.manifest import PluginError

    def say(line: str) -> None:
        repl.console.print(for_terminal(line), markup=False, highlight=False)

    def answer(lines: list[str], question: str) -> bool:
        for line in lines:
            say(line)
        return ask(f"{question} [y/N] ").lower() in ("y", "yes")

    try:
        words = shlex.split(args)
        run_words(PluginCommands(repl.session.cwd, say, answer), words)
    except (PluginError, UsageError, ValueError, OSError) as error:
        repl.console.print(for_terminal(str(error)), style="yellow", markup=False)
        return
    if words and words[0] in ("install", "enable", "disable", "uninstall", "update"):
        repl.console.print("[dim]Plugins load as a session starts: restart agentcli to use the change.[/dim]")


def _sandbox(repl: Repl, args: str) -> None:
    """`/sandbox`: whether the agent's commands run in the sandbox, what it allows, and what is
    missing to turn it on."""
    from agentcli.session.sandbox import describe

    for line in describe(repl.session.sandbox):
        repl.console.print(escape(for_terminal(line)))


MCP_USAGE = (
    "Usage: /mcp shows the MCP servers; /mcp reconnect NAME restarts one; /mcp login NAME logs in to a remote "
    "one (OAuth, in your browser); /mcp logout NAME forgets its login."
)
MCP_ACTIONS = ("reconnect", "login", "logout")


def _mcp(repl: Repl, args: str) -> None:
    """`/mcp`: each MCP server's state, login, tool count and error; `/mcp reconnect NAME` restarts
    one, `/mcp login NAME` logs in to one (and connects it), `/mcp logout NAME` forgets its login
    (only for servers already approved: none of these starts a project server nobody approved)."""
    manager = repl.session.mcp.manager
    if manager is None:
        repl.console.print(
            "[dim]No MCP servers. Add one with `agentcli mcp add NAME -- COMMAND [ARGS...]` "
            "(or --transport http NAME URL), or configure .mcp.json.[/dim]"
        )
        return
    words = args.split()
    if not words:
        _show_servers(repl, manager, manager.statuses())
        return
    if words[0] not in MCP_ACTIONS or len(words) != 2:
        repl.console.print(MCP_USAGE, style="yellow", markup=False)
        return
    action, name = words
    try:
        status = manager.status(name)
    except KeyError:
        known = ", ".join(s.name for s in manager.statuses())
        repl.console.print(f"No MCP server {name!r}; the servers are: {known}.", style="yellow", markup=False)
        return
    if status.state in ("needs approval", "disabled"):
        repl.console.print(
            f"MCP server {name!r} is {status.state} ({status.error}); approve it in "
            ".agentcli/settings.local.json (enabledMcpjsonServers) first.",
            style="yellow",
            markup=False,
        )
        return
    if action == "logout":
        from agentcli.mcp.login_flow import log_out

        repl.console.print(log_out(manager, name), markup=False)
        return
    if action == "login":
        if not _mcp_login(repl, name):
            return
    else:
        repl.console.print(f"Reconnecting MCP server {name}…", style="dim", markup=False)
        manager.connect(name)
        manager.wait_for(name, repl.session.mcp.timeout_s)
        _show_servers(repl, manager, [manager.status(name)])
    if manager.status(name).state == "connected":
        repl.console.print("[dim]Its tools join at the next conversation (/clear) if they were not offered yet.[/dim]")


def _mcp_login(repl: Repl, name: str) -> bool:
    """Log in to `name` in the browser; True when it is connected afterwards."""
    from agentcli.mcp.login import LoginFailed  # a local HTTP server: only when logging in
    from agentcli.mcp.login_flow import log_in, login_result

    manager = repl.session.mcp.manager
    assert manager is not None

    def show(line: str) -> None:
        repl.console.print(line, style="yellow" if line.startswith("!") else None, markup=False, soft_wrap=True)

    try:
        status = log_in(manager, name, show, paste_from=sys.stdin.fileno())
    except LoginFailed as error:
        repl.console.print(for_terminal(f"{error}."), style="yellow", markup=False)
        return False
    except Halt:
        raise
    except KeyboardInterrupt:
        repl.console.print(f"Stopped logging in to {name}.", style="yellow", markup=False)
        return False
    repl.console.print(login_result(status, manager.auth_store), markup=False)
    return status.state == "connected"


def _show_servers(repl: Repl, manager: McpManager, statuses: list[ServerStatus]) -> None:
    """The table of servers, then each connected server's tools by the names rules use."""
    from agentcli.mcp.auth_store import login_label
    from agentcli.mcp.listing import RULES_HINT, server_label, tool_listing
    from agentcli.mcp.names import server_parts

    parts, _ = server_parts(status.name for status in statuses)
    logins = [login_label(status.config, manager.auth_store) for status in statuses]
    with_logins = any(logins)  # only remote servers log in: without one the column would be empty
    sources = [
        escape(for_terminal(status.config.origin or _shown_path(status.config.source, repl.session.cwd)))
        for status in statuses
    ]
    # the file is shown whole (it is what the user opens to fix a server); the error wraps instead
    whole = Column("from", min_width=min(max(map(len, sources), default=4), max(20, repl.console.width - 40)))
    table = Table("server", "scope", "state", "tools", *(["login"] if with_logins else []), whole, Column(""), box=None)
    colours = {"connected": "green", "failed": "red", "connecting": "yellow", "needs login": "yellow"}
    for status, login, source in zip(statuses, logins, sources, strict=True):
        tools = str(len(status.tools)) if status.state == "connected" else ""
        colour = colours.get(status.state, "dim")
        table.add_row(
            escape(for_terminal(server_label(status, parts))),
            status.config.scope,
            f"[{colour}]{status.state}[/{colour}]",
            tools,
            *([login] if with_logins else []),
            source,
            escape(for_terminal(status.error)),
        )
    repl.console.print(table)
    for status in statuses:
        listing = tool_listing(status, parts)
        if listing is None:
            continue
        lines = [f"Tools of {status.name}: {listing.tools}"]
        lines.extend(f'Left out of {status.name}: "{tool.name}": {tool.why}' for tool in listing.left_out)
        repl.console.print(for_terminal("\n".join(lines)), markup=False, highlight=False)
    if any(status.state == "connected" for status in statuses):
        repl.console.print(RULES_HINT, style="dim", markup=False)
    if any(status.state == "failed" for status in statuses):
        repl.console.print("[dim]/mcp reconnect NAME restarts a failed server.[/dim]")
    if any(status.state == "needs login" for status in statuses):
        repl.console.print("[dim]/mcp login NAME logs in (in your browser; the address is shown too).[/dim]")


def _todos(repl: Repl, args: str) -> None:
    todos = repl.session.context.todos.items
    if not todos:
        repl.console.print("[dim]No tasks: the model keeps a task list (TodoWrite) for work in several steps.[/dim]")
        return
    repl.console.print(f"Tasks ({progress_line(todos)}):", markup=False)
    repl.console.print(TodoListView(todos, prefix="  "))


def _init(repl: Repl, args: str) -> None:
    repl.send(INIT_PROMPT + (f"\n\n{args}" if args.strip() else ""))


def _memory(repl: Repl, args: str) -> None:
    from agentcli.repl.memory import memory_command

    memory_command(repl, args, ask)


BUILTINS: dict[str, Builtin] = {
    b.name: b
    for b in (
        Builtin("help", "Show commands, skills and keys", _help),
        Builtin("clear", "Clear the screen and start a new conversation (and transcript)", _clear),
        Builtin("resume", "Pick a recent session of this project and continue it", _resume, "[number|id]"),
        Builtin(
            "rewind",
            "Back to before an earlier turn: its code, its conversation or both (also Esc Esc)",
            _rewind,
            "[turn [both|conversation|code]|undo]",
        ),
        Builtin(
            "compact",
            "Shrink the conversation: clear old tool results, then summarise",
            _compact,
            "[instructions]",
        ),
        Builtin("cost", "Tokens, cache use, cost and time of this conversation (a resumed one's too)", _cost),
        Builtin("stats", "Tool calls, failures, stops, latency and cost of this session (see agentcli stats)", _stats),
        Builtin("todos", "Show the model's task list for this conversation", _todos),
        Builtin(
            "agents",
            "List the sub-agent types and where each is defined; last: the latest one's conversation",
            _agents,
            "[last]",
        ),
        Builtin(
            "mcp",
            "MCP servers: state, login, tools, errors; reconnect one, log in to or out of one",
            _mcp,
            "[reconnect|login|logout NAME]",
        ),
        Builtin("sandbox", "Whether commands run in the sandbox, what it allows, how to turn it on", _sandbox),
        Builtin("hooks", "List the hooks that run in this session and the file of each", _hooks),
        Builtin(
            "plugin",
            "Plugins and marketplaces: list, install, enable, disable, uninstall, update",
            _plugin,
            "[list|install|enable|disable|uninstall|update|marketplace …]",
        ),
        Builtin("model", "Show or change the model (provider:model switches provider)", _model, "[name]"),
        Builtin(
            "permissions",
            "Show rules and where each comes from; add or remove rules",
            _permissions,
            "[allow|ask|deny|remove RULES]",
        ),
        Builtin("init", "Ask the model to write a starter CLAUDE.md for this project", _init),
        Builtin(
            "memory",
            "List the instruction files loaded; open one in $EDITOR (# text at the prompt adds a line)",
            _memory,
            "[number]",
        ),
        Builtin("exit", "Leave agentcli", _exit),
        Builtin("quit", "Leave agentcli", _exit),
    )
}
assert set(BUILTINS) == set(BUILTIN_NAMES), "skills.catalog.BUILTIN_NAMES lists the built-in commands"
