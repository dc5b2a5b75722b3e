"""Known models: what each can take and give (context window, output limit, native tool calling)
and what it costs, per million tokens (input, output, cache writes, cache reads).

Settings may add or override entries (`"models": {"NAME": {field: value, ...}}`, checked by
`check_models_setting`); a model in neither gets `UNKNOWN_MODEL`'s conservative limits and no
price, and `unknown_model_notice` says which setting describes it. `cost_usd(usage, info)` is
the one place a usage becomes dollars.

Prices are the providers' published list prices for standard (not batch or priority) use,
checked in December 2026: Anthropic's cache writes are the 5-minute ones (1.25x input); OpenAI
and Gemini charge nothing extra to write their automatic caches; a tier for long prompts (Gemini
2.5 Pro over 200k tokens, GPT-5.5 over 272k) is not modelled: the lower price applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from agentcli.bounds import PRICES, TOKENS, shown
from agentcli.contracts import Usage
from agentcli.errors import UsageError
from agentcli.setting_keys import setting

DEFAULT_MODEL = "claude-sonnet-5-5"
MODELS_SETTING = setting("models")


@dataclass(frozen=True)
class ModelInfo:
    context_window: int
    max_output_tokens: int
    input_usd_per_mtok: float
    output_usd_per_mtok: float
    cache_write_usd_per_mtok: float | None = None
    """None: 1.25x the input price (Anthropic's 5-minute cache writes)."""
    cache_read_usd_per_mtok: float | None = None
    """None: 0.1x the input price."""
    native_tools: bool = True
    """False: the model cannot call tools through the API's own field; `--tool-protocol auto`
    describes the tools in the system prompt instead (`agentcli.providers.text_tools`)."""

    def cost_usd(self, usage: Usage) -> float:
        return cost_usd(usage, self)


def cost_usd(usage: Usage, info: ModelInfo) -> float:
    """The price in dollars of `usage` at `info`'s rates: uncached input, cache writes, cache
    reads and output, each at its own price."""
    write = info.input_usd_per_mtok * 1.25 if info.cache_write_usd_per_mtok is None else info.cache_write_usd_per_mtok
    read = info.input_usd_per_mtok * 0.1 if info.cache_read_usd_per_mtok is None else info.cache_read_usd_per_mtok
    micro_dollars = (
        usage.input_tokens * info.input_usd_per_mtok
        + usage.cache_creation_input_tokens * write
        + usage.cache_read_input_tokens * read
        + usage.output_tokens * info.output_usd_per_mtok
    )
    return micro_dollars / 1_000_000


def _openai(context: int, output: int, price_in: float, price_out: float, cached: float) -> ModelInfo:
    return ModelInfo(context, output, price_in, price_out, price_in, cached)


KNOWN_MODELS: dict[str, ModelInfo] = {
    # Anthropic
    "claude-fable-5-1": ModelInfo(1_000_000, 128_000, 10.0, 50.0),
    "claude-opus-5-5": ModelInfo(1_000_000, 128_000, 4.0, 20.0),
    "claude-opus-5": ModelInfo(1_000_000, 128_000, 5.0, 25.0),
    "claude-sonnet-5-5": ModelInfo(1_000_000, 128_000, 2.0, 10.0),
    "claude-sonnet-5": ModelInfo(1_000_000, 128_000, 2.0, 10.0),
    "claude-haiku-5-5": ModelInfo(1_000_000, 128_000, 0.10, 0.50),
    "claude-opus-4-5": ModelInfo(200_000, 64_000, 5.0, 25.0),
    "claude-opus-4-1": ModelInfo(200_000, 32_000, 15.0, 75.0),
    "claude-sonnet-4-5": ModelInfo(200_000, 64_000, 3.0, 15.0),
    "claude-haiku-4-5": ModelInfo(200_000, 64_000, 1.0, 5.0),
    # OpenAI
    "gpt-5.5": _openai(1_050_000, 128_000, 5.0, 30.0, 0.50),
    "gpt-5": _openai(400_000, 128_000, 1.25, 10.0, 0.125),
    "gpt-5-mini": _openai(400_000, 128_000, 0.25, 2.0, 0.025),
    "gpt-5-nano": _openai(400_000, 128_000, 0.05, 0.40, 0.005),
    "gpt-4.1": _openai(1_047_576, 32_768, 2.0, 8.0, 0.50),
    "gpt-4.1-mini": _openai(1_047_576, 32_768, 0.40, 1.60, 0.10),
    "gpt-4.1-nano": _openai(1_047_576, 32_768, 0.10, 0.40, 0.025),
    "gpt-4o": _openai(128_000, 16_384, 2.50, 10.0, 1.25),
    "gpt-4o-mini": _openai(128_000, 16_384, 0.15, 0.60, 0.075),
    "o3": _openai(200_000, 100_000, 2.0, 8.0, 0.50),
    "o4-mini": _openai(200_000, 100_000, 1.10, 4.40, 0.275),
    # Google
    "gemini-2.5-pro": _openai(1_048_576, 65_536, 1.25, 10.0, 0.125),
    "gemini-2.5-flash": _openai(1_048_576, 65_536, 0.30, 2.50, 0.03),
}

UNKNOWN_MODEL = ModelInfo(200_000, 32_000, 0.0, 0.0, 0.0, 0.0)
"""For models we know nothing about (e.g. a local server): conservative limits, no price."""

_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "context_window": (int,),
    "max_output_tokens": (int,),
    "input_usd_per_mtok": (int, float),
    "output_usd_per_mtok": (int, float),
    "cache_write_usd_per_mtok": (int, float),
    "cache_read_usd_per_mtok": (int, float),
    "native_tools": (bool,),
}
assert set(_FIELD_TYPES) == {f.name for f in fields(ModelInfo)}


def model_info(name: str, overrides: Mapping[str, Any] | None = None) -> ModelInfo:
    """Look `name` up, with its settings `models` entry (checked by `check_models_setting`)
    applied over the built-in one, e.g. {"context_window": 32768}."""
    info = KNOWN_MODELS.get(name, UNKNOWN_MODEL)
    entry = (overrides or {}).get(name)
    if not isinstance(entry, Mapping) or not entry:
        return info
    return replace(info, **{key: value for key, value in entry.items() if key in _FIELD_TYPES})


def is_known(name: str, overrides: Mapping[str, Any] | None = None) -> bool:
    return name in KNOWN_MODELS or name in (overrides or {})


def unknown_model_notice(name: str, overrides: Mapping[str, Any] | None = None) -> str | None:
    """One line for a model neither the table nor the settings describe; None for a known one."""
    if is_known(name, overrides):
        return None
    info = UNKNOWN_MODEL
    return (
        f"Model {name!r} is not in agentcli's model table: assuming a {info.context_window:,}-token context "
        f"window, {info.max_output_tokens:,} output tokens, native tool calls and no price. Describe it in "
        f'settings: "{MODELS_SETTING}": {{"{name}": {{"context_window": ..., "input_usd_per_mtok": ...}}}}.'
    )


def check_models_setting(value: object, source: Path | None) -> None:
    """Raise UsageError, naming the file and the entry, unless `value` is a valid `models` setting:
    an object of model names, each an object of `ModelInfo` fields of the right types."""
    where = f" in {source}" if source else ""
    known = ", ".join(_FIELD_TYPES)
    if value is None:
        return
    if not isinstance(value, dict):
        raise UsageError(
            f'The "{MODELS_SETTING}" setting{where} must be an object of model names, e.g. '
            f'{{"qwen3-coder": {{"context_window": 32768}}}}; it is {type(value).__name__}.'
        )
    for name, entry in value.items():
        if not isinstance(entry, dict):
            raise UsageError(
                f'"{MODELS_SETTING}": {{"{name}": ...}}{where} must be an object of fields ({known}); '
                f"it is {type(entry).__name__}."
            )
        for key, field_value in entry.items():
            if key not in _FIELD_TYPES:
                raise UsageError(
                    f'Unknown field "{key}" for model "{name}" in "{MODELS_SETTING}"{where}; the fields are: {known}.'
                )
            if wanted := _wrong_value(key, field_value):
                raise UsageError(
                    f'"{MODELS_SETTING}" → "{name}" → "{key}"{where} must be {wanted}, not {shown(field_value)}.'
                )


def _wrong_value(key: str, value: object) -> str | None:
    """What `value` should be for the field `key` (None when it is right)."""
    types = _FIELD_TYPES[key]
    if types == (bool,):
        return None if isinstance(value, bool) else "true or false"
    bounds = TOKENS if types == (int,) else PRICES
    return None if bounds.holds(value) else bounds.describe()
