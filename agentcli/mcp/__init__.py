"""MCP: tools (and, through the manager, prompts and resources) from Model Context Protocol servers.

The pieces, each its own module; none imports the `mcp` SDK (~0.5 s) except `connection`,
`offers` and `stdio`, which only the manager's background thread loads, so start-up never pays
for it:

- `config`: which servers there are (`.mcp.json`, `$AGENTCLI_HOME/mcp.json`, `--mcp-config`),
  `${VAR}` expanded: `load_servers(cwd, files, strict=...)` → `ServerSet`.
- `approval`: which project servers may start (settings, the REPL's question, bypassPermissions):
  `approval_state(server, settings, mode)`, `remember_approval(path, server, approved)`
  (a yes pinned to what the server runs).
- `manager`: `McpManager` connects the servers in parallel on one asyncio loop in a background
  thread, keeps each one's `ServerStatus`, calls tools (`call_tool`), runs any other request on a
  server's SDK `ClientSession` (`request`), reconnects one (`reconnect`) and stops them all (`close`).
- `names`: the one name each tool goes by, `mcp__<server>__<tool>`, which rules name exactly; a
  server or tool whose name would read two ways is refused. `schemas`: input schemas the API takes.
- `stdio`: the stdio transport, reading a server's output with a bound (`capped_json`).
- `tools`: `McpTool` (a `contracts.Tool`) and `McpToolSource`, the tools a conversation offers,
  fixed at its first request so the manifest stays byte-stable (the prompt cache).
- `listing`: a server's tools as `/mcp` and `agentcli mcp list` show them.
- `search`: a large toolset deferred behind `ToolSearch` and `McpCall` (`ENABLE_TOOL_SEARCH`,
  `mcpToolSearchThreshold`), so each request stays small and the manifest byte-stable.
- `launch`: the stub every stdio server is started through, so it dies with agentcli.
"""
