"""The third-party MCP server the tests run: `@modelcontextprotocol/server-everything` from npm.

`install()` puts the pinned version into the tests' npm cache (`tests.mcp.npm_cache`), once.
`scripts/setup` calls this module (`python -m tests.mcp.everything`) so CI has it before the
tests start; the tests call `install()` themselves and skip (or, on CI, fail) with its message
when it cannot be had.

The version is pinned because the package is versioned by date, not by compatibility: its tool
names and result texts change between releases (`add` became `get-sum`, echo's reply gained an
`Echo: ` prefix), and the tests assert on both.
"""

from __future__ import annotations

import shutil
import sys

from tests.mcp.npm_cache import Unavailable, installed

PACKAGE = "@modelcontextprotocol/server-everything"
VERSION = "2026.8.31"
ENTRY = f"node_modules/{PACKAGE}/dist/index.js"

__all__ = ["Unavailable", "install"]


def install() -> list[str]:
    """The command line that starts the server over stdio, installing it first if it is not cached."""
    node = shutil.which("node")
    if node is None:
        raise Unavailable(f"{PACKAGE} needs Node.js: install node and npm, then run scripts/setup.")
    prefix = installed(f"server-everything-{VERSION}", [f"{PACKAGE}@{VERSION}"], ENTRY)
    return [node, str(prefix / ENTRY), "stdio"]


if __name__ == "__main__":
    try:
        install()
    except Unavailable as error:
        sys.exit(f"skipped {PACKAGE} (for an MCP test): {error}")
