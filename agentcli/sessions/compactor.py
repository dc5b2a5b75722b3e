"""Compacting a live conversation: the steps of `sessions.compact` applied to an `Agent`.

The agent is read, and changed only through its methods: the summary's usage is counted with
`Agent.add_usage`, the compacted conversation taken up with `Agent.replace_conversation` (`adopt`).
"""

from __future__ import annotations

from collections.abc import Callable

from agentcli.catalog import ModelInfo
from agentcli.context.reminders import ReminderTracker
from agentcli.contracts import Model
from agentcli.loop import Agent
from agentcli.sessions.compact import (
    SUMMARY_INPUT_CHARS,
    SUMMARY_MAX_TOKENS,
    Compacted,
    CompactionFailed,
    ConversationSize,
    clear_old_tool_results,
    estimate_tokens,
    is_plain_prompt,
    json_chars,
    scaled,
    summarise,
    summarised_conversation,
    summary_request,
)


def fixed_chars(agent: Agent) -> int:
    """The size of what every request carries besides the messages: system prompt and tools."""
    return json_chars(agent.system) + json_chars(agent.tool_definitions())


def context_size(agent: Agent, size: ConversationSize) -> int:
    """Tokens the conversation occupies now: measured at the last response, plus an estimate since.
    `size` counts the agent's messages as they come (keep one: it counts on from where it was left)."""
    return estimate_tokens(agent.context_tokens, size.of(agent.messages), lambda: fixed_chars(agent))


def compact_agent(
    agent: Agent,
    model: Model,
    reminders: ReminderTracker,
    info: ModelInfo,
    *,
    instructions: str = "",
    summarise_above: int | None = None,
    on_notice: Callable[[str], None],
) -> Compacted:
    """Work out the compacted conversation (the agent is not changed; see `adopt`); `model` writes the summary.

    Old tool results are cleared; then the conversation is summarised unless it is already
    at most `summarise_above` tokens (None: always summarise, as /compact does). If the
    summary fails, the cleared conversation is kept and `on_notice` says why.
    """
    fixed = fixed_chars(agent)
    before = estimate_tokens(agent.context_tokens, ConversationSize().of(agent.messages), lambda: fixed)
    messages, cleared = clear_old_tool_results(agent.messages)
    result = Compacted(messages, before, scaled(before, agent.messages, messages, fixed), cleared)
    if summarise_above is not None and result.tokens_after <= summarise_above:
        return result
    try:
        _summarise(agent, model, reminders, info, result, instructions, mid_loop=summarise_above is not None)
    except CompactionFailed as error:
        kept = " with old tool results cleared" if cleared else ""
        on_notice(f"{error} The conversation goes on as it was{kept}.")
    if result.summarised:
        result.tokens_after = (fixed + json_chars(result.messages)) // 4
    return result


def _summarise(
    agent: Agent,
    model: Model,
    reminders: ReminderTracker,
    info: ModelInfo,
    result: Compacted,
    instructions: str,
    mid_loop: bool,
) -> None:
    messages = result.messages
    # In the loop, an unanswered prompt is kept word for word after the summary.
    keep = messages[-1] if mid_loop and messages and is_plain_prompt(messages[-1]) else None
    body = messages[:-1] if keep is not None else messages
    if not body:
        return
    request = summary_request(
        body,
        model=agent.model_name,
        instructions=instructions,
        max_tokens=min(SUMMARY_MAX_TOKENS, info.max_output_tokens),
        max_input_chars=min(SUMMARY_INPUT_CHARS, max(8_000, info.context_window * 2)),
    )
    reservation = agent.budget.reserve(info)  # the summary is paid from the run's budget too
    summary, usage = summarise(model, request)
    agent.add_usage(usage)
    reservation.charge(usage)
    reminders.restore({})  # the dropped messages carried them: they go into the new first message
    mid_task = mid_loop and keep is None and messages[-1]["role"] == "user"
    result.messages = summarised_conversation(summary, reminders.next_blocks(), keep=keep, mid_task=mid_task)
    result.summarised = True
    result.summary = summary
    result.usage = usage


def adopt(agent: Agent, result: Compacted) -> None:
    """Make `result` the agent's conversation (a new list: the old one is not rewritten)."""
    last = max((i for i, m in enumerate(result.messages) if m["role"] == "assistant"), default=None)
    if last is None:
        agent.replace_conversation(result.messages, 0)  # nothing measured yet: sizes are estimated from the text
    else:
        tail = json_chars(result.messages[last + 1 :]) // 4
        agent.replace_conversation(result.messages, max(0, result.tokens_after - tail))
