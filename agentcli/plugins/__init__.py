"""Plugins: Claude Code's bundles of commands, agents, skills, hooks and MCP servers.

- `manifest`: reading one plugin folder (`.claude-plugin/plugin.json` and the default folders), leniently.
- `marketplace`: reading a marketplace's `.claude-plugin/marketplace.json` and where each entry's files are.
- `fetch`: getting files from a git repository or a local folder (`git` run with no terminal prompt).
- `store`: what is installed under `$AGENTCLI_HOME/plugins`, pinned, installed atomically.
- `enabled`: which plugins a session loads (`enabledPlugins` in the user's own settings).
- `describe`: what a plugin brings, shown before the user says yes.
- `manage`: the operations `agentcli plugin …` and the REPL's `/plugin` offer.
"""
