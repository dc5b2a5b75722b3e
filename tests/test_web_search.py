"""WebSearch end to end: Anthropic's server-side search through the loop, transcript, resume and
cost against the fake API; Gemini's grounding and OpenAI's search models at their fakes; SearXNG
and Brave at a local server; and the tool left out when nothing can search."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.contracts import JSON, Cancellation
from agentcli.conversation import WEB_SEARCH_TYPE
from agentcli.providers.gemini import GeminiModel
from agentcli.providers.openai import OpenAIModel
from agentcli.providers.scripted import ScriptedModel
from agentcli.providers.scripted import reply as scripted_reply
from agentcli.providers.scripted import text as scripted_text
from agentcli.stats.command import stats_text
from agentcli.web.search import (
    BraveSearch,
    ProviderSearch,
    SearxngSearch,
    choose_backend,
    how_to_enable,
    http_get_json,
)
from tests import fake_gemini, fake_openai
from tests.conftest import RunAgent
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use, web_search
from tests.web_pages import PageServer

SEARCH_ALLOWED = ["WebSearch"]
"""The rule that lets WebSearch send queries in `run` (where nobody can be asked)."""
RESULTS = [("Release notes 2.1", "https://example.com/releases/2.1"), ("Changelog", "https://docs.example.org/log")]


def transcripts(home: Path) -> list[Path]:
    return sorted((home / ".agentcli" / "projects").rglob("*.jsonl"))


def records(path: Path) -> list[JSON]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def tool_result_text(body: JSON) -> str:
    block = body["messages"][-1]["content"][0]
    assert block["type"] == "tool_result"
    return str(block["content"])


def test_a_search_on_anthropic_runs_at_the_api_and_its_results_reach_the_model(
    run_wire: RunAgent, fake_api: FakeAnthropic
) -> None:
    fake_api.script(
        reply(tool_use("WebSearch", {"query": "agentcli 2.1 release"}, id="toolu_search1")),
        reply(web_search("agentcli 2.1 release", RESULTS), text("Version 2.1 added web tools.")),
        reply(text("2.1 added web tools ([notes](https://example.com/releases/2.1)).")),
    )

    done = run_wire("what is new in agentcli 2.1?", output_format="json", allowed_tools=SEARCH_ALLOWED)

    assert done.returncode == 0, done.stderr
    main, search, final = (request.body for request in fake_api.requests)
    assert "WebSearch" in [tool["name"] for tool in main["tools"]]
    assert search["tools"] == [{"type": WEB_SEARCH_TYPE, "name": "web_search", "max_uses": 5}]
    assert search["messages"][0]["content"][0]["text"] == "Search the web for: agentcli 2.1 release"
    told = tool_result_text(final)
    assert "1. Release notes 2.1 — https://example.com/releases/2.1" in told
    assert "2. Changelog — https://docs.example.org/log" in told
    assert "Version 2.1 added web tools." in told
    assert "untrusted data from the web" in told
    result = json.loads(done.stdout)
    assert result["usage"]["web_search_requests"] == 1
    searched = fake_api.requests[1].usage
    assert searched is not None
    spent_on_search = (searched["input_tokens"] * 2 + searched["output_tokens"] * 10) / 1e6 + 0.01
    assert result["total_cost_usd"] >= round(spent_on_search, 6)


def test_the_transcript_records_what_the_search_spent_and_stats_price_the_search(
    run_wire: RunAgent, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(
        reply(tool_use("WebSearch", {"query": "x release"}, id="toolu_search1")),
        reply(
            web_search("x release", RESULTS[:1]), text("Found it."), usage={"input_tokens": 1000, "output_tokens": 0}
        ),
        reply(text("Done.")),
    )

    run_wire("search", allowed_tools=SEARCH_ALLOWED)

    (path,) = transcripts(home)
    results = next(
        r for r in records(path) if r.get("type") == "message" and r["message"]["role"] == "user" and "spent" in r
    )
    spent = results["spent"]["claude-sonnet-5-5"]
    assert spent["web_search_requests"] == 1 and spent["input_tokens"] == 1000
    assert results["usage"]["web_search_requests"] == 1
    figures = json.loads(stats_text(project, all_projects=False, since=None, as_json=True, width=100))
    assert figures["tokens"]["web_searches"] == 1
    assert figures["cost_usd"] >= 0.01 + 1000 * 2 / 1e6


def test_a_resumed_conversation_sends_the_search_result_back_as_it_was(
    run_wire: RunAgent, fake_api: FakeAnthropic
) -> None:
    fake_api.script(
        reply(tool_use("WebSearch", {"query": "x release"}, id="toolu_search1")),
        reply(web_search("x release", RESULTS), text("Found it.")),
        reply(text("Done.")),
        reply(text("Still here.")),
    )
    run_wire("search", allowed_tools=SEARCH_ALLOWED)
    answered = tool_result_text(fake_api.requests[2].body)

    done = run_wire("and then?", continue_session=True, allowed_tools=SEARCH_ALLOWED)

    assert done.returncode == 0, done.stderr
    resumed = fake_api.requests[3].body["messages"]
    assert [m["role"] for m in resumed] == ["user", "assistant", "user", "assistant", "user"]
    assert resumed[2]["content"][0]["content"] == answered


def test_a_paused_search_goes_back_verbatim_for_the_api_to_go_on(run_wire: RunAgent, fake_api: FakeAnthropic) -> None:
    fake_api.script(
        reply(tool_use("WebSearch", {"query": "deep question"}, id="toolu_search1")),
        reply(web_search("deep question", RESULTS[:1]), stop_reason="pause_turn"),
        reply(web_search("deeper question", RESULTS[1:]), text("Both sources agree.")),
        reply(text("Done.")),
    )

    run_wire("search", allowed_tools=SEARCH_ALLOWED)

    first, second = fake_api.requests[1], fake_api.requests[2]
    paused = second.body["messages"][1]
    assert paused["role"] == "assistant"
    assert [block["type"] for block in paused["content"]] == ["server_tool_use", "web_search_tool_result"]
    assert paused["content"][1]["content"][0]["encrypted_content"] == "enc-0"
    assert second.body["messages"][0] == first.body["messages"][0]
    told = tool_result_text(fake_api.requests[3].body)
    assert RESULTS[0][1] in told and RESULTS[1][1] in told and "Both sources agree." in told


def test_domain_filters_go_to_the_search_and_both_at_once_are_refused(
    run_wire: RunAgent, fake_api: FakeAnthropic
) -> None:
    fake_api.script(
        reply(
            tool_use("WebSearch", {"query": "pep 8", "allowed_domains": ["python.org"]}, id="toolu_a"),
            tool_use(
                "WebSearch",
                {"query": "pep 8", "allowed_domains": ["a.org"], "blocked_domains": ["b.org"]},
                id="toolu_b",
            ),
        ),
        reply(web_search("pep 8", [("PEP 8", "https://peps.python.org/pep-0008/")]), text("PEP 8 is the style guide.")),
        reply(text("Done.")),
    )

    run_wire("search", allowed_tools=SEARCH_ALLOWED)

    assert fake_api.requests[1].body["tools"][0]["allowed_domains"] == ["python.org"]
    answers = fake_api.requests[2].body["messages"][-1]["content"]
    assert "https://peps.python.org/pep-0008/" in answers[0]["content"]
    assert answers[1]["is_error"] and "not both" in answers[1]["content"]


def test_a_failed_search_is_reported_with_its_error_code(run_wire: RunAgent, fake_api: FakeAnthropic) -> None:
    fake_api.script(
        reply(tool_use("WebSearch", {"query": "anything"}, id="toolu_search1")),
        reply(web_search("anything", error_code="max_uses_exceeded"), text("I could not search.")),
        reply(text("Done.")),
    )

    run_wire("search", allowed_tools=SEARCH_ALLOWED)

    told = tool_result_text(fake_api.requests[2].body)
    assert "(no results)" in told and "Some searches failed: max_uses_exceeded." in told


def test_gemini_grounds_the_search_with_google_search() -> None:
    with fake_gemini.FakeGemini(api_key="k") as api:
        api.script(
            fake_gemini.reply(
                fake_gemini.text("Python 3.14 is out."),
                grounding=("python latest version", [("python.org", "https://grounding.example/redirect/1")]),
            )
        )
        model = GeminiModel(api_key="k", base_url=api.url)
        search = ProviderSearch(lambda: "gemini-2.5-flash", lambda: model, "gemini")
        found = search.search("python latest version", [], [], Cancellation())
        model.close()

    assert {"google_search": {}} in api.requests[0].body["tools"]
    assert found.hits == [("python.org", "https://grounding.example/redirect/1")]
    assert found.text == "Python 3.14 is out."
    (spent,) = found.spent
    assert spent.model == "gemini-2.5-flash" and spent.usage.web_search_requests == 1


def test_openai_searches_with_its_search_model() -> None:
    with fake_openai.FakeOpenAI(api_key="k") as api:
        api.script(fake_openai.reply("Rust 1.90 shipped.", citations=[("Rust blog", "https://blog.rust-lang.org/x")]))
        model = OpenAIModel(api_key="k", base_url=api.url)
        search = ProviderSearch(lambda: "gpt-5-search-api", lambda: model, "openai")
        found = search.search("latest rust", [], [], None)
        model.close()

    body = api.requests[0].body
    assert body["model"] == "gpt-5-search-api" and body["web_search_options"] == {} and "tools" not in body
    assert found.hits == [("Rust blog", "https://blog.rust-lang.org/x")]
    assert found.spent[0].usage.web_search_requests == 1


@pytest.fixture
def engine() -> Iterator[PageServer]:
    with PageServer() as server:
        yield server


def test_searxng_results_are_filtered_by_domain(engine: PageServer) -> None:
    answer = {
        "results": [
            {"title": "Keep", "url": "https://docs.python.org/3/", "content": "The docs."},
            {"title": "Drop", "url": "https://spam.example/", "content": "Spam."},
        ]
    }
    engine.page("/search?q=python+docs&format=json", json.dumps(answer), "application/json")

    found = SearxngSearch(engine.url(""), http_get_json).search("python docs", [], ["spam.example"], None)

    assert found.hits == [("Keep", "https://docs.python.org/3/")]
    assert found.text == "- Keep: The docs."


def test_brave_search_is_asked_with_the_key_and_domain_operators(engine: PageServer) -> None:
    answer = {
        "web": {"results": [{"title": "PEP 8", "url": "https://peps.python.org/pep-0008/", "description": "Style."}]}
    }
    engine.page("/res/v1/web/search?q=style+site%3Apython.org&count=10", json.dumps(answer), "application/json")

    found = BraveSearch("brave-key", http_get_json, engine.url("")).search("style", ["python.org"], [], None)

    assert found.hits == [("PEP 8", "https://peps.python.org/pep-0008/")]
    assert engine.requests[0].headers["x-subscription-token"] == "brave-key"


def no_model() -> Any:
    raise AssertionError("no model is asked to choose a backend")


@pytest.mark.parametrize(
    ("settings", "provider", "environ", "label"),
    [
        ({}, "anthropic", {}, "Anthropic's web search (claude-sonnet-5-5)"),
        ({}, "gemini", {}, "Google's web search (claude-sonnet-5-5)"),
        ({}, "openai", {}, "OpenAI's web search (gpt-5-search-api)"),
        ({}, "openai", {"OPENAI_BASE_URL": "http://localhost:8000/v1"}, None),
        ({"searxngUrl": "http://search.lan"}, "ollama", {}, "SearXNG at http://search.lan"),
        ({}, "ollama", {"BRAVE_API_KEY": "k"}, "Brave Search"),
        ({"webSearchBackend": "searxng", "searxngUrl": "http://s"}, "anthropic", {}, "SearXNG at http://s"),
        ({"webSearchBackend": "off"}, "anthropic", {}, None),
        ({}, "ollama", {}, None),
    ],
)
def test_the_backend_follows_the_settings_and_the_provider(
    settings: dict[str, object], provider: str, environ: dict[str, str], label: str | None
) -> None:
    choice = choose_backend(settings, provider, lambda: "claude-sonnet-5-5", no_model, environ=environ)

    assert (choice.backend.label if choice.backend else None) == label
    if label is None:
        assert "WebSearch is" in choice.why_none


def test_with_no_way_to_search_the_tool_is_not_offered(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    (project / ".agentcli").mkdir(exist_ok=True)
    (project / ".agentcli" / "settings.json").write_text(json.dumps({"webSearchBackend": "off"}))
    model.script(scripted_reply(scripted_text("hi")))

    run_agent("hi")

    offered = [tool["name"] for tool in model.requests[0].tools]
    assert "WebFetch" in offered and "WebSearch" not in offered


def test_how_to_enable_names_the_settings() -> None:
    said = how_to_enable("ollama")

    assert "searxngUrl" in said and "BRAVE_API_KEY" in said and "ollama" in said


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ({"webSearchMaxUses": 0}, "webSearchMaxUses must be a whole number of searches from 1 to 100, not 0"),
        ({"webSearchMaxUses": 1e308}, "webSearchMaxUses must be a whole number of searches"),
        ({"webSearchBackend": "bing"}, "webSearchBackend must be one of auto, provider, searxng, brave, off"),
        ({"searxngUrl": "search.lan"}, "searxngUrl must be the http(s) URL of a SearXNG instance"),
    ],
)
def test_a_web_search_setting_out_of_its_values_stops_before_anything_is_sent(
    run_agent: RunAgent, model: ScriptedModel, home: Path, setting: dict[str, object], said: str
) -> None:
    user_settings = home / ".agentcli" / "settings.json"
    user_settings.parent.mkdir(exist_ok=True)
    user_settings.write_text(json.dumps(setting))

    done = run_agent("hi")

    assert done.returncode == 2
    assert said in done.stderr
    assert model.requests == []
