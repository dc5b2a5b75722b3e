"""Every MCP test, in-process or in a process it starts, connects with a generous timeout."""

from __future__ import annotations

import pytest

from tests.mcp.helpers import CONNECT_CEILING


@pytest.fixture(autouse=True)
def generous_connect_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """`MCP_TIMEOUT` for the sessions these tests run (`run_cli`, `start_repl` and `run_main` pass
    the environment on; `run_agent` reads it here); a test of the timeout sets its own."""
    monkeypatch.setenv("MCP_TIMEOUT", str(int(CONNECT_CEILING * 1000)))
