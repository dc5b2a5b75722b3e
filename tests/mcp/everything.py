"""The third-party MCP server the tests run: `@modelcontextprotocol/server-everything` from npm
(pinned and cached as `tests.npm_packages` says)."""

from __future__ import annotations

from tests.npm_packages import MCP_EVERYTHING, Unavailable

__all__ = ["Unavailable", "install"]


def install() -> list[str]:
    """The command line that starts the server over stdio, installing it first if it is not cached."""
    node, entry = MCP_EVERYTHING.install()
    return [node, str(entry), "stdio"]
