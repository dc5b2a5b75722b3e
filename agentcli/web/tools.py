"""A session's web tools, WebFetch and WebSearch, built from its settings and provider.

WebFetch is always offered. Its prompt is applied by the `smallFastModel` setting's model when
one is set (`claude-haiku-5-5`, or `openai:gpt-5-nano` for another provider's: that provider's
client is made on first use and closed with the session). WebSearch is offered when
`agentcli.web.search.choose_backend` finds a way to search; otherwise `why_no_search` says how
to enable it (`/help` shows it). The 15-minute page cache lasts as long as the session.
"""

from __future__ import annotations

from collections.abc import Callable

from agentcli.agents.sources import ToolList
from agentcli.contracts import Model, Tool
from agentcli.errors import UsageError
from agentcli.setting_keys import setting
from agentcli.tools.web_fetch import Kept, WebFetchTool
from agentcli.tools.web_search import WebSearchTool
from agentcli.web.cache import UrlCache
from agentcli.web.fetch import Fetcher
from agentcli.web.search import SettingsView, choose_backend
from agentcli.web.side_model import SideModel

WEB = "web"
SMALL_MODEL_SETTING = setting("smallFastModel")


class WebTools:
    """WebFetch and (when there is a way to search) WebSearch, and what they hold open."""

    def __init__(
        self,
        settings: SettingsView,
        provider: str,
        main_model: Callable[[], str],
        connect: Callable[[], Model],
        resolve_other: Callable[[str], Model],
    ) -> None:
        """`connect`: the session's provider client; `resolve_other(provider)`: a client of another
        provider (for a `smallFastModel` that names one). UsageError for a malformed setting."""
        self._resolve_other = resolve_other
        self._others: dict[str, Model] = {}
        self.fetch = WebFetchTool(Fetcher(), UrlCache[Kept](), self._reader(settings, provider, connect))
        choice = choose_backend(settings, provider, main_model, connect)
        self.search = WebSearchTool(choice.backend) if choice.backend is not None else None
        self.why_no_search = choice.why_none

    def source(self) -> ToolList:
        tools: list[Tool] = [self.fetch] if self.search is None else [self.fetch, self.search]
        return ToolList(WEB, tuple(tools))

    def close(self) -> None:
        """Close the clients made for another provider's small model."""
        for model in self._others.values():
            model.close()
        self._others.clear()

    def _reader(self, settings: SettingsView, provider: str, connect: Callable[[], Model]) -> SideModel | None:
        value = settings.get(SMALL_MODEL_SETTING)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise UsageError(f'The "{SMALL_MODEL_SETTING}" setting must be a model name, such as "claude-haiku-5-5".')
        from agentcli.providers import choose

        chosen = choose(value.strip(), provider)
        if chosen.provider == provider:
            return SideModel(chosen.model, connect)
        return SideModel(chosen.model, lambda: self._other(chosen.provider))

    def _other(self, provider: str) -> Model:
        if provider not in self._others:
            self._others[provider] = self._resolve_other(provider)
        return self._others[provider]
