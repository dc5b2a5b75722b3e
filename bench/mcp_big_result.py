"""Peak memory of one MCP call whose answer is 50 MB: what the stdio transport holds as it arrives.

    .venv/bin/python bench/mcp_big_result.py [SIZE_MB]

Connects to `tests/mcp/raw_server.py` (a stdio server answering `big` with SIZE_MB of text, its
`id` after its `result` as the TypeScript SDK writes) through `McpManager`, calls the tool as a
session does (`McpTool.run`, so the output cap applies), and reports the process's peak RSS
before and after the call, and how long the call took. Run it with another checkout first on
PYTHONPATH to compare.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentcli.contracts import ToolContext  # noqa: E402
from agentcli.mcp.config import ServerConfig  # noqa: E402
from agentcli.mcp.manager import McpManager  # noqa: E402
from agentcli.mcp.tools import McpToolSource  # noqa: E402
from agentcli.workspace.local import LocalWorkspace  # noqa: E402
from tests.mcp.helpers import raw_server  # noqa: E402

MB = 1 << 20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    size = int(float(sys.argv[1]) * MB) if len(sys.argv) > 1 else 50 * MB
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        entry = raw_server(tmp / "spec.json", tools=[{"name": "big", "reply": {"size": size}}], result_first=True)
        config = ServerConfig("raw", "user", tmp, "stdio", command=entry["command"], args=tuple(entry["args"]))
        manager = McpManager(tmp, connect_timeout=60, on_notice=print)
        try:
            manager.add(config)
            manager.connect("raw")
            manager.wait_for_connections(60)
            [tool] = McpToolSource(manager, print).freeze(60)
            before = peak_mb()
            started = time.perf_counter()
            result = tool.run({}, ToolContext(LocalWorkspace(tmp)))
            took = time.perf_counter() - started
            after = peak_mb()
        finally:
            manager.close()
    print(f"One MCP answer of {size / MB:.0f} MB over stdio ({len(result.content):,} characters reach the model):")
    print(f"  peak RSS before the call {before:6.0f} MB")
    print(f"  peak RSS after the call  {after:6.0f} MB  (+{after - before:.0f} MB)")
    print(f"  the call took            {took:6.1f} s")


if __name__ == "__main__":
    main()
