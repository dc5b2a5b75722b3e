"""A session's web tools, WebFetch and WebSearch, built from its settings and provider.

WebFetch is always offered. Its prompt is applied by the `smallFastModel` setting's model when
one is set (`claude-haiku-5-5`, or `openai:gpt-5-nano` for another provider's: that provider's
client is made on first use and closed with the conversation). WebSearch is offered when
`agentcli.web.search.choose_backend` finds a way to search; otherwise `why_no_search` says how
to enable it (`/help` shows it). The 15-minute page cache is the session's (it outlives `/clear`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from agentcli.agents.sources import ToolList
from agentcli.contracts import Model, Prices, Tool
from agentcli.errors import UsageError
from agentcli.setting_keys import setting
from agentcli.tools.web_fetch import Kept, WebFetchTool
from agentcli.tools.web_search import WebSearchTool
from agentcli.web.cache import UrlCache
from agentcli.web.search import SettingsView, choose_backend
from agentcli.web.side_model import SideModel

WEB = "web"
SMALL_MODEL_SETTING = setting("smallFastModel")


class WebTools:
    """WebFetch and (when there is a way to search) WebSearch, and the clients they made."""

    def __init__(
        self,
        settings: SettingsView,
        provider: str,
        main_model: Callable[[], str],
        clients: ProviderClients,
        prices: Callable[[str], Prices],
        pages: UrlCache[Kept],
    ) -> None:
        """`provider`: the session's; `main_model`: the model its requests go to now; `clients`:
        the session's client of a provider, or a new one (closed with these tools); `prices`: a
        model's rates (the budget charges the tools' own requests); `pages`: the session's page
        cache. UsageError for a malformed setting."""
        self._clients = clients
        self._prices = prices
        self._others: dict[str, Model] = {}
        self._lock = threading.Lock()
        self.fetch = WebFetchTool(pages, self._reader(settings, provider))
        choice = choose_backend(settings, provider, main_model, self._connect(provider), prices)
        self.search = WebSearchTool(choice.backend) if choice.backend is not None else None
        self.why_no_search = choice.why_none

    def source(self) -> ToolList:
        tools: list[Tool] = [self.fetch] if self.search is None else [self.fetch, self.search]
        return ToolList(WEB, tuple(tools))

    def close(self) -> None:
        """Close the clients made for a provider the session was not talking to."""
        with self._lock:
            others, self._others = list(self._others.values()), {}
        for model in others:
            model.close()

    def _reader(self, settings: SettingsView, provider: str) -> SideModel | None:
        value = settings.get(SMALL_MODEL_SETTING)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise UsageError(f'The "{SMALL_MODEL_SETTING}" setting must be a model name, such as "claude-haiku-5-5".')
        from agentcli.providers import choose

        chosen = choose(value.strip(), provider)
        return SideModel(chosen.model, self._connect(chosen.provider), self._prices(chosen.model))

    def _connect(self, provider: str) -> Callable[[], Model]:
        """A client of `provider` when asked: the session's own while it talks to that provider, else one made here."""

        def connect() -> Model:
            own = self._clients.own(provider)
            if own is not None:
                return own
            with self._lock:  # sub-agents call tools from their own threads
                if provider not in self._others:
                    self._others[provider] = self._clients.new(provider)
                return self._others[provider]

        return connect


class ProviderClients(Protocol):
    """Model clients by provider (`agentcli.session.composition.SessionModel`)."""

    def own(self, provider: str) -> Model | None:
        """The session's client (without the text tool protocol) when it talks to `provider` now."""
        ...

    def new(self, provider: str) -> Model:
        """A new client of `provider`; the caller closes it."""
        ...
