"""WebFetch in a session: the `smallFastModel` setting's model reads the page and only its answer
reaches the main model; what that request spent counts in the run's usage and is drawn from its
budget, so a run over its budget stops before the next request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.providers.scripted import Reply, ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent
from tests.web_pages import PageServer

PAGE = "<h1>Widget guide</h1><p>Widgets spin at 42 rpm.</p>"


@pytest.fixture
def server() -> Iterator[PageServer]:
    with PageServer() as pages:
        pages.page("/guide", PAGE)
        yield pages


@pytest.fixture
def small_model_set(project: Path) -> None:
    settings = project / ".agentcli" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"smallFastModel": "claude-haiku-5-5"}))


def fetch_script(url: str, small_model_input: int) -> tuple[Reply, ...]:
    return (
        reply(tool_use("WebFetch", {"url": url, "prompt": "How fast do widgets spin?"})),
        reply(text("The page says 42 rpm."), usage={"input_tokens": small_model_input, "output_tokens": 10}),
        reply(text("They spin at 42 rpm.")),
    )


@pytest.mark.usefixtures("small_model_set")
def test_the_small_model_reads_the_page_and_only_its_answer_reaches_the_main_model(
    run_agent: RunAgent, model: ScriptedModel, server: PageServer
) -> None:
    model.script(*fetch_script(server.url("/guide"), 1_000))

    done = run_agent("spin?", allowed_tools=["WebFetch(domain:127.0.0.1)"], output_format="json")

    assert done.returncode == 0, done.stderr
    main, small, final = model.requests
    assert small.model == "claude-haiku-5-5" and main.model != "claude-haiku-5-5"
    assert "Widgets spin at 42 rpm." in json.dumps(small.messages)
    told = json.dumps(final.messages[-1])
    assert "The page says 42 rpm." in told and "Widgets spin at 42 rpm." not in told
    assert json.loads(done.stdout)["usage"]["input_tokens"] >= 1_000


@pytest.mark.usefixtures("small_model_set")
def test_what_the_small_model_spent_is_drawn_from_the_runs_budget(
    run_agent: RunAgent, model: ScriptedModel, server: PageServer
) -> None:
    model.script(*fetch_script(server.url("/guide"), 50_000))

    done = run_agent("spin?", allowed_tools=["WebFetch(domain:127.0.0.1)"], max_budget_tokens=20_000)

    assert done.returncode == 1
    assert "over this run's budget of 20,000" in done.stderr
    assert len(model.requests) == 2  # the main model was not asked again
