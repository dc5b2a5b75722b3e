"""Requests the web tools make to a model on their own, outside the conversation: WebFetch asking
a small, fast model about a page, WebSearch asking the provider to search.

`SideModel` is a provider's `Model` (made when first asked: nothing is imported at start-up)
and the model name to ask. What a request spent comes back as a `Spent`, which the tool puts
on its result (`ToolResult.spent`): the loop counts it and charges it to the run's budget, the
transcript records it, and it is priced at that model's rates. Nothing streams to the terminal;
the user's interrupt stops it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentcli.contracts import JSON, Cancellation, Model, ModelRequest, ModelResponse, Prices, Spent, Unwatched


@dataclass
class SideModel:
    """A model to ask, by name, through the provider client `connect` gives (made on first use)."""

    name: str
    connect: Callable[[], Model]
    prices: Prices | None = None
    """Its rates, for the run's budget (None: its dollars are not counted)."""

    def ask(
        self,
        system: str,
        messages: list[JSON],
        *,
        tools: list[JSON] | None = None,
        max_tokens: int = 4096,
        cancel: Cancellation | None = None,
    ) -> tuple[ModelResponse, Spent]:
        """One request; raises what the provider raises (`ModelAPIError`, `TransientModelError`,
        `Cancelled`)."""
        request = ModelRequest(
            model=self.name,
            system=[{"type": "text", "text": system}],
            tools=tools or [],
            messages=messages,
            max_tokens=max_tokens,
        )
        response = self.connect().stream(request, Unwatched(cancel))
        return response, Spent(self.name, response.usage, self.prices)
