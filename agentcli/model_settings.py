"""What the command line and the settings say about the model a session talks to: how it calls
tools (`--tool-protocol`, `toolProtocol`), the run's budget in tokens (`--max-budget-tokens`,
`tokenBudget`) and dollars (`--max-budget-usd`, `maxBudgetUsd`), and the `models` table
(`agentcli.catalog`). A bad value is a UsageError naming the flag or the setting and its file
and what it should be (`agentcli.bounds`), raised before anything is sent."""

from __future__ import annotations

from agentcli.bounds import DOLLARS, TOKENS
from agentcli.budget import DEFAULT_TOKEN_BUDGET
from agentcli.catalog import MODELS_SETTING, check_models_setting
from agentcli.errors import UsageError
from agentcli.providers.text_tools import TOOL_PROTOCOLS, ToolProtocol
from agentcli.setting_keys import setting
from agentcli.settings import Settings

TOOL_PROTOCOL_SETTING = setting("toolProtocol")
BUDGET_USD_SETTING = setting("maxBudgetUsd")
TOKEN_BUDGET_SETTING = setting("tokenBudget")


def tool_protocol(option: str | None, settings: Settings) -> ToolProtocol:
    """The flag's protocol, else the setting's, else `native`."""
    value = option if option is not None else settings.get(TOOL_PROTOCOL_SETTING, "native")
    for protocol in TOOL_PROTOCOLS:
        if value == protocol:
            return protocol
    where = (
        "--tool-protocol"
        if option is not None
        else f"Setting {TOOL_PROTOCOL_SETTING}{_in(settings, TOOL_PROTOCOL_SETTING)}"
    )
    raise UsageError(f"{where} must be one of {', '.join(TOOL_PROTOCOLS)}, not {value!r}.")


def budget_usd(option: float | None, settings: Settings) -> float | None:
    """The flag's budget in dollars, else the setting's; None: no budget."""
    if option is not None:
        return DOLLARS.checked(option, "--max-budget-usd")
    value = settings.get(BUDGET_USD_SETTING)
    if value is None:
        return None
    return float(DOLLARS.checked(value, f"Setting {BUDGET_USD_SETTING}{_in(settings, BUDGET_USD_SETTING)}"))


def token_budget(option: int | None, settings: Settings) -> int:
    """The flag's budget in tokens, else the setting's, else `DEFAULT_TOKEN_BUDGET`."""
    if option is not None:
        return int(TOKENS.checked(option, "--max-budget-tokens"))
    value = settings.get(TOKEN_BUDGET_SETTING)
    if value is None:
        return DEFAULT_TOKEN_BUDGET
    return int(TOKENS.checked(value, f"Setting {TOKEN_BUDGET_SETTING}{_in(settings, TOKEN_BUDGET_SETTING)}"))


def check_model_table(settings: Settings) -> None:
    check_models_setting(settings.get(MODELS_SETTING), settings.sources.get(MODELS_SETTING))


def _in(settings: Settings, key: str) -> str:
    source = settings.sources.get(key)
    return f" in {source}" if source else ""
