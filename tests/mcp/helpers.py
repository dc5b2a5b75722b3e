"""Configuring the test server (`demo_server.py`, a real MCP server) for a project or a home."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.mcp.warm_demo import launch_args

DEMO_SERVER = Path(__file__).with_name("demo_server.py")
CONNECT_CEILING = 120.0
"""Seconds a server in these tests may take to connect: on a machine busy with other work a
server's start (an interpreter importing the SDK, node) can take many times its usual second,
and a connect timeout reached there is a failure of the machine, not of agentcli. Tests of the
timeout itself set their own."""


def stdio_server(**env: str) -> dict[str, Any]:
    """The `mcpServers` entry that starts the demo server over stdio, warm (`warm_demo.py`: a
    launcher handing its stdio to a copy of a server that has imported the SDK already)."""
    return _entry(launch_args(), env)


def cold_stdio_server(**env: str) -> dict[str, Any]:
    """The `mcpServers` entry that starts `demo_server.py` itself in a new interpreter, for a test
    of what only that shows (the server's own process, its start)."""
    return _entry([str(DEMO_SERVER)], env)


def _entry(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": sys.executable, "args": args}
    if env:
        entry["env"] = env
    return entry


def write_config(path: Path, **servers: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


RAW_SERVER = Path(__file__).with_name("raw_server.py")


def raw_server(spec_file: Path, **spec: Any) -> dict[str, Any]:
    """The `mcpServers` entry of `raw_server.py`, its SPEC (see there) written to `spec_file`."""
    spec_file.write_text(json.dumps(spec))
    return {"command": sys.executable, "args": [str(RAW_SERVER), str(spec_file)]}
