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

`opusplan` names two models (`resolve_choice`): `opus` while the session is in plan mode,
`sonnet` otherwise, each resolved as above (so `ANTHROPIC_DEFAULT_OPUS_MODEL` picks the plan
mode's). Where one model is named for good (an agent definition, a skill), it is `sonnet`'s.
An alias with no model for the provider (`sonnet` with ollama, or on Bedrock and Vertex, whose
model names are the platform's own) resolves to None: the caller says so and how to map it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
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
PLAN_MODE = "plan"
MODE_ALIASES = {"opusplan": ("opus", "sonnet")}
"""Aliases of two models: the first for requests made in plan mode, the second for the others."""
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
    if name in MODE_ALIASES:
        name = MODE_ALIASES[name][1]
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


@dataclass(frozen=True)
class ModelChoice:
    """The model(s) the user chose: `name` as they wrote it, `model` for every request, or, for
    `opusplan`, `plan_model` for requests made in plan mode."""

    name: str
    model: str
    plan_model: str | None = None

    def for_mode(self, mode: str) -> str:
        """The model a request made in permission mode `mode` goes to."""
        return self.plan_model if self.plan_model is not None and mode == PLAN_MODE else self.model

    def describe(self) -> str:
        """`claude-sonnet-5-5`, or `opusplan: claude-opus-5-5 in plan mode, claude-sonnet-5-5 otherwise`."""
        if self.plan_model is None:
            return self.model
        return f"{self.name}: {self.plan_model} in plan mode, {self.model} otherwise"

    @property
    def recorded(self) -> str:
        """What a transcript records, for `--continue` to choose the same again: the alias of a
        choice that depends on the mode, else the model."""
        return self.name if self.plan_model is not None else self.model


def resolve_choice(
    name: str,
    provider: str,
    table: object = None,
    *,
    default_model: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ModelChoice | str:
    """The model(s) `name` stands for with `provider`; for an alias with no model there, that
    alias (`opus` for `opusplan` when only `opus` has none), for the caller to say so (`unmapped`)."""

    def one(alias: str) -> str | None:
        return resolve_alias(alias, provider, table, default_model=default_model, environ=environ)

    if name not in MODE_ALIASES:
        model = one(name)
        return name if model is None else ModelChoice(name, model)
    in_plan, otherwise = MODE_ALIASES[name]
    plan_model, model = one(in_plan), one(otherwise)
    if plan_model is None:
        return in_plan
    if model is None:
        return otherwise
    return ModelChoice(name, model, plan_model)


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
