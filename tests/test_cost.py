"""Cost in dollars: the price table and the `models` setting, `total_cost_usd` with cache writes and
reads, and the budget (`--max-budget-usd`, `maxBudgetUsd`) that stops a run cleanly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.catalog import KNOWN_MODELS, UNKNOWN_MODEL, cost_usd, model_info
from agentcli.contracts import Usage
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent, RunMain


def settings(project: Path, values: object) -> None:
    (project / ".agentcli").mkdir(exist_ok=True)
    (project / ".agentcli" / "settings.json").write_text(json.dumps(values))


def test_cost_prices_input_cache_writes_cache_reads_and_output_each_at_its_rate() -> None:
    usage = Usage(
        input_tokens=1_000, output_tokens=4_000, cache_creation_input_tokens=20_000, cache_read_input_tokens=300_000
    )

    # claude-sonnet-5-5: $2 in, $10 out; cache writes 1.25x input ($2.50), reads 0.1x ($0.20)
    assert round(cost_usd(usage, KNOWN_MODELS["claude-sonnet-5-5"]), 9) == 0.152
    # gpt-4.1: $2 in, $8 out, cached reads $0.50, no charge for writing the cache beyond input
    assert round(cost_usd(usage, KNOWN_MODELS["gpt-4.1"]), 9) == 0.224  # 0.002 + 0.04 + 0.15 + 0.032
    assert cost_usd(usage, UNKNOWN_MODEL) == 0.0
    assert KNOWN_MODELS["gemini-2.5-pro"].native_tools and model_info("gemini-2.5-flash").context_window == 1_048_576


def test_total_cost_usd_counts_every_turn_with_its_cache_tokens(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(
        reply(
            tool_use("Glob", {"pattern": "*"}),
            usage={"input_tokens": 1_000, "cache_creation_input_tokens": 20_000, "output_tokens": 500},
        ),
        reply(text("Done."), usage={"input_tokens": 200, "cache_read_input_tokens": 20_000, "output_tokens": 100}),
    )

    done = run_agent("go", output_format="json")

    result = json.loads(done.stdout)
    assert result["usage"] == {
        "input_tokens": 1_200,
        "output_tokens": 600,
        "cache_creation_input_tokens": 20_000,
        "cache_read_input_tokens": 20_000,
    }
    # 1,200 x $2 + 20,000 x $2.50 + 20,000 x $0.20 + 600 x $10, per million
    assert result["total_cost_usd"] == 0.0624


def test_a_models_entry_overrides_the_built_in_prices(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    settings(project, {"models": {"claude-sonnet-5-5": {"input_usd_per_mtok": 1, "cache_read_usd_per_mtok": 0.5}}})
    model.script(
        reply(text("Hi."), usage={"input_tokens": 1_000, "cache_read_input_tokens": 10_000, "output_tokens": 100})
    )

    done = run_agent("hi", output_format="json")

    assert json.loads(done.stdout)["total_cost_usd"] == 0.007  # 1,000 x $1 + 10,000 x $0.50 + 100 x $10


@pytest.mark.parametrize(
    ("models", "message"),
    [
        ({"local": {"context_windw": 32768}}, 'Unknown field "context_windw" for model "local" in "models"'),
        ({"local": {"native_tools": "no"}}, '"models" → "local" → "native_tools"'),
        ({"local": {"context_window": 0}}, "must be a whole number of tokens from 1 to 1,000,000,000,000, not 0"),
        ({"local": {"input_usd_per_mtok": -1}}, "must be a number of dollars from 0 to 1,000,000, not -1"),
        ({"local": 32768}, "must be an object of fields (context_window, max_output_tokens"),
        (["local"], 'The "models" setting in '),
    ],
)
def test_a_bad_models_setting_is_a_usage_error_naming_the_file(
    run_agent: RunAgent, model: ScriptedModel, project: Path, models: object, message: str
) -> None:
    settings(project, {"models": models})

    done = run_agent("hi")

    assert done.returncode == 2
    assert message in done.stderr
    assert str(project / ".agentcli" / "settings.json") in done.stderr
    assert model.requests == []


def test_an_unknown_model_gets_a_one_line_notice_naming_the_setting(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    model.script(reply(text("Hi.")), reply(text("Hi again.")))

    done = run_agent("hi", model="my-local-model", output_format="json")

    notices = [line for line in done.stderr.splitlines() if "my-local-model" in line]
    assert len(notices) == 1
    assert "is not in agentcli's model table: assuming a 200,000-token context window" in notices[0]
    assert '"models": {"my-local-model": {"context_window"' in notices[0]
    assert json.loads(done.stdout)["total_cost_usd"] == 0

    settings(project, {"models": {"my-local-model": {"context_window": 32768}}})
    described = run_agent("hi", model="my-local-model")
    assert "my-local-model" not in described.stderr


def test_the_budget_stops_after_the_response_that_passes_it_and_the_session_can_go_on(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    model.script(
        reply(tool_use("Glob", {"pattern": "*"}), usage={"input_tokens": 1_000, "output_tokens": 200}),  # $0.004
        reply(
            tool_use("Write", {"file_path": "out.txt", "content": "x"}),
            usage={"input_tokens": 1_000, "output_tokens": 1_000},  # $0.012: $0.016 in all
        ),
    )

    done = run_agent("go", max_budget_usd=0.01, permission_mode="acceptEdits", output_format="json")

    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["subtype"] == "error_max_budget"
    assert result["result"] == (
        "Spent $0.0160, over this run's budget of $0.0100 "
        '(raise it with --max-budget-usd, or "maxBudgetUsd" in settings).'
    )
    assert result["total_cost_usd"] == 0.016
    assert not (project / "out.txt").exists()
    assert len(model.requests) == 2

    model.script(reply(text("Stopped there.")))
    again = run_agent("go on", continue_session=True, max_budget_usd=0.01)

    assert again.returncode == 0, again.stderr
    assert again.stdout == "Stopped there.\n"
    sent = json.dumps(model.requests[2].messages)
    assert "Not run: the cost budget was used up." in sent
    assert model.rejected == []


def test_the_budget_setting_applies_and_a_bad_one_is_a_usage_error(
    run_agent: RunAgent, model: ScriptedModel, project: Path, run_main: RunMain
) -> None:
    settings(project, {"maxBudgetUsd": 0.001})
    model.script(reply(tool_use("Glob", {"pattern": "*"}), usage={"input_tokens": 1_000, "output_tokens": 200}))

    done = run_agent("go")

    assert done.returncode == 1
    assert "over this run's budget of $0.0010" in done.stderr

    settings(project, {"maxBudgetUsd": "5 dollars"})
    bad = run_agent("go")
    assert bad.returncode == 2
    assert "Setting maxBudgetUsd in " in bad.stderr
    assert "must be a positive number of dollars, at most 1,000,000, not '5 dollars'." in bad.stderr

    flag = run_main("run", "--max-budget-usd", "lots", "hi")
    assert flag.returncode == 2
    assert "--max-budget-usd" in flag.stderr
