"""The model that follows the permission mode (`opusplan`): before each request, the agent is
configured for the model its session's mode calls for.

It subscribes to the agent's events and acts on `TurnStarting`, which comes before each request
is built, so a mode changed at any moment (Shift-Tab, an approved ExitPlanMode, a hook's
`setMode`) holds from the very next request, within a turn too. A choice of one model
(anything but `opusplan`) never changes anything here.
"""

from __future__ import annotations

from collections.abc import Callable

from agentcli.events import Event, TurnStarting
from agentcli.loop import Agent, LoopConfig
from agentcli.model_aliases import ModelChoice


class ModelForMode:
    """Keeps `agent` on `choice`'s model for the mode `mode()` says, configured by `loop_config`."""

    def __init__(
        self,
        agent: Agent,
        choice: ModelChoice,
        mode: Callable[[], str],
        loop_config: Callable[[str], LoopConfig],
    ) -> None:
        self._agent = agent
        self._choice = choice
        self._mode = mode
        self._loop_config = loop_config

    def choose(self, choice: ModelChoice) -> None:
        """Go on with `choice` (`/model`) from the next request."""
        self._choice = choice
        self._follow()

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnStarting):
            self._follow()

    def _follow(self) -> None:
        wanted = self._choice.for_mode(self._mode())
        if wanted != self._agent.config.model:
            self._agent.configure(self._loop_config(wanted))
