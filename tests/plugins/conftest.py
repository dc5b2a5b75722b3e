"""The plugins' MCP servers connect with the MCP tests' generous timeout (a busy machine is slow to start them)."""

from __future__ import annotations

from tests.mcp.conftest import generous_connect_timeout

__all__ = ["generous_connect_timeout"]
