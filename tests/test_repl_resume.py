"""A resumed session in the REPL (pty): its last answer rendered as Markdown, /cost with what it
had spent before, and /clear clearing the screen."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.catalog import DEFAULT_MODEL, model_info
from agentcli.contracts import Usage
from tests.conftest import RunCli, StartRepl
from tests.fake_anthropic import FakeAnthropic, reply, text
from tests.session_helpers import transcript_files

EARLIER_ANSWER = """# Build notes

The build uses **make** with `-j4`; run `make <target>` for one part.

- first *step*
- second step"""


def cost_of(*usages: dict[str, int]) -> str:
    total = Usage()
    for usage in usages:
        total.add(Usage(**usage))
    return f"Cost: ${model_info(DEFAULT_MODEL).cost_usd(total):.4f}"


def test_continue_shows_the_earlier_answer_rendered_as_markdown(
    start_repl: StartRepl, run_cli: RunCli, fake_api: FakeAnthropic
) -> None:
    fake_api.script(reply(text(EARLIER_ANSWER)))
    assert run_cli("run", "how do I build?").returncode == 0

    repl = start_repl("-c")

    screen = repl.wait_for("second step")
    lines = screen.splitlines()
    assert "> how do I build?" in lines
    assert "Build notes" in lines, "the heading is not on a line of its own, left-aligned"
    assert "The build uses make with -j4; run make <target> for one part." in lines
    assert "• first step" in [line.strip() for line in lines]
    for markup in ("# Build", "**", "`", "*step*", "- first"):
        assert markup not in screen, markup


def test_cost_after_continue_includes_what_the_session_spent_before(
    start_repl: StartRepl, run_cli: RunCli, fake_api: FakeAnthropic
) -> None:
    fake_api.script(reply(text("Earlier answer."), usage={"output_tokens": 40_000}), reply(text("Later answer.")))
    assert run_cli("run", "an expensive question").returncode == 0
    earlier = fake_api.usage_log[0]

    repl = start_repl("-c")
    repl.submit("/cost")

    screen = repl.wait_for("Cost: $")
    assert f"{cost_of(earlier)} (${model_info(DEFAULT_MODEL).cost_usd(Usage(**earlier)):.4f} of it before" in screen
    assert "output: 40k" in screen

    repl.submit("and now?")
    repl.wait_for_prompt("Later answer.")
    repl.submit("/cost")
    repl.wait_for_count("Cost: $", 2)
    assert cost_of(earlier, fake_api.usage_log[1]) in repl.text()


def test_cost_after_continuing_a_transcript_without_usage_says_it_is_unknown(
    start_repl: StartRepl, run_cli: RunCli, fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(reply(text("Earlier answer.")))
    assert run_cli("run", "a question").returncode == 0
    [path] = transcript_files(home, project)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "usage"}) + "\n" for r in records))

    repl = start_repl("-c")
    repl.submit("/cost")

    screen = repl.wait_for("Cost: $")
    assert "Cost: $0.0000 (what it spent before it was resumed was not recorded)" in screen


def test_clear_clears_the_screen(start_repl: StartRepl, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("Answer-A")), reply(text("Answer-B")))
    repl = start_repl()
    repl.submit("first conversation")
    repl.wait_for_prompt("Answer-A")

    repl.submit("/clear")

    screen = repl.wait_for("Started a new conversation.")
    assert "Answer-A" not in screen and "first conversation" not in screen
    repl.submit("second conversation")
    assert "Answer-A" not in repl.wait_for_prompt("Answer-B")
