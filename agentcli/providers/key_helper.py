"""`apiKeyHelper`: a command in your own settings that prints the Anthropic API key, as in Claude Code.

    helper = KeyHelper(KeyHelperCommand("vault read -field=key secret/llm", source, cwd))
    helper.key()                # runs the command the first time, then the kept key until `ttl_s` passes
    helper.refreshed(stale)     # after a 401: runs it again (once, for every thread that was refused `stale`)

- **How it runs.** `/bin/sh -c COMMAND` in the project, stdin empty, with agentcli's environment
  without the credentials (`agentcli.credentials.child_environment`), in a process group of its
  own, killed with it after `TIMEOUT_S`. One run at a time: the sub-agents share the helper.
- **The key** is what it prints on stdout, stripped; the provider sends it as Claude Code does,
  as `x-api-key` and as `Authorization: Bearer` (`headers`). It is never shown, logged or handed
  on, and tool output that holds it is redacted as the other credentials are
  (`agentcli.credentials.hold_secret`).
- **Kept** for `ttl_s`: 5 minutes, or `CLAUDE_CODE_API_KEY_HELPER_TTL_MS` (`ttl_from_environment`).
- **A failure** (it cannot start, exits with another code than 0, is killed at the timeout,
  prints nothing) is a `ModelAPIError` of one line naming the settings file, with the last line
  of its stderr, never its stdout (that would be the key, or part of it).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentcli.bounds import MILLISECONDS, shown
from agentcli.capped_output import run_capped
from agentcli.credentials import child_environment, hold_secret
from agentcli.errors import ModelAPIError
from agentcli.safe_text import for_terminal

TTL_VARIABLE = "CLAUDE_CODE_API_KEY_HELPER_TTL_MS"
DEFAULT_TTL_S = 300.0
TIMEOUT_S = 60.0
"""How long the command may take: a helper that asks a vault takes seconds, one that hangs is stopped."""
MAX_OUTPUT_BYTES = 64 * 1024
STDERR_SHOWN = 200
"""The most characters of the helper's stderr a failure shows."""


@dataclass(frozen=True)
class KeyHelperCommand:
    command: str
    source: Path | None
    """The settings file that set it, named when it fails."""
    cwd: Path
    ttl_s: float = DEFAULT_TTL_S
    timeout_s: float = TIMEOUT_S


class KeyHelper:
    """The key `command` prints, kept for `ttl_s` (see the module)."""

    def __init__(self, command: KeyHelperCommand, clock: Callable[[], float] = time.monotonic) -> None:
        self.command = command
        self._clock = clock
        self._lock = threading.Lock()
        self._key: str | None = None
        self._fetched_at = 0.0

    def key(self) -> str:
        """The kept key, or a new one when there is none or it is older than `ttl_s`.
        ModelAPIError when the command fails."""
        with self._lock:
            if self._key is None or self._clock() - self._fetched_at >= self.command.ttl_s:
                self._fetch()
            assert self._key is not None
            return self._key

    def refreshed(self, refused: str) -> str:
        """A new key after the server refused `refused`; the kept one when another thread refreshed it already."""
        with self._lock:
            if self._key is None or self._key == refused:
                self._fetch()
            assert self._key is not None
            return self._key

    def _fetch(self) -> None:
        self._key = None
        key = run_helper(self.command)
        hold_secret(key)
        self._key, self._fetched_at = key, self._clock()


def headers(key: str) -> dict[str, str]:
    """The key as Claude Code sends a helper's: both ways an Anthropic-compatible server may read it."""
    return {"x-api-key": key, "authorization": f"Bearer {key}"}


def run_helper(command: KeyHelperCommand) -> str:
    """What `command` prints, stripped; ModelAPIError when it fails (see the module)."""
    where = f" (apiKeyHelper in {command.source})" if command.source else " (apiKeyHelper)"
    try:
        done = run_capped(
            ["/bin/sh", "-c", command.command],
            cwd=command.cwd,
            env=child_environment(),
            limit=MAX_OUTPUT_BYTES,
            timeout=command.timeout_s,
            own_group=True,
        )
    except OSError as error:
        raise ModelAPIError(f"The API key helper could not start{where}: {error.strerror or error}.") from None
    printed = done.stdout.decode("utf-8", "replace").strip()
    said = _last_line(done.stderr, hiding=printed)
    if done.timed_out:
        raise ModelAPIError(f"The API key helper did not finish within {command.timeout_s:g} s{where}{said}.")
    if done.exit_code != 0:
        raise ModelAPIError(f"The API key helper failed with exit code {done.exit_code}{where}{said}.")
    key = printed
    if not key:
        raise ModelAPIError(f"The API key helper printed no key{where}{said}.")
    if done.stdout_cut or not all("!" <= char <= "~" for char in key):  # a header could not carry it
        raise ModelAPIError(
            f"The API key helper printed more than a key; it must print the key alone, on one line{where}."
        )
    return key


def _last_line(stderr: bytes, hiding: str) -> str:
    """`: LINE`, the last line of the helper's stderr, cut and made safe to print; empty when it
    said nothing, or when the line holds what it printed on stdout (a key, perhaps)."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines or (hiding and any(part in lines[-1] for part in hiding.split())):
        return ""
    line = for_terminal(lines[-1])
    return f": {line[: STDERR_SHOWN - 1] + '…' if len(line) > STDERR_SHOWN else line}"


def ttl_from_environment(notice: Callable[[str], None], environ: Mapping[str, str] | None = None) -> float:
    """`CLAUDE_CODE_API_KEY_HELPER_TTL_MS` in seconds; else the default, with a notice when it is
    set but not a whole number of milliseconds in range."""
    text = (os.environ if environ is None else environ).get(TTL_VARIABLE, "").strip()
    if not text:
        return DEFAULT_TTL_S
    try:
        number: int | None = int(text)
    except ValueError:
        number = None
    if number is not None and MILLISECONDS.holds(number):
        return number / 1000
    notice(
        f"Ignored {TTL_VARIABLE}={shown(text)}: it must be {MILLISECONDS.describe()}. "
        f"Using {DEFAULT_TTL_S * 1000:,.0f}."
    )
    return DEFAULT_TTL_S


def key_helper_of(command: object, source: Path | None, cwd: Path, notice: Callable[[str], None]) -> KeyHelper | None:
    """The helper the setting `command` (from the file `source`) names, run in `cwd`; None when it names none."""
    if not isinstance(command, str) or not command.strip():
        return None
    return KeyHelper(KeyHelperCommand(command, source, cwd, ttl_from_environment(notice)))
