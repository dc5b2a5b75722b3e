"""The API credentials agentcli was given: never handed to child processes, never shown to the model.

- `child_environment(passthrough)` is the environment for every process agentcli starts
  (Bash, a skill's `!` commands, ripgrep, git, hooks): agentcli's own environment without its
  credentials (`withheld_variables`: the `CREDENTIAL_VARIABLES`, and any other variable holding
  one of their values), except those the user names in the `subprocessEnvPassthrough` setting
  (for testing your own API client, say). The same variables are never expanded into what a
  checked-in file configures (`agentcli.expansion`).
- `anthropic_credential()` is the key (or bearer token) requests are sent with; front ends
  check for it at start-up, so a missing key is reported before anything else happens. On
  Amazon Bedrock or Google Vertex AI (`cloud_platform()`) the platform's own credentials are
  used instead, which the SDK finds.
- `redact(text)` replaces the value of each credential agentcli holds with `[REDACTED]`, for
  tool output that shows it anyway (a file holding the key, a program printing it); the key an
  `apiKeyHelper` printed is one of them (`hold_secret`).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from typing import NamedTuple

from agentcli.errors import UsageError
from agentcli.setting_keys import setting

CREDENTIAL_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AWS_BEARER_TOKEN_BEDROCK",
    "ANTHROPIC_VERTEX_ACCESS_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
)
"""Every provider's key or token (cloud platforms' included), and the extra request headers that
may carry a gateway's token."""
CLOUD_ACCOUNT_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
)
"""The user's cloud account (Bedrock and Vertex AI reach Claude with it). Commands the user
approves keep it (their `aws` and `gcloud` need it), but a checked-in file never has it
expanded into what it configures (`agentcli.expansion`)."""
PASSTHROUGH_SETTING = setting("subprocessEnvPassthrough")
REDACTED = "[REDACTED]"
MISSING_CREDENTIAL = (
    "No API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a bearer token) in your environment. "
    "A local server that needs no key takes any value, e.g. ANTHROPIC_API_KEY=none."
)
MIN_SECRET_LENGTH = 12
"""Shorter values are placeholders (`ANTHROPIC_API_KEY=ollama` for a local server), not secrets:
redacting them would garble ordinary output."""


PLATFORM_VARIABLES = {"AGENTCLI_USE_BEDROCK": "bedrock", "AGENTCLI_USE_VERTEX": "vertex"}
"""Set to 1 to reach Claude through a cloud platform instead of the Anthropic API."""
_TRUE = ("1", "true", "yes", "on")


class AnthropicCredential(NamedTuple):
    """An API key (`x-api-key`), else a bearer token; neither on a cloud platform (its own credentials)."""

    api_key: str | None
    auth_token: str | None


def anthropic_credential(environ: Mapping[str, str] | None = None) -> AnthropicCredential | None:
    """ANTHROPIC_API_KEY, else ANTHROPIC_AUTH_TOKEN; None when neither is set (or both are empty)
    and no cloud platform is chosen."""
    source = os.environ if environ is None else environ
    if _chosen_platforms(source):
        return AnthropicCredential(None, None)
    if key := source.get("ANTHROPIC_API_KEY"):
        return AnthropicCredential(key, None)
    if token := source.get("ANTHROPIC_AUTH_TOKEN"):
        return AnthropicCredential(None, token)
    return None


def cloud_platform(environ: Mapping[str, str] | None = None) -> str | None:
    """`bedrock` or `vertex` when AGENTCLI_USE_BEDROCK or AGENTCLI_USE_VERTEX is set to 1; else None.

    UsageError when both are: which one was meant cannot be guessed."""
    chosen = _chosen_platforms(os.environ if environ is None else environ)
    if len(chosen) > 1:
        raise UsageError("Both AGENTCLI_USE_BEDROCK and AGENTCLI_USE_VERTEX are set: unset the one you do not mean.")
    return PLATFORM_VARIABLES[chosen[0]] if chosen else None


def _chosen_platforms(environ: Mapping[str, str]) -> list[str]:
    return [name for name in PLATFORM_VARIABLES if environ.get(name, "").strip().lower() in _TRUE]


def child_environment(passthrough: Collection[str] = (), environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child process: agentcli's own, without the credentials not in `passthrough`."""
    source = os.environ if environ is None else environ
    withheld = withheld_variables(passthrough, source)
    return {name: value for name, value in source.items() if name not in withheld}


def withheld_variables(passthrough: Collection[str] = (), environ: Mapping[str, str] | None = None) -> set[str]:
    """The variables of `environ` that hold a credential and are not in `passthrough`: the
    `CREDENTIAL_VARIABLES`, and any other whose value contains one of theirs (a copy the user
    exported under another name)."""
    source = os.environ if environ is None else environ
    secrets = _secret_values(source, (name for name in CREDENTIAL_VARIABLES if name not in passthrough))
    return {
        name
        for name, value in source.items()
        if name not in passthrough and (name in CREDENTIAL_VARIABLES or any(secret in value for secret in secrets))
    }


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


_held: frozenset[str] = frozenset()
"""Keys agentcli holds that are in no variable: what `apiKeyHelper` printed. Replaced, never
changed in place, so a thread redacting while another adds one reads a whole set."""


def hold_secret(value: str) -> None:
    """Redact `value` from now on, as the credentials of the environment are (`redact`)."""
    global _held
    if len(value) >= MIN_SECRET_LENGTH:
        _held = _held | {value}


def secrets_held() -> list[str]:
    """The credential values agentcli holds (in its environment, or from `apiKeyHelper`) long
    enough to be real secrets, longest first."""
    values = {*_secret_values(os.environ, CREDENTIAL_VARIABLES), *_held}
    return sorted(values, key=len, reverse=True)


def _secret_values(environ: Mapping[str, str], names: Iterable[str]) -> list[str]:
    values = {environ.get(name, "") for name in names}
    return sorted((v for v in values if len(v) >= MIN_SECRET_LENGTH), key=len, reverse=True)


def redact(text: str) -> str:
    """`text` with every credential value agentcli holds replaced by `[REDACTED]`."""
    for secret in secrets_held():
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text
