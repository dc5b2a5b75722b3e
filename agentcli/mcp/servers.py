"""A session's MCP servers: configured, approved, connected, and handed to each conversation.

    servers = SessionServers(settings, cwd, flag_files, strict, mode=lambda: gate.mode, ...)
    servers.start()              # front end, once the prompt is up: connect the approved ones
    source = servers.source()    # per conversation; `prepare_tools` freezes it at the first request
    servers.prepare_tools(source, context_window)
    servers.close()

Reading the configuration is cheap (JSON files); nothing is started before `start`, and no
manager (no thread, no SDK) exists when no server is configured. Project servers not yet
decided are asked about (REPL) or left out with a notice (`run`) at the first request,
see `agentcli.mcp.approval`. Connect timeout: `MCP_TIMEOUT` (ms) or setting `mcpTimeout`
(ms), default 30 s; a tool call's answer: `MCP_TOOL_TIMEOUT` or `mcpToolTimeout` (ms), default 10
minutes; output cap: `MAX_MCP_OUTPUT_TOKENS` or `maxMcpOutputTokens`; deferred tools
(`agentcli.mcp.search`): `ENABLE_TOOL_SEARCH` or `mcpToolSearchThreshold`. The variable wins over
the setting. A setting out of range (`agentcli.bounds`) is a UsageError; a variable out of range
(it may be set for Claude Code, which reads it too) is passed over with a notice.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.bounds import MILLISECONDS, TOKENS, Range, shown
from agentcli.credentials import PASSTHROUGH_SETTING, passthrough_setting
from agentcli.errors import UsageError
from agentcli.mcp.approval import (
    AsksAboutProjectServer,
    approval_state,
    claude_approval_note,
    how_to_enable,
    remember_approval,
)
from agentcli.mcp.claude_json import ClaudeJson
from agentcli.mcp.config import ServerConfig, load_servers
from agentcli.mcp.names import server_parts
from agentcli.mcp.search import SEARCH_ENV, THRESHOLD_SETTING, threshold_percent
from agentcli.mcp.tools import (
    CALL_TIMEOUT_ENV,
    CALL_TIMEOUT_SETTING,
    CHARS_PER_TOKEN,
    DEFAULT_CALL_TIMEOUT_MS,
    DEFAULT_OUTPUT_TOKENS,
    NOTE_ROOM,
    OUTPUT_ENV,
    OUTPUT_SETTING,
    McpToolSource,
    refused_server_notice,
)
from agentcli.plugins.manifest import Plugin
from agentcli.setting_keys import setting
from agentcli.settings import Settings

if TYPE_CHECKING:
    from agentcli.mcp.elicitation import Elicitor
    from agentcli.mcp.manager import McpManager

TIMEOUT_ENV = "MCP_TIMEOUT"
TIMEOUT_SETTING = setting("mcpTimeout")
DEFAULT_TIMEOUT_MS = 30_000
Notify = Callable[[str], None]


class SessionServers:
    def __init__(
        self,
        settings: Settings,
        cwd: Path,
        flag_files: Sequence[Path],
        strict: bool,
        *,
        mode: Callable[[], str],
        local_settings: Path | None,
        ask: AsksAboutProjectServer | None,
        on_notice: Notify,
        elicitor: Elicitor | None = None,
        plugins: Sequence[Plugin] = (),
    ) -> None:
        self.settings = settings
        self.mode = mode
        self.local_settings = local_settings
        self.ask = ask
        self.on_notice = on_notice
        allowed = passthrough_setting(settings.get(PASSTHROUGH_SETTING), settings.sources.get(PASSTHROUGH_SETTING))
        found = load_servers(cwd, flag_files, strict=strict, allowed=allowed, plugins=plugins)
        self._claude = found.claude or ClaudeJson(Path())
        """Claude Code's `~/.claude.json`: this project's servers the user refused there count, the
        ones approved there are only said (`agentcli.mcp.approval`)."""
        for text in found.notices:
            on_notice(text)
        named, refused = server_parts(found.servers)
        for left_out in refused:
            on_notice(refused_server_notice(left_out, found.servers[left_out.name].source))
        self.refused = [left_out.name for left_out in refused]
        """Servers configured but not used: their names cannot stand in tool names (`agentcli.mcp.names`)."""
        self.timeout_s = _configured(TIMEOUT_ENV, TIMEOUT_SETTING, settings, MILLISECONDS, on_notice) / 1000
        self.output_tokens = _configured(OUTPUT_ENV, OUTPUT_SETTING, settings, TOKENS, on_notice)
        self.call_timeout_s = (
            _configured(CALL_TIMEOUT_ENV, CALL_TIMEOUT_SETTING, settings, MILLISECONDS, on_notice) / 1000
        )
        self.search_percent = threshold_percent(os.environ.get(SEARCH_ENV), settings.get(THRESHOLD_SETTING))
        self.manager: McpManager | None = None
        """None when no server is configured."""
        if named:
            from agentcli.mcp.elicitation import DeclineAll
            from agentcli.mcp.manager import MESSAGE_LIMIT, McpManager  # asyncio and threads only with servers

            output_chars = self.output_tokens * CHARS_PER_TOKEN + NOTE_ROOM
            self.manager = McpManager(
                cwd,
                connect_timeout=self.timeout_s,
                on_notice=on_notice,
                message_limit=max(MESSAGE_LIMIT, 2 * output_chars),
                elicitor=elicitor if elicitor is not None else DeclineAll(on_notice),
            )
            for server in found.servers.values():
                if server.name in named:
                    self.manager.add(server, "needs approval")
        self._started = False
        self._asked = False
        self._told_to_log_in: set[str] = set()

    def start(self) -> None:
        """Connect every approved server in the background; mark the others (once)."""
        if self._started or self.manager is None:
            return
        self._started = True
        for status in self.manager.statuses():
            state = approval_state(status.config, self.settings, self.mode(), self._claude.disabled)
            if state == "approved":
                self.manager.connect(status.name)
            elif state == "changed":
                self.manager.add(status.config, "needs approval", "changed since you approved it")
                self.on_notice(
                    f'MCP server "{status.name}" of .mcp.json changed since you approved it '
                    f"(it now {_what_it_does(status.config)}): it is asked about again before it starts."
                )
            elif state == "disabled":
                where = " (Claude Code's ~/.claude.json)" if status.name in self._claude.disabled else ""
                self.manager.add(status.config, "disabled", f"disabled in disabledMcpjsonServers{where}")
            else:
                self.manager.add(status.config, "needs approval", "a project server not approved yet")

    def source(self) -> McpToolSource:
        """A new conversation's MCP tools (empty until `prepare_tools`)."""
        return McpToolSource(
            self.manager,
            self.on_notice,
            self.output_tokens,
            search_percent=self.search_percent,
            call_timeout=self.call_timeout_s,
        )

    def prepare_tools(self, source: McpToolSource, context_window: int) -> None:
        """Before a conversation's first request: ask about undecided project servers (once), wait
        for connecting ones at most the timeout, and fix the conversation's MCP tools (deferred when
        they would take too much of `context_window`)."""
        if source.frozen:
            return
        self.start()
        self._settle_approvals()
        source.freeze(self.timeout_s, context_window)
        self._tell_who_needs_login()

    def close(self) -> None:
        if self.manager is not None:
            self.manager.close()

    def _tell_who_needs_login(self) -> None:
        """Once a session: which servers' tools are left out until the user logs in, and how."""
        if self.manager is None:
            return
        for status in self.manager.statuses():
            if status.state == "needs login" and status.name not in self._told_to_log_in:
                self._told_to_log_in.add(status.name)
                self.on_notice(f'MCP server "{status.name}" {status.error}; its tools are left out until then.')

    def _settle_approvals(self) -> None:
        if self._asked or self.manager is None:
            return
        self._asked = True
        undecided = [s for s in self.manager.statuses() if s.state == "needs approval"]
        if self.mode() == "bypassPermissions":  # switched to it after start
            for status in undecided:
                self.manager.connect(status.name)
            return
        if self.ask is None:
            if undecided:
                names = [status.name for status in undecided]
                self.on_notice(how_to_enable(names, [name for name in names if self._claude.approved_there(name)]))
            return
        for status in undecided:
            if self._claude.approved_there(status.name):
                self.on_notice(claude_approval_note([status.name]))
            approved = self.ask(status.config)
            self._remember(status.config, approved)
            if approved:
                self.manager.connect(status.name)
            else:
                self.manager.add(status.config, "disabled", "you declined it (disabledMcpjsonServers)")

    def _remember(self, server: ServerConfig, approved: bool) -> None:
        if self.local_settings is None:
            return
        try:
            remember_approval(self.local_settings, server, approved)
        except (OSError, UsageError) as error:
            self.on_notice(
                f"Could not save your answer about MCP server {server.name!r} to {self.local_settings}: {error}"
            )


_DEFAULTS = {
    TIMEOUT_SETTING: DEFAULT_TIMEOUT_MS,
    OUTPUT_SETTING: DEFAULT_OUTPUT_TOKENS,
    CALL_TIMEOUT_SETTING: DEFAULT_CALL_TIMEOUT_MS,
}


def _configured(variable: str, setting: str, settings: Settings, bounds: Range, on_notice: Notify) -> int:
    """The environment `variable`'s whole number, else the `setting`'s, else the default."""
    fallback = _DEFAULTS[setting]
    if (value := settings.get(setting)) is not None:
        source = settings.sources.get(setting)
        fallback = int(bounds.checked(value, f"Setting {setting}{f' in {source}' if source else ''}"))
    text = os.environ.get(variable, "").strip()
    if text:
        try:
            number: int | None = int(text)
        except ValueError:  # not a whole number, or one of more than 4,300 digits
            number = None
        if number is not None and bounds.holds(number):
            return number
        on_notice(f"Ignored {variable}={shown(text)}: it must be {bounds.describe()}. Using {fallback:,}.")
    return fallback


def _what_it_does(server: ServerConfig) -> str:
    verb = "runs" if server.transport == "stdio" else "connects to"
    return f"{verb} {server.target}"
