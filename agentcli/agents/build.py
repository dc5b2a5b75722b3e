"""One way to build an agent: `build_agent`.

The session's agent, sub-agents, tests and benchmarks all come from here, so an agent is
always wired the same way: its tools collected from tool sources (`agentcli.agents.sources`),
run by its own `ToolExecutor` behind the gate given, its events stamped with its id.

    agent = build_agent(
        sources=[builtin_source()],
        system=system_blocks,
        model=model,
        gate=gate,
        config=LoopConfig(model="claude-sonnet-4-5"),
        ctx=ToolContext(LocalWorkspace(project)),
        on_event=front_end,
    )
    try:
        agent.run([text_block("hi")])
    finally:
        agent.close()  # its tool threads; the model is closed by whoever made it
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from agentcli.agents.sources import ToolSource, collect_tools
from agentcli.budget import Budget
from agentcli.contracts import JSON, Model, PermissionGate, ToolContext
from agentcli.events import MAIN_AGENT, EventSink
from agentcli.executor import ToolExecutor
from agentcli.hooks import NO_HOOKS, Hooks
from agentcli.loop import Agent, LoopConfig


def build_agent(
    *,
    sources: Sequence[ToolSource],
    system: list[JSON],
    model: Model,
    gate: PermissionGate,
    config: LoopConfig,
    ctx: ToolContext,
    on_event: EventSink,
    agent_id: str = MAIN_AGENT,
    only: Collection[str] | None = None,
    hooks: Hooks = NO_HOOKS,
    budget: Budget | None = None,
) -> Agent:
    """An agent offered the tools of `sources` (with `only`, just those named; see
    `collect_tools`), every call judged by `gate`, every event stamped `agent_id` and handed to
    `on_event` after the agent's subscribers. `ctx` is its tools' state (working directory,
    files read, the cancel event); `hooks` run around its tool calls and when it stops. Its
    requests draw on `budget`, the run's, shared with the agents beside it (None: a budget of its
    own). The caller closes the agent (`Agent.close`) when done."""
    executor = ToolExecutor(collect_tools(sources, only), gate, hooks)
    return Agent(
        model=model,
        executor=executor,
        config=config,
        system=system,
        on_event=on_event,
        ctx=ctx,
        agent_id=agent_id,
        budget=budget,
    )
