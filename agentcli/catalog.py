"""Known models: context window, output limit and price. Settings may add or override entries."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from agentcli.contracts import Usage

DEFAULT_MODEL = "claude-sonnet-5-5"


@dataclass(frozen=True)
class ModelInfo:
    context_window: int
    max_output_tokens: int
    input_usd_per_mtok: float
    output_usd_per_mtok: float

    def cost_usd(self, usage: Usage) -> float:
        """Price of `usage`: cache writes at 1.25x input, cache reads at 0.1x (5-minute cache)."""
        per_input = self.input_usd_per_mtok / 1_000_000
        return (
            usage.input_tokens * per_input
            + usage.cache_creation_input_tokens * per_input * 1.25
            + usage.cache_read_input_tokens * per_input * 0.1
            + usage.output_tokens * self.output_usd_per_mtok / 1_000_000
        )


KNOWN_MODELS: dict[str, ModelInfo] = {
    "claude-fable-5-1": ModelInfo(1_000_000, 128_000, 10.0, 50.0),
    "claude-opus-5-5": ModelInfo(1_000_000, 128_000, 4.0, 20.0),
    "claude-opus-5": ModelInfo(1_000_000, 128_000, 5.0, 25.0),
    "claude-sonnet-5-5": ModelInfo(1_000_000, 128_000, 2.0, 10.0),
    "claude-sonnet-5": ModelInfo(1_000_000, 128_000, 2.0, 10.0),
    "claude-haiku-5-5": ModelInfo(1_000_000, 128_000, 0.10, 0.50),
    "claude-haiku-4-5": ModelInfo(200_000, 64_000, 1.0, 5.0),
}

UNKNOWN_MODEL = ModelInfo(200_000, 32_000, 0.0, 0.0)
"""For models we know nothing about (e.g. a local server): conservative limits, no price."""


def model_info(name: str, overrides: dict[str, Any] | None = None) -> ModelInfo:
    """Look `name` up, applying a settings `models` entry such as {"context_window": 32768}."""
    info = KNOWN_MODELS.get(name, UNKNOWN_MODEL)
    fields = (overrides or {}).get(name)
    if not fields:
        return info
    known = {k: v for k, v in fields.items() if k in ModelInfo.__dataclass_fields__}
    return replace(info, **known)
