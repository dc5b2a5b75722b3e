"""Model aliases: `sonnet`, `opus`, `haiku`, `fable`, `best` name the current model of that family
for the provider in use, as they do in Claude Code.

They are resolved wherever a model is named: `--model`, `AGENTCLI_MODEL`, the `model` setting,
`/model`, an agent definition's `model:`, a skill's or command's `model:`. First match wins:

1. the `modelAliases` setting: `{"<provider>": {"<alias>": "<model>"}}` (a provider is
   `anthropic`, `openai`, `gemini`, `ollama`, or `bedrock`/`vertex` for Anthropic's models
   there); any name may be an alias there (`"fast": "gpt-5-nano"`);
2. for Anthropic's models, Claude Code's variables `ANTHROPIC_DEFAULT_OPUS_MODEL`,
   `ANTHROPIC_DEFAULT_SONNET_MODEL`, `ANTHROPIC_DEFAULT_HAIKU_MODEL`;
3. the table below (`BUILT_IN`).

`opus[1m]`, `sonnet[1m]` are `opus`, `sonnet` (the models in the table have 1M-token windows
where the family does). `default` is the provider's default model. `inherit` is not resolved
here: where it means something (a sub-agent, a skill) the caller keeps the model it has.
An alias with no model for the provider (`sonnet` with ollama, or on Bedrock and Vertex, whose
model names are the platform's own) resolves to None: the caller says so and how to map it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from agentcli.catalog import DEFAULT_MODEL
from agentcli.errors import UsageError
from agentcli.setting_keys import setting

ALIASES_SETTING = setting("modelAliases")
FAMILIES = ("opus", "sonnet", "haiku", "fable", "best")
"""Claude Code's aliases of a model family (`best`: the most capable model there is)."""
DEFAULT = "default"
INHERIT = "inherit"
WINDOW_SUFFIX = "[1m]"

BUILT_IN: dict[str, dict[str, str]] = {
    "anthropic": {
        "opus": "claude-opus-5-5",
        "sonnet": DEFAULT_MODEL,
        "haiku": "claude-haiku-5-5",
        "fable": "claude-fable-5-1",
        "best": "claude-fable-5-1",
    },
    "openai": {"opus": "gpt-5.5", "sonnet": "gpt-5", "haiku": "gpt-5-mini", "fable": "gpt-5.5", "best": "gpt-5.5"},
    "gemini": {
        "opus": "gemini-2.5-pro",
        "sonnet": "gemini-2.5-pro",
        "haiku": "gemini-2.5-flash",
        "fable": "gemini-2.5-pro",
        "best": "gemini-2.5-pro",
    },
}
"""The current model of each family, per provider: the most capable, the everyday, the fast one."""
ANTHROPIC_VARIABLES = {
    "opus": "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "sonnet": "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "haiku": "ANTHROPIC_DEFAULT_HAIKU_MODEL",
}


def alias_table_key(provider: str, environ: Mapping[str, str] | None = None) -> str:
    """The `modelAliases` key for `provider`: `bedrock` or `vertex` for Anthropic's models there."""
    if provider != "anthropic":
        return provider
    from agentcli.credentials import cloud_platform

    return cloud_platform(environ) or provider


def resolve_alias(
    name: str,
    provider: str,
    table: object = None,
    *,
    default_model: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """The model `name` stands for with `provider` (`name` itself when it is no alias); None for
    an alias the provider has no model for. `table` is the `modelAliases` setting (checked)."""
    environ = os.environ if environ is None else environ
    base = name.removesuffix(WINDOW_SUFFIX)
    key = alias_table_key(provider, environ)
    mapped = _user_alias(table, base, key)
    if mapped is not None:
        return mapped
    if base == DEFAULT:
        return default_model
    if provider == "anthropic" and (variable := ANTHROPIC_VARIABLES.get(base)) and environ.get(variable):
        return environ[variable]
    if base in FAMILIES:
        return BUILT_IN.get(key, {}).get(base)
    return name


def unmapped(name: str, provider: str, environ: Mapping[str, str] | None = None) -> str:
    """What to say about the alias `name` that has no model for `provider`, and how to give it one."""
    key = alias_table_key(provider, environ)
    return (
        f"The model alias {name!r} names no model for {key}: name the model itself, or map the alias in "
        f'settings: "{ALIASES_SETTING}": {{"{key}": {{"{name.removesuffix(WINDOW_SUFFIX)}": "MODEL"}}}}.'
    )


def check_aliases_setting(value: object, source: Path | None) -> None:
    """UsageError, naming the file, unless `value` is an object of providers, each an object of
    alias → model name."""
    if value is None:
        return
    where = f" in {source}" if source else ""
    example = '{"ollama": {"sonnet": "qwen3-coder"}}'
    if not isinstance(value, dict) or not all(
        isinstance(table, dict) and all(isinstance(k, str) and isinstance(v, str) and v for k, v in table.items())
        for table in value.values()
    ):
        raise UsageError(
            f'The "{ALIASES_SETTING}" setting{where} must be an object of providers, each an object of '
            f"alias → model name, e.g. {example}."
        )


def _user_alias(table: object, alias: str, key: str | None = None) -> str | None:
    if not isinstance(table, dict):
        return None
    tables = [table.get(key)] if key is not None else list(table.values())
    for entry in tables:
        if isinstance(entry, dict) and isinstance(model := entry.get(alias), str) and model:
            return model
    return None
