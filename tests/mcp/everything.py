"""The third-party MCP server the tests run: `@modelcontextprotocol/server-everything` from npm.

`install()` puts the pinned version into a cache directory outside the checkout
(`$XDG_CACHE_HOME/agentcli-tests`, default `~/.cache/agentcli-tests`), once: later runs find it
there and need neither npm nor the network. `scripts/setup` calls this module
(`python -m tests.mcp.everything`) so CI has it before the tests start; the tests call
`install()` themselves and skip (or, on CI, fail) with its message when it cannot be had.

The version is pinned because the package is versioned by date, not by compatibility: its tool
names and result texts change between releases (`add` became `get-sum`, echo's reply gained an
`Echo: ` prefix), and the tests assert on both.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGE = "@modelcontextprotocol/server-everything"
VERSION = "2026.8.31"
INSTALL_TIMEOUT = 300  # seconds; a first install downloads about 110 packages
# Without network npm would retry for minutes on every test run; one try, a short timeout.
NPM_OPTIONS = ["--no-audit", "--no-fund", "--no-save", "--prefer-offline", "--fetch-retries=0", "--fetch-timeout=30000"]


class Unavailable(Exception):
    """The server cannot be installed here; the message says why and what would fix it."""


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "agentcli-tests" / f"server-everything-{VERSION}"


def _entry_point(prefix: Path) -> Path:
    return prefix / "node_modules" / PACKAGE / "dist" / "index.js"


def install() -> list[str]:
    """The command line that starts the server over stdio, installing it first if it is not cached."""
    node = shutil.which("node")
    if node is None:
        raise Unavailable(f"{PACKAGE} needs Node.js: install node and npm, then run scripts/setup.")
    prefix = cache_dir()
    installed = prefix / ".installed"  # written last: an install cut short is done again
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers and scripts/setup may install at once
        if not installed.exists():
            _npm_install(prefix)
            installed.touch()
    return [node, str(_entry_point(prefix)), "stdio"]


def _npm_install(prefix: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable(f"{PACKAGE} is not in {prefix} and npm is not on PATH to install it: install npm.")
    command = [npm, "install", "--prefix", str(prefix), *NPM_OPTIONS, f"{PACKAGE}@{VERSION}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Unavailable(f"npm install {PACKAGE}@{VERSION} took over {INSTALL_TIMEOUT} s (no network?).") from None
    if done.returncode != 0 or not _entry_point(prefix).is_file():
        raise Unavailable(f"npm install {PACKAGE}@{VERSION} failed (no network?): {_reason(done.stderr)}")


def _reason(stderr: str) -> str:
    """npm's line that says what went wrong, not its `code`/`errno` lines or the log's path."""
    errors = [line.removeprefix("npm error").strip() for line in stderr.splitlines() if line.startswith("npm error")]
    noise = ("code ", "syscall ", "errno ", "A complete log")
    return next((line for line in errors if line and not line.startswith(noise)), stderr.strip()[-300:] or "no output")


if __name__ == "__main__":
    try:
        install()
    except Unavailable as error:
        sys.exit(f"skipped {PACKAGE} (for an MCP test): {error}")
