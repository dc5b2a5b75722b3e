"""What the command line and the settings say about the model a session talks to: how it calls
tools (`--tool-protocol`, `toolProtocol`), the run's budgets in dollars (`--max-budget-usd`,
`maxBudgetUsd`) and tokens (`--max-budget-tokens`, `tokenBudget`), and the `models` table
(`agentcli.catalog`). A bad value is a UsageError naming the setting, its file and what it should
be, raised before anything is sent."""

from __future__ import annotations

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
        return option
    value = settings.get(BUDGET_USD_SETTING)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise UsageError(
            f"Setting {BUDGET_USD_SETTING}{_in(settings, BUDGET_USD_SETTING)} must be a number of dollars "
            f"above 0 (e.g. 2.5), not {value!r}."
        )
    return float(value)


def check_model_table(settings: Settings) -> None:
    check_models_setting(settings.get(MODELS_SETTING), settings.sources.get(MODELS_SETTING))


def _in(settings: Settings, key: str) -> str:
    source = settings.sources.get(key)
    return f" in {source}" if source else ""
