"""Third-party programs from npm that the tests run against agentcli, each pinned to one version.

`NpmPackage.install()` puts the package into a cache directory outside the checkout
(`$XDG_CACHE_HOME/agentcli-tests`, default `~/.cache/agentcli-tests`), once: later runs find it
there and need neither npm nor the network. `scripts/setup` installs them all
(`python -m tests.npm_packages`) so CI has them before the tests start; a test calls
`install()` itself and skips (or, on CI, fails) with its message when one cannot be had.

Versions are pinned: these packages change their tools, replies and APIs between releases,
and the tests assert on them.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

INSTALL_TIMEOUT = 300  # seconds; a first install downloads about 110 packages
# Without network npm would retry for minutes on every test run; one try, a short timeout.
NPM_OPTIONS = ["--no-audit", "--no-fund", "--no-save", "--prefer-offline", "--fetch-retries=0", "--fetch-timeout=30000"]


class Unavailable(Exception):
    """The package cannot be installed here; the message says why and what would fix it."""


@dataclass(frozen=True)
class NpmPackage:
    name: str
    version: str
    entry: str
    """The file the tests use, relative to the package's folder."""
    purpose: str
    """What the tests use it for, for the messages."""

    def cache_dir(self) -> Path:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        return base / "agentcli-tests" / f"{self.name.lstrip('@').replace('/', '-')}-{self.version}"

    def entry_point(self) -> Path:
        return self.cache_dir() / "node_modules" / self.name / self.entry

    def install(self) -> tuple[str, Path]:
        """`node` and the package's entry point, installing it first if it is not cached."""
        node = shutil.which("node")
        if node is None:
            raise Unavailable(f"{self.name} needs Node.js: install node and npm, then run scripts/setup.")
        prefix = self.cache_dir()
        installed = prefix / ".installed"  # written last: an install cut short is done again
        prefix.mkdir(parents=True, exist_ok=True)
        with (prefix / ".lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers and scripts/setup may install at once
            if not installed.exists():
                self._npm_install(prefix)
                installed.touch()
        return node, self.entry_point()

    def _npm_install(self, prefix: Path) -> None:
        npm = shutil.which("npm")
        spec = f"{self.name}@{self.version}"
        if npm is None:
            raise Unavailable(f"{self.name} is not in {prefix} and npm is not on PATH to install it: install npm.")
        command = [npm, "install", "--prefix", str(prefix), *NPM_OPTIONS, spec]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise Unavailable(f"npm install {spec} took over {INSTALL_TIMEOUT} s (no network?).") from None
        if done.returncode != 0 or not self.entry_point().is_file():
            raise Unavailable(f"npm install {spec} failed (no network?): {_reason(done.stderr)}")


def _reason(stderr: str) -> str:
    """npm's line that says what went wrong, not its `code`/`errno` lines or the log's path."""
    errors = [line.removeprefix("npm error").strip() for line in stderr.splitlines() if line.startswith("npm error")]
    noise = ("code ", "syscall ", "errno ", "A complete log")
    return next((line for line in errors if line and not line.startswith(noise)), stderr.strip()[-300:] or "no output")


MCP_EVERYTHING = NpmPackage(
    "@modelcontextprotocol/server-everything", "2026.8.31", "dist/index.js", "the third-party MCP server"
)
"""The MCP reference server (versioned by date: `add` became `get-sum`, echo gained `Echo: `)."""
ACP_SDK = NpmPackage("@agentclientprotocol/sdk", "2.4.0", "dist/v1/stable/acp.js", "the ACP client")
"""The Agent Client Protocol's official TypeScript SDK, whose client drives `agentcli acp`."""
PACKAGES = (MCP_EVERYTHING, ACP_SDK)


if __name__ == "__main__":
    failed = False
    for package in PACKAGES:
        try:
            package.install()
        except Unavailable as error:
            print(f"skipped {package.name} ({package.purpose} of the tests): {error}", file=sys.stderr)
            failed = True
    sys.exit(1 if failed else 0)
