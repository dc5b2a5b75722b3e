"""WebFetch through the gate: asked per host in every mode but bypassPermissions, `WebFetch(domain:…)`
rules allowing, asking or denying by host, "don't ask again" saving the host's rule, a run without a
rule denied with the rule to add, and only hosts a rule names let through to private addresses;
WebSearch asked about where its query goes, with the query, and allowed in a run by a `WebSearch` rule;
dontAsk mode denying both where no rule allows them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.contracts import JSON, Decision, ToolContext
from agentcli.permissions.gate import Gate
from agentcli.permissions.prompt import Answer
from agentcli.tools.web_fetch import WebFetchTool
from agentcli.tools.web_search import WebSearchTool
from agentcli.web.cache import UrlCache
from agentcli.web.search import SearxngSearch, http_get_json
from agentcli.workspace.local import LocalWorkspace
from tests.permissions.helpers import Recorder, rules

FETCH = WebFetchTool(UrlCache())


def call(url: str) -> JSON:
    return {"url": url, "prompt": "What is it?"}


def decide(gate: Gate, url: str, project: Path) -> Decision:
    return gate.check(FETCH, call(url), ToolContext(LocalWorkspace(project)))


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan"])
def test_a_fetch_is_asked_about_in_every_mode_but_bypass(tmp_path: Path, mode: str) -> None:
    recorder = Recorder(Answer.yes())
    gate = Gate(mode=mode, prompter=recorder)

    decision = decide(gate, "https://docs.example.com/guide", tmp_path)

    assert decision.allowed
    (asked,) = recorder.requests
    assert asked.subject == "docs.example.com"
    assert asked.label == "WebFetch(docs.example.com)"
    assert "URL: https://docs.example.com/guide" in asked.note
    assert asked.suggestion is not None and asked.suggestion.rules == ("WebFetch(domain:docs.example.com)",)
    assert (
        Gate(mode="bypassPermissions")
        .check(FETCH, call("https://x.example/"), ToolContext(LocalWorkspace(tmp_path)))
        .allowed
    )


@pytest.mark.parametrize(
    ("rule", "url", "allowed"),
    [
        ("WebFetch(domain:docs.example.com)", "https://docs.example.com/a", True),
        ("WebFetch(domain:docs.example.com)", "https://DOCS.example.com./a", True),
        ("WebFetch(domain:docs.example.com)", "https://evil.example.com/a", False),
        ("WebFetch(domain:docs.example.com)", "https://docs.example.com.evil.test/a", False),
        ("WebFetch(domain:*.example.com)", "https://api.example.com/a", True),
        ("WebFetch(domain:*.example.com)", "https://example.com.evil.test/a", False),
        ("WebFetch", "https://anything.test/a", True),
    ],
)
def test_allow_rules_name_hosts(tmp_path: Path, rule: str, url: str, allowed: bool) -> None:
    gate = Gate(rules(allow=(rule,)))  # no prompter: what would be asked is denied

    assert decide(gate, url, tmp_path).allowed is allowed


def test_a_deny_rule_naming_the_host_wins_over_an_allow_rule(tmp_path: Path) -> None:
    gate = Gate(rules(allow=("WebFetch",), deny=("WebFetch(domain:evil.test)",)), mode="bypassPermissions")

    denied = decide(gate, "https://evil.test/x", tmp_path)

    assert not denied.allowed
    assert 'deny rule "WebFetch(domain:evil.test)"' in denied.message
    assert decide(gate, "https://good.test/x", tmp_path).allowed


def test_an_ask_rule_naming_the_host_asks_even_where_a_rule_allows(tmp_path: Path) -> None:
    recorder = Recorder(Answer.no())
    gate = Gate(rules(allow=("WebFetch",), ask=("WebFetch(domain:*.bank.test)",)), prompter=recorder)

    assert not decide(gate, "https://www.bank.test/", tmp_path).allowed
    assert len(recorder.requests) == 1


def test_in_a_run_a_fetch_without_a_rule_is_denied_naming_the_rule_to_add(tmp_path: Path) -> None:
    denied = decide(Gate(), "https://docs.example.com/guide", tmp_path)

    assert not denied.allowed
    assert denied.message.startswith("Permission denied: WebFetch of docs.example.com needs approval")
    assert '--allowed-tools "WebFetch(domain:docs.example.com)"' in denied.message


def test_dont_ask_again_saves_the_host_rule_and_the_next_fetch_there_is_not_asked(tmp_path: Path) -> None:
    local = tmp_path / ".agentcli" / "settings.local.json"
    recorder = Recorder(Answer.always(["WebFetch(domain:docs.example.com)"]))
    gate = Gate(prompter=recorder, local_settings=local)

    first = decide(gate, "https://docs.example.com/a", tmp_path)
    second = decide(gate, "https://docs.example.com/b", tmp_path)
    elsewhere = decide(gate, "https://other.example.com/", tmp_path)

    assert first.allowed and second.allowed and elsewhere.allowed
    assert len(recorder.requests) == 2  # the first fetch and the other host
    assert json.loads(local.read_text())["permissions"]["allow"] == ["WebFetch(domain:docs.example.com)"]


def test_only_hosts_a_rule_names_are_handed_to_the_tool_as_named(tmp_path: Path) -> None:
    named = Gate(rules(allow=("WebFetch(domain:localhost)",)))
    by_tool_rule = Gate(rules(allow=("WebFetch",)))
    by_answer = Gate(prompter=Recorder(Answer.yes()))

    assert decide(named, "http://localhost:8000/", tmp_path).hosts_named == {"localhost"}
    assert decide(by_tool_rule, "http://localhost:8000/", tmp_path).hosts_named == frozenset()
    assert decide(by_answer, "http://localhost:8000/", tmp_path).hosts_named == frozenset()
    assert decide(Gate(mode="bypassPermissions"), "http://localhost/", tmp_path).hosts_named == frozenset()


def test_a_url_without_a_host_is_asked_about_and_never_allowed_by_a_host_rule(tmp_path: Path) -> None:
    gate = Gate(rules(allow=("WebFetch(domain:example.com)",)))

    assert not decide(gate, "not a url", tmp_path).allowed


SEARCH = WebSearchTool(SearxngSearch("https://searx.example.test", http_get_json))


def search(gate: Gate, project: Path) -> Decision:
    return gate.check(SEARCH, {"query": "pep 8 line length"}, ToolContext(LocalWorkspace(project)))


def test_a_search_declares_where_its_query_goes_and_is_asked_about_with_the_query(tmp_path: Path) -> None:
    recorder = Recorder(Answer.yes())

    assert search(Gate(prompter=recorder), tmp_path).allowed

    (asked,) = recorder.requests
    assert asked.title == "Search the web"
    assert asked.subject == "searx.example.test"
    assert "Query: pep 8 line length" in asked.note
    assert asked.suggestion is not None and asked.suggestion.rules == ("WebSearch",)


def test_in_a_run_a_search_needs_a_websearch_rule(tmp_path: Path) -> None:
    denied = search(Gate(), tmp_path)

    assert not denied.allowed
    assert "pass --allowed-tools WebSearch " in denied.message
    assert search(Gate(rules(allow=("WebSearch",))), tmp_path).allowed
    assert not search(Gate(rules(allow=("WebSearch",), deny=("WebSearch",))), tmp_path).allowed


def test_dont_ask_denies_fetches_and_searches_no_rule_allows_without_asking(tmp_path: Path) -> None:
    recorder = Recorder(Answer.yes())
    gate = Gate(rules(allow=("WebFetch(domain:docs.example.com)",)), mode="dontAsk", prompter=recorder)

    unnamed = decide(gate, "https://other.example.com/", tmp_path)
    searched = search(gate, tmp_path)
    named = decide(gate, "https://docs.example.com/guide", tmp_path)

    assert not unnamed.allowed and "dontAsk mode" in unnamed.message
    assert '--allowed-tools "WebFetch(domain:other.example.com)"' in unnamed.message
    assert not searched.allowed and "dontAsk mode" in searched.message
    assert named.allowed and named.hosts_named == {"docs.example.com"}
    assert recorder.requests == []
