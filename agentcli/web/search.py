"""Where WebSearch searches: the provider's own search, or a search engine the user configured.

- **The provider's** (`ProviderSearch`): one request to the model with the web search server
  tool offered (`conversation.web_search_tool`: its domain filters and at most `max_uses`
  searches). Anthropic runs it as its `web_search` server tool: the `server_tool_use` and
  `web_search_tool_result` blocks come back in the answer, and when the API pauses a long turn
  (`pause_turn`) the answer goes back verbatim, as the protocol requires, for it to go on.
  Gemini grounds the answer with Google Search and OpenAI's search models search on their own;
  their providers write the sources in the same blocks. The request is priced at that model's
  rates plus the provider's price per search (`catalog.ModelInfo.web_search_usd`).
- **SearXNG** (`SearxngSearch`): the JSON API of the instance the `searxngUrl` setting names.
- **Brave Search** (`BraveSearch`): its web search API, with the key in `BRAVE_API_KEY`.

`choose_backend` picks one from the settings and the provider (`webSearchBackend`: `auto`, the
default, prefers the provider's own search, then SearXNG, then Brave; `off` turns WebSearch off).
With none, WebSearch is not offered and `/help` says how to enable it (`how_to_enable`).
Domain filters the engine cannot apply itself are applied to the results.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from agentcli.bounds import Range, shown
from agentcli.contracts import JSON, Cancellation, Model, ModelResponse, Prices, Spent
from agentcli.conversation import (
    assistant_message,
    text_block,
    text_of,
    user_message,
    web_search_errors,
    web_search_hits,
    web_search_tool,
)
from agentcli.errors import AgentcliError, Cancelled, TransientModelError, UsageError
from agentcli.setting_keys import setting
from agentcli.web.side_model import SideModel

BACKEND_SETTING = setting("webSearchBackend")
SEARXNG_SETTING = setting("searxngUrl")
MAX_USES_SETTING = setting("webSearchMaxUses")
SEARCH_MODEL_SETTING = setting("webSearchModel")
BRAVE_KEY_VARIABLE = "BRAVE_API_KEY"
BRAVE_URL_VARIABLE = "BRAVE_SEARCH_BASE_URL"
BRAVE_DEFAULT_URL = "https://api.search.brave.com"
BACKENDS = ("auto", "provider", "searxng", "brave", "off")
DEFAULT_MAX_USES = 5
MAX_USES = Range("searches", 100, low=1, whole=True)
MAX_PAUSES = 3
"""How often a paused search turn is sent back to go on."""
MAX_HITS = 10
OPENAI_SEARCH_MODEL = "gpt-5-search-api"
SEARCH_SYSTEM = (
    "You search the web for a coding assistant. Search for the query you are given (rephrase it only "
    "to search better), then summarise what the results say about it in a few sentences, citing them."
)


@dataclass(frozen=True)
class SearchOutcome:
    hits: list[tuple[str, str]]
    """(title, url), best first."""
    text: str
    """What the search engine or the model said about the results (snippets, a summary)."""
    spent: tuple[Spent, ...] = ()
    errors: tuple[str, ...] = ()
    """Why searches failed (`max_uses_exceeded`…)."""


class SettingsView(Protocol):
    """What is read of the settings (`agentcli.settings.Settings`, or a plain dict in tests)."""

    def get(self, key: str, default: Any = None, /) -> Any: ...


class SearchError(Exception):
    """The search could not be run; the message says why and what to do."""


class SearchBackend(Protocol):
    @property
    def label(self) -> str:
        """Who searched, for the result: `Anthropic's web search`, `SearXNG at …`."""
        ...

    @property
    def host(self) -> str:
        """The host the query is sent to (the permission gate judges it)."""
        ...

    def search(
        self, query: str, allowed: Sequence[str], blocked: Sequence[str], cancel: Cancellation | None
    ) -> SearchOutcome:
        """Raises SearchError, or `Cancelled` when `cancel` is set."""
        ...


@dataclass
class ProviderSearch:
    """The provider's own search, asked of the model `model_name` says at the time, through
    `connect` (see the module's docstring)."""

    model_name: Callable[[], str]
    connect: Callable[[], Model]
    provider: str
    max_uses: int = DEFAULT_MAX_USES
    prices: Callable[[str], Prices] | None = None
    """A model's rates, for the run's budget."""

    @property
    def model(self) -> SideModel:
        name = self.model_name()
        return SideModel(name, self.connect, self.prices(name) if self.prices is not None else None)

    @property
    def label(self) -> str:
        return f"{PROVIDER_NAMES.get(self.provider, self.provider)}'s web search ({self.model_name()})"

    @property
    def host(self) -> str:
        variable, default = PROVIDER_URLS.get(self.provider, ("", ""))
        return _host_of(os.environ.get(variable) or default) if variable else self.provider

    def search(
        self, query: str, allowed: Sequence[str], blocked: Sequence[str], cancel: Cancellation | None
    ) -> SearchOutcome:
        tools = [web_search_tool(self.max_uses, allowed, blocked)]
        messages = [user_message([text_block(f"Search the web for: {query}")])]
        answers: list[JSON] = []
        spent: list[Spent] = []
        model = self.model
        for _ in range(MAX_PAUSES + 1):
            response, cost = self._ask(model, messages, tools, cancel)
            spent.append(cost)
            answers.extend(response.content)
            if response.stop_reason != "pause_turn":
                break
            messages = [*messages, assistant_message(response.content)]  # verbatim, server-tool blocks and all
        errors = tuple(web_search_errors(answers))
        return SearchOutcome(web_search_hits(answers), text_of(answers).strip(), tuple(spent), errors)

    @staticmethod
    def _ask(
        model: SideModel, messages: list[JSON], tools: list[JSON], cancel: Cancellation | None
    ) -> tuple[ModelResponse, Spent]:
        for attempt in range(2):
            try:
                return model.ask(SEARCH_SYSTEM, messages, tools=tools, cancel=cancel)
            except TransientModelError as error:
                if attempt or (cancel is not None and cancel.is_set()):
                    raise SearchError(f"The search failed: {error}. Try again in a moment.") from None
                time.sleep(1.0)
            except Cancelled:
                raise
            except AgentcliError as error:
                raise SearchError(f"The search failed: {error}") from None
        raise AssertionError("unreachable")


PROVIDER_NAMES = {"anthropic": "Anthropic", "gemini": "Google", "openai": "OpenAI"}
"""Providers whose API searches the web itself."""
PROVIDER_URLS = {
    "anthropic": ("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
    "gemini": ("GEMINI_BASE_URL", "https://generativelanguage.googleapis.com"),
    "openai": ("OPENAI_BASE_URL", "https://api.openai.com"),
}
"""Where each provider's requests go (its variable, else its default), for `ProviderSearch.host`."""


def _host_of(url: str) -> str:
    return (urlsplit(url).hostname or url).lower()


@dataclass(frozen=True)
class SearxngSearch:
    base_url: str
    get: JsonGet

    @property
    def label(self) -> str:
        return f"SearXNG at {self.base_url}"

    @property
    def host(self) -> str:
        return _host_of(self.base_url)

    def search(
        self, query: str, allowed: Sequence[str], blocked: Sequence[str], cancel: Cancellation | None
    ) -> SearchOutcome:
        scoped = f"{query} site:{allowed[0]}" if len(allowed) == 1 else query
        data = self.get(f"{self.base_url.rstrip('/')}/search", {"q": scoped, "format": "json"}, {}, cancel)
        results = [r for r in _list(data.get("results")) if isinstance(r, dict)]
        return _engine_outcome(
            [(str(r.get("title") or ""), str(r.get("url") or ""), str(r.get("content") or "")) for r in results],
            allowed,
            blocked,
        )


@dataclass(frozen=True)
class BraveSearch:
    key: str
    get: JsonGet
    base_url: str = BRAVE_DEFAULT_URL

    @property
    def label(self) -> str:
        return "Brave Search"

    @property
    def host(self) -> str:
        return _host_of(self.base_url)

    def search(
        self, query: str, allowed: Sequence[str], blocked: Sequence[str], cancel: Cancellation | None
    ) -> SearchOutcome:
        scoped = " ".join([query, *(f"site:{d}" for d in allowed[:1]), *(f"-site:{d}" for d in blocked)])
        data = self.get(
            f"{self.base_url.rstrip('/')}/res/v1/web/search",
            {"q": scoped, "count": str(MAX_HITS)},
            {"x-subscription-token": self.key},
            cancel,
        )
        web = data.get("web")
        results = [r for r in _list(web.get("results") if isinstance(web, dict) else None) if isinstance(r, dict)]
        return _engine_outcome(
            [(str(r.get("title") or ""), str(r.get("url") or ""), str(r.get("description") or "")) for r in results],
            allowed,
            blocked,
        )


class JsonGet(Protocol):
    def __call__(
        self, url: str, params: Mapping[str, str], headers: Mapping[str, str], cancel: Cancellation | None
    ) -> dict[str, object]:
        """GET `url` and the JSON object it answers; SearchError otherwise."""
        ...


def http_get_json(
    url: str, params: Mapping[str, str], headers: Mapping[str, str], cancel: Cancellation | None
) -> dict[str, object]:
    """A search engine's JSON answer, over httpx2 with the environment's proxies (the engine is one
    the user configured: a SearXNG on their own network is fine)."""
    import httpx2

    from agentcli.providers.http import aborted_on, problem

    host = urlsplit(url).hostname or url
    try:
        with httpx2.Client(timeout=httpx2.Timeout(30.0, connect=10.0), trust_env=True) as client:
            request = client.build_request("GET", url, params=params, headers={"accept": "application/json", **headers})
            response = client.send(request, stream=True)
            try:
                with aborted_on(cancel, response):
                    response.read()
            finally:
                response.close()
    except httpx2.TransportError as error:
        if cancel is not None and cancel.is_set():
            raise Cancelled("Interrupted by the user.") from None
        raise SearchError(f"Could not reach the search engine at {host}: {problem(error)}.") from None
    if response.status_code >= 400:
        raise SearchError(f"The search engine at {host} answered HTTP {response.status_code}: {response.text[:200]}")
    try:
        data = response.json()
    except ValueError:
        raise SearchError(
            f"The search engine at {host} did not answer with JSON (is its JSON format enabled?)."
        ) from None
    if not isinstance(data, dict):
        raise SearchError(f"The search engine at {host} answered with something other than a JSON object.")
    return data


def _engine_outcome(
    results: list[tuple[str, str, str]], allowed: Sequence[str], blocked: Sequence[str]
) -> SearchOutcome:
    """A search engine's results, filtered by domain, as hits and their snippets."""
    kept = [(t, u, c) for t, u, c in results if u and _domain_allowed(u, allowed, blocked)][:MAX_HITS]
    snippets = "\n".join(f"- {title or url}: {' '.join(snippet.split())}" for title, url, snippet in kept if snippet)
    return SearchOutcome([(title or url, url) for title, url, _ in kept], snippets)


def _domain_allowed(url: str, allowed: Sequence[str], blocked: Sequence[str]) -> bool:
    host = (urlsplit(url).hostname or "").lower()

    def within(domain: str) -> bool:
        domain = domain.lower().strip().removeprefix("*.").rstrip(".")
        return host == domain or host.endswith("." + domain)

    if allowed and not any(within(d) for d in allowed):
        return False
    return not any(within(d) for d in blocked)


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True)
class SearchChoice:
    backend: SearchBackend | None
    why_none: str = ""
    """When there is no backend: why, and how to enable one."""


def choose_backend(
    settings: SettingsView,
    provider: str,
    main_model: Callable[[], str],
    connect: Callable[[], Model],
    prices: Callable[[str], Prices] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    get: JsonGet = http_get_json,
) -> SearchChoice:
    """The backend the settings and the provider give (see the module's docstring); UsageError
    for a setting that is not one of its values."""
    environ = os.environ if environ is None else environ
    chosen = settings.get(BACKEND_SETTING) or "auto"
    if chosen not in BACKENDS:
        raise UsageError(f"Setting {BACKEND_SETTING} must be one of {', '.join(BACKENDS)}, not {shown(chosen)}.")
    searxng = settings.get(SEARXNG_SETTING)
    if searxng is not None and not (isinstance(searxng, str) and urlsplit(searxng).scheme in ("http", "https")):
        raise UsageError(
            f"Setting {SEARXNG_SETTING} must be the http(s) URL of a SearXNG instance, not {shown(searxng)}."
        )
    brave = environ.get(BRAVE_KEY_VARIABLE)
    uses = settings.get(MAX_USES_SETTING)
    max_uses = DEFAULT_MAX_USES if uses is None else int(MAX_USES.checked(uses, f"Setting {MAX_USES_SETTING}"))
    if chosen == "off":
        return SearchChoice(None, f'WebSearch is off ({BACKEND_SETTING} is "off" in settings).')
    if chosen in ("auto", "provider") and _searches_itself(provider, environ, forced=chosen == "provider"):
        named = settings.get(SEARCH_MODEL_SETTING)
        if isinstance(named, str) and named:
            return SearchChoice(ProviderSearch(lambda: named, connect, provider, max_uses, prices))
        if provider == "openai":
            return SearchChoice(ProviderSearch(lambda: OPENAI_SEARCH_MODEL, connect, provider, max_uses, prices))
        return SearchChoice(ProviderSearch(main_model, connect, provider, max_uses, prices))
    if chosen in ("auto", "searxng") and isinstance(searxng, str) and searxng:
        return SearchChoice(SearxngSearch(searxng, get))
    if chosen in ("auto", "brave") and brave:
        return SearchChoice(BraveSearch(brave, get, environ.get(BRAVE_URL_VARIABLE) or BRAVE_DEFAULT_URL))
    return SearchChoice(None, how_to_enable(provider, chosen))


def _searches_itself(provider: str, environ: Mapping[str, str], *, forced: bool) -> bool:
    """Does this provider's API run web searches? Anthropic's (not on Bedrock), Gemini's, and
    OpenAI's own API (not another server at OPENAI_BASE_URL, unless `provider` is asked for)."""
    if provider not in PROVIDER_NAMES:
        return False
    if forced:
        return True
    if provider == "anthropic":
        return not environ.get("AGENTCLI_USE_BEDROCK")
    if provider == "openai":
        base = environ.get("OPENAI_BASE_URL", "")
        return not base or urlsplit(base).hostname == "api.openai.com"
    return True


def how_to_enable(provider: str, chosen: object = "auto") -> str:
    """Why WebSearch is not offered, and how to offer it."""
    why = (
        f"{BACKEND_SETTING} is {chosen!r}, which is not configured"
        if chosen not in ("auto", None)
        else f"the {provider} provider has no web search of its own"
    )
    return (
        f'WebSearch is not available: {why}. To enable it, set "{SEARXNG_SETTING}" in your settings to a '
        f"SearXNG instance (with its JSON format on), or put a Brave Search API key in {BRAVE_KEY_VARIABLE}; "
        "the Anthropic, Gemini and OpenAI APIs search on their own."
    )
