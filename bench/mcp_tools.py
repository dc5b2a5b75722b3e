"""First-request size with a large MCP toolset: 3 servers x 30 tools, sent in full and deferred.

    .venv/bin/python bench/mcp_tools.py

Runs the installed `agentcli run "hi"` against the fake Anthropic server with three demo MCP
servers (`tests/mcp/demo_server.py`, `DEMO_EXTRA_TOOLS=30` each), once with
`ENABLE_TOOL_SEARCH=false` (every tool in `tools`) and once with `ENABLE_TOOL_SEARCH=true`
(`ToolSearch` and `McpCall` instead). Tokens ≈ chars/4, counted as bench/cache_hits.py does.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.cache_hits import first_request_size, run_cli  # noqa: E402
from tests.fake_anthropic import FakeAnthropic, reply, text  # noqa: E402

SERVERS = 3
TOOLS_PER_SERVER = 30
DEMO_SERVER = ROOT / "tests" / "mcp" / "demo_server.py"


def configure(home: Path) -> None:
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(DEMO_SERVER)]}
    entry["env"] = {"DEMO_EXTRA_TOOLS": str(TOOLS_PER_SERVER)}
    servers = {f"tracker{n}": entry for n in range(1, SERVERS + 1)}
    (home / ".agentcli").mkdir(parents=True, exist_ok=True)
    (home / ".agentcli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def first_request(tmp: Path, search: str) -> tuple[dict[str, int], int]:
    home, project = tmp / "home", tmp / "project"
    project.mkdir(parents=True)
    configure(home)
    with FakeAnthropic() as api:
        api.script(reply(text("Hello.")))
        run_cli(api, project, home, "hi", env={"ENABLE_TOOL_SEARCH": search})
        body = api.requests[0].body
    return first_request_size(body), len(body["tools"])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        full, full_count = first_request(Path(tmp) / "full", "false")
        deferred, deferred_count = first_request(Path(tmp) / "deferred", "true")
    print(f"First request for 'hi' with {SERVERS} MCP servers x {TOOLS_PER_SERVER} generated tools (tokens ≈ chars/4):")
    print(f"  {'':10} {'tools':>6} {'tool tokens':>12} {'total':>8}")
    print(f"  {'in full':10} {full_count:6} {full['tools']:12,} {full['total']:8,}")
    print(f"  {'deferred':10} {deferred_count:6} {deferred['tools']:12,} {deferred['total']:8,}")
    print(f"  deferred / in full: {deferred['total'] / full['total']:.2f} of the request")


if __name__ == "__main__":
    main()
