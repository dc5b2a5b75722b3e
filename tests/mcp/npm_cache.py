"""npm packages the tests run, installed once into a cache outside the checkout.

`installed(folder, specs, entry)` installs `specs` (`name@version`, pinned) into
`$XDG_CACHE_HOME/agentcli-tests/<folder>` (default `~/.cache/agentcli-tests`) unless an earlier
run did, and returns that folder: later runs need neither npm nor the network. A marker written
last means an install cut short is done again; a lock lets pytest's workers and `scripts/setup`
install at once. `Unavailable` says why a package cannot be had and what would fix it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

INSTALL_TIMEOUT = 300  # seconds; a first install downloads a hundred packages or so
# Without network npm would retry for minutes on every test run; one try, a short timeout.
NPM_OPTIONS = ["--no-audit", "--no-fund", "--no-save", "--prefer-offline", "--fetch-retries=0", "--fetch-timeout=30000"]


class Unavailable(Exception):
    """The package cannot be installed here; the message says why and what would fix it."""


def command_or_skip(install: Callable[[], list[str]], what: str) -> list[str]:
    """`install()`'s command line; when it is Unavailable, the test skips saying why, except on
    CI (`CI` set), where it fails: CI must have `what`."""
    try:
        return install()
    except Unavailable as error:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install {what} (see scripts/setup): {error}")
        pytest.skip(str(error))


def cache_dir(folder: str) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "agentcli-tests" / folder


def installed(folder: str, specs: Sequence[str], entry: str) -> Path:
    """The cache folder holding `specs`, installing them first if they are not there; `entry`
    (a path inside it) must exist afterwards."""
    prefix = cache_dir(folder)
    marker = prefix / ".installed"
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            _npm_install(prefix, specs, entry)
            marker.touch()
    return prefix


def _npm_install(prefix: Path, specs: Sequence[str], entry: str) -> None:
    what = " ".join(specs)
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable(f"{what} is not in {prefix} and npm is not on PATH to install it: install npm.")
    command = [npm, "install", "--prefix", str(prefix), *NPM_OPTIONS, *specs]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Unavailable(f"npm install {what} took over {INSTALL_TIMEOUT} s (no network?).") from None
    if done.returncode != 0 or not (prefix / entry).is_file():
        raise Unavailable(f"npm install {what} failed (no network?): {_reason(done.stderr)}")


def _reason(stderr: str) -> str:
    """npm's line that says what went wrong, not its `code`/`errno` lines or the log's path."""
    errors = [line.removeprefix("npm error").strip() for line in stderr.splitlines() if line.startswith("npm error")]
    noise = ("code ", "syscall ", "errno ", "A complete log")
    return next((line for line in errors if line and not line.startswith(noise)), stderr.strip()[-300:] or "no output")
