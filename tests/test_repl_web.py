"""WebFetch in the REPL, as a person sees it in a real pseudo-terminal: the question names the
host and the URL, and "don't ask again" saves that host's rule, which then lets the fetch reach it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import StartRepl
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.web_pages import PageServer


def test_a_fetch_is_asked_about_by_host_and_dont_ask_again_saves_the_hosts_rule(
    start_repl: StartRepl, fake_api: FakeAnthropic, project: Path
) -> None:
    with PageServer() as server:
        server.page("/guide", "<h1>Widget guide</h1><p>Widgets spin at 42 rpm.</p>")
        url = server.url("/guide")
        fake_api.script(
            reply(tool_use("WebFetch", {"url": url, "prompt": "How fast do widgets spin?"})),
            reply(text("They spin at 42 rpm.")),
        )
        repl = start_repl()

        repl.submit("read the widget guide")
        screen = repl.wait_for("Do you want to proceed?")
        assert "Fetch from the web" in screen and f"URL: {url}" in screen
        repl.press("2")

        repl.wait_for_prompt("They spin at 42 rpm.")
        saved = json.loads((project / ".agentcli" / "settings.local.json").read_text())
        assert saved["permissions"]["allow"] == ["WebFetch(domain:127.0.0.1)"]
        assert [seen.path for seen in server.requests] == ["/guide"]  # over http: a loopback host the rule names
    told = str(fake_api.requests[1].body["messages"][-1]["content"][0]["content"])
    assert "# Widget guide" in told and "Widgets spin at 42 rpm." in told
