"""What a plugin brings, as the user sees it before saying yes to installing or enabling it.

    formatter@team-tools 1.2.0 by Jane: Formats code
      from: https://github.com/team/tools.git (pin 3f2a9c1e0b7d)
      commands: /formatter:fmt (also /fmt)
      skills: /formatter:lint-rules (also /lint-rules)
      agents: formatter:reviewer
      hooks (run programs): PreToolUse [Bash]: python3 ${CLAUDE_PLUGIN_ROOT}/hooks/check.py
      MCP servers (run programs): plugin:formatter:fmt: python3 ${CLAUDE_PLUGIN_ROOT}/server.py
      warnings: ...

Every hook command and MCP server is listed as its file writes it (a `${VAR}` by its name, never
its value), each on its own line: they are what runs with the user's authority once it is enabled.
A name or command from the plugin is shown as plain text (`safe_text.for_terminal`).
"""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.agents.definitions import load_agent_catalog
from agentcli.mcp.config import ServerSet, add_plugin_servers
from agentcli.plugins.hooks import plugin_hooks
from agentcli.plugins.manifest import Plugin
from agentcli.safe_text import for_terminal
from agentcli.settings import agentcli_home, claude_home
from agentcli.skills.loader import load_skills


def describe(plugin: Plugin, cwd: Path, origin: str, pin: str = "") -> list[str]:
    """The lines that say what `plugin` brings, here at `cwd` (which short names it would have);
    `origin`: where its files come from."""
    version = f" {plugin.version}" if plugin.version else ""
    author = f" by {plugin.author}" if plugin.author else ""
    about = f": {plugin.description}" if plugin.description else ""
    lines = [f"{plugin.key}{version}{author}{about}"]
    lines.append(f"  from: {origin}" + (f" (pin {pin[:12]})" if pin else ""))
    catalog = load_skills(cwd, agentcli_home(), claude_home(), [plugin])
    for kind, label in (("command", "commands"), ("skill", "skills")):
        names = [
            f"/{skill.name}"
            + (f" (also /{catalog.shown_name(skill)})" if catalog.shown_name(skill) != skill.name else "")
            for skill in sorted(catalog.skills.values(), key=lambda s: s.name)
            if skill.plugin == plugin.name and skill.kind == kind
        ]
        lines.append(f"  {label}: {', '.join(names) or 'none'}")
    prefix = f"{plugin.name}:"
    agents = [t.name for t in load_agent_catalog(cwd, agentcli_home(), [plugin]).types if t.name.startswith(prefix)]
    lines.append(f"  agents: {', '.join(agents) or 'none'}")
    hooks = plugin_hooks([plugin])
    if hooks.commands:
        lines.append("  hooks (each runs a program with your permissions):")
        for hook in hooks.commands:
            command = " ".join((hook.command, *(hook.args or ())))
            lines.append(f"    {hook.event} [{hook.matcher or '*'}]: {command}")
    else:
        lines.append("  hooks: none")
    servers = ServerSet()
    add_plugin_servers(servers, plugin, os.environ)
    if servers.servers:
        lines.append("  MCP servers (each runs a program or connects to an address):")
        lines.extend(f"    {name}: {server.target}" for name, server in servers.servers.items())
    else:
        lines.append("  MCP servers: none")
    lines.extend(f"  note: {text}" for text in (*plugin.warnings, *hooks.notices, *servers.notices))
    return [for_terminal(line.replace("\n", "\\n")) for line in lines]  # one line each: none can pose as another
