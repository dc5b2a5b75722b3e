"""The API credentials agentcli was given: never handed to child processes, never shown to the model.

- `child_environment(passthrough)` is the environment for every process agentcli starts
  (Bash, a skill's `!` commands, ripgrep, git; later hooks and MCP servers): agentcli's own
  environment without the `CREDENTIAL_VARIABLES`, except those the user names in the
  `subprocessEnvPassthrough` setting (for testing your own API client, say).
- `anthropic_credential()` is the key (or bearer token) requests are sent with; front ends
  check for it at start-up, so a missing key is reported before anything else happens.
- `redact(text)` replaces the value of each credential agentcli holds with `[REDACTED]`, for
  tool output that shows it anyway (a file holding the key, a program printing it).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from typing import NamedTuple

from agentcli.errors import UsageError

CREDENTIAL_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)
PASSTHROUGH_SETTING = "subprocessEnvPassthrough"
REDACTED = "[REDACTED]"
MISSING_CREDENTIAL = (
    "No API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a bearer token) in your environment. "
    "A local server that needs no key takes any value, e.g. ANTHROPIC_API_KEY=none."
)
MIN_SECRET_LENGTH = 12
"""Shorter values are placeholders (`ANTHROPIC_API_KEY=ollama` for a local server), not secrets:
redacting them would garble ordinary output."""


class AnthropicCredential(NamedTuple):
    """One of the two is set: an API key (`x-api-key`), else a bearer token."""

    api_key: str | None
    auth_token: str | None


def anthropic_credential(environ: Mapping[str, str] | None = None) -> AnthropicCredential | None:
    """ANTHROPIC_API_KEY, else ANTHROPIC_AUTH_TOKEN; None when neither is set (or both are empty)."""
    source = os.environ if environ is None else environ
    if key := source.get("ANTHROPIC_API_KEY"):
        return AnthropicCredential(key, None)
    if token := source.get("ANTHROPIC_AUTH_TOKEN"):
        return AnthropicCredential(None, token)
    return None


def child_environment(passthrough: Collection[str] = (), environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child process: agentcli's own, without the credentials not in `passthrough`."""
    source = os.environ if environ is None else environ
    return {name: value for name, value in source.items() if name not in CREDENTIAL_VARIABLES or name in passthrough}


def passthrough_setting(value: object, source: object = "settings") -> frozenset[str]:
    """The `subprocessEnvPassthrough` setting: a list of variable names. UsageError when malformed."""
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(name, str) and name for name in value):
        raise UsageError(
            f"Setting {PASSTHROUGH_SETTING} in {source} must be a list of environment variable names, "
            f'e.g. ["OPENAI_API_KEY"], not {value!r}.'
        )
    return frozenset(value)


def secrets_held() -> list[str]:
    """The credential values in agentcli's environment long enough to be real secrets, longest first."""
    values = {os.environ.get(name, "") for name in CREDENTIAL_VARIABLES}
    return sorted((v for v in values if len(v) >= MIN_SECRET_LENGTH), key=len, reverse=True)


def redact(text: str) -> str:
    """`text` with every credential value agentcli holds replaced by `[REDACTED]`."""
    for secret in secrets_held():
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text
