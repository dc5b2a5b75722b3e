"""Numbers from outside are bounded (`agentcli.bounds`): every number a setting, a flag, an
environment variable, a model server, a model's tool call or a transcript hands agentcli is
checked where it comes in. Each kind is tried with the values JSON and the command line can
carry that nothing downstream expects: huge, negative, zero, NaN, Infinity, a bool, a string, a
fraction, a number of more than 4,300 digits. What is asserted is what the user sees: exit 2 and
one line naming the setting (or flag) and its range, or a run that goes on with the number
clamped; never `Internal error: OverflowError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.cli.argv import parse
from agentcli.errors import UsageError
from agentcli.providers.anthropic import AnthropicModel
from agentcli.providers.gemini import GeminiModel
from agentcli.providers.openai import OpenAIModel
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from agentcli.runner import RunOptions, run_once
from agentcli.sessions.store import list_sessions
from agentcli.stats.command import stats_text
from agentcli.stats.scope import parse_since
from tests import fake_anthropic, fake_gemini, fake_openai
from tests.conftest import TEST_KEY, RunAgent
from tests.test_cli_parsing import typer_reads

HUGE_DIGITS = "9" * 5_000
"""More digits than Python reads as a whole number (4,300): `int()` and `json.loads` refuse it."""
NOT_NUMBERS: list[object] = [True, "30"]
NON_FINITE = [float("inf"), float("-inf"), float("nan"), 1e308]
MAX_TOKENS = 10**12
"""The documented ceiling of every count of tokens."""


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def project_settings(project: Path, values: dict[str, Any]) -> None:
    write_json(project / ".agentcli" / "settings.json", values)


def refused(run_agent: RunAgent, model: ScriptedModel, message: str) -> str:
    """Run, and check the run was refused before anything was sent, with `message` on one line."""
    done = run_agent("hi")
    assert done.returncode == 2, done.stderr
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "Internal error" not in done.stderr
    assert model.requests == []
    return done.stderr


# ------------------------------------------------------------------ settings


SECONDS = "must be a positive number of seconds, at most 86,400"
TOKENS = "must be a whole number of tokens from 1 to 1,000,000,000,000"
DOLLARS = "must be a positive number of dollars, at most 1,000,000"
PRICE = "must be a number of dollars from 0 to 1,000,000"
MILLISECONDS = "must be a whole number of milliseconds from 1 to 86,400,000"


@pytest.mark.parametrize(
    ("key", "bad", "limit", "message"),
    [
        ("tokenBudget", [0, -1, 10**13, 1.5, *NON_FINITE, *NOT_NUMBERS], MAX_TOKENS, f"in {{}} {TOKENS}"),
        ("maxBudgetUsd", [0, -1, 1e7, *NON_FINITE, *NOT_NUMBERS], 1_000_000, f"in {{}} {DOLLARS}"),
        ("streamIdleTimeoutSeconds", [0, -1, 3_000_000, *NON_FINITE, *NOT_NUMBERS], 86_400, f"in {{}} {SECONDS}"),
        ("mcpTimeout", [0, -1, 86_400_001, 1.5, *NON_FINITE, *NOT_NUMBERS], 86_400_000, f"in {{}} {MILLISECONDS}"),
        ("maxMcpOutputTokens", [0, -5, 10**13, *NON_FINITE, *NOT_NUMBERS], MAX_TOKENS, f"in {{}} {TOKENS}"),
    ],
)
def test_a_setting_out_of_its_range_is_a_usage_error(
    run_agent: RunAgent, model: ScriptedModel, project: Path, key: str, bad: list[object], limit: int, message: str
) -> None:
    path = project / ".agentcli" / "settings.json"
    for value in bad:
        project_settings(project, {key: value})
        stderr = refused(run_agent, model, f"Setting {key} " + message.format(path))
        assert stderr.count("\n") == 1  # one line

    project_settings(project, {key: limit})  # the limit itself is taken
    model.script(reply(text("fine")))
    assert run_agent("hi").stdout == "fine\n"


@pytest.mark.parametrize("field", ["context_window", "max_output_tokens"])
def test_a_models_token_field_out_of_range_is_a_usage_error(
    run_agent: RunAgent, model: ScriptedModel, project: Path, field: str
) -> None:
    for value in [0, -1, 10**13, 10**400, 32768.0, *NON_FINITE, *NOT_NUMBERS]:
        project_settings(project, {"models": {"local": {field: value}}})
        refused(
            run_agent, model, f'"models" → "local" → "{field}" in {project / ".agentcli" / "settings.json"} {TOKENS}'
        )


@pytest.mark.parametrize("field", ["input_usd_per_mtok", "output_usd_per_mtok", "cache_read_usd_per_mtok"])
def test_a_models_price_out_of_range_is_a_usage_error(
    run_agent: RunAgent, model: ScriptedModel, project: Path, field: str
) -> None:
    for value in [-1, 1e7, 10**400, *NON_FINITE, *NOT_NUMBERS]:
        project_settings(project, {"models": {"local": {field: value}}})
        refused(run_agent, model, f'"{field}" in {project / ".agentcli" / "settings.json"} {PRICE}')

    project_settings(project, {"models": {"local": {field: 1_000_000}}})
    model.script(reply(text("fine")))
    assert run_agent("hi", model="local").stdout == "fine\n"


def test_a_hook_timeout_out_of_range_skips_that_hook_with_a_notice(
    run_agent: RunAgent, model: ScriptedModel, home: Path, tmp_path: Path
) -> None:
    path, ran = home / ".agentcli" / "settings.json", tmp_path / "ran"
    for timeout in [3_000_000, 86_401, *NON_FINITE, 0, -1, *NOT_NUMBERS]:
        hook = {"type": "command", "command": f"touch {ran}", "timeout": timeout}
        write_json(path, {"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}})
        model.script(reply(text("fine")))

        done = run_agent("hi")

        assert done.returncode == 0, done.stderr
        assert f"Skipped hooks in {path}: hooks.UserPromptSubmit[0].hooks[0].timeout {SECONDS}, not " in done.stderr
        assert not ran.exists()


def test_a_settings_file_with_a_number_python_cannot_read_is_a_usage_error(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    path = project / ".agentcli" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"tokenBudget": ' + HUGE_DIGITS + "}")

    refused(run_agent, model, f"Settings file {path} holds a number of more than 4,300 digits.")


def test_an_mcp_config_with_a_number_python_cannot_read_is_skipped_with_a_notice(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    (project / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "x", "n": ' + HUGE_DIGITS + "}}}")
    model.script(reply(text("fine")))

    done = run_agent("hi")

    assert done.returncode == 0, done.stderr
    assert "holds a number of more than 4,300 digits" in done.stderr


# ------------------------------------------------------------------ environment variables


@pytest.mark.parametrize(
    ("variable", "value", "rule"),
    [
        ("MCP_TIMEOUT", "99999999999", "a whole number of milliseconds from 1 to 86,400,000. Using 30,000."),
        ("MCP_TIMEOUT", "1e308", "a whole number of milliseconds from 1 to 86,400,000. Using 30,000."),
        ("MCP_TIMEOUT", "-5", "a whole number of milliseconds from 1 to 86,400,000. Using 30,000."),
        ("MCP_TIMEOUT", HUGE_DIGITS, "a whole number of milliseconds from 1 to 86,400,000. Using 30,000."),
        ("MAX_MCP_OUTPUT_TOKENS", "Infinity", "a whole number of tokens from 1 to 1,000,000,000,000. Using 25,000."),
        ("MAX_MCP_OUTPUT_TOKENS", "0", "a whole number of tokens from 1 to 1,000,000,000,000. Using 25,000."),
    ],
)
def test_an_environment_variable_out_of_range_is_passed_over_with_a_notice(
    run_agent: RunAgent, model: ScriptedModel, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, rule: str
) -> None:
    monkeypatch.setenv(variable, value)
    model.script(reply(text("fine")))

    done = run_agent("hi")

    assert done.returncode == 0, done.stderr
    assert f"Ignored {variable}='{value[:20]}" in done.stderr and f"it must be {rule}" in done.stderr
    assert len(done.stderr) < 300  # a 5,000-digit value is not printed whole


# ------------------------------------------------------------------ the command line


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--max-turns", HUGE_DIGITS),
        ("--max-turns", "1000001"),
        ("--max-budget-tokens", HUGE_DIGITS),
        ("--max-budget-tokens", str(10**13)),
        ("--max-budget-usd", HUGE_DIGITS),
        ("--max-budget-usd", "1e308"),
        ("--max-budget-usd", "inf"),
    ],
)
def test_a_flag_out_of_range_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, flag: str, value: str) -> None:
    argv = ["run", flag, value, "hi"]

    assert parse(argv) is None  # the light parser leaves it to typer, which says what is wrong
    assert typer_reads(argv, monkeypatch) == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_budget_usd": float("nan")}, f"--max-budget-usd {DOLLARS}, not NaN."),
        ({"max_budget_usd": float("inf")}, f"--max-budget-usd {DOLLARS}, not Infinity."),
        ({"max_budget_usd": 0.0}, f"--max-budget-usd {DOLLARS}, not 0.0."),
        ({"max_budget_tokens": 10**400}, f"--max-budget-tokens {TOKENS}, not a number too large to show."),
    ],
)
def test_a_budget_given_in_process_is_checked_as_the_flag_is(
    run_agent: RunAgent, model: ScriptedModel, options: dict[str, Any], message: str
) -> None:
    done = run_agent("hi", **options)

    assert done.returncode == 2
    assert message in done.stderr
    assert model.requests == []


@pytest.mark.parametrize("since", ["99999999999d", "9999999999w", f"{HUGE_DIGITS}m", "0001-01-01", "9999-12-31"])
def test_stats_since_a_time_the_calendar_cannot_hold_is_a_usage_error(project: Path, since: str) -> None:
    with pytest.raises(UsageError) as refused:
        stats_text(project, all_projects=False, since=since, as_json=True, width=100)

    assert "is further from now than agentcli can count (the years 2 to 9998)" in str(refused.value)
    assert len(str(refused.value)) < 300
    assert parse_since("1000000m").year > 2  # a long period that the calendar holds is still taken


def test_stats_checks_the_prices_it_counts_with(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    model.script(reply(text("first")))
    assert run_agent("hi").returncode == 0
    project_settings(project, {"models": {"claude-sonnet-5-5": {"input_usd_per_mtok": 1e308}}})

    with pytest.raises(UsageError) as refused:
        stats_text(project, all_projects=False, since=None, as_json=True, width=100)

    assert f'"input_usd_per_mtok" in {project / ".agentcli" / "settings.json"} {PRICE}, not 1e+308.' in str(
        refused.value
    )


# ------------------------------------------------------------------ model servers

CLAMPED: list[tuple[object, int]] = [
    (float("inf"), MAX_TOKENS),
    (1e308, MAX_TOKENS),
    (10**30, MAX_TOKENS),
    (float("nan"), 0),
    (-5, 0),
    ("12", 0),
    (True, 0),
    (12.7, 12),
]
"""A usage count a server sent, and what agentcli counts for it."""


def in_slots(slots: int) -> Iterator[list[tuple[object, int]]]:
    """`CLAMPED` in groups of `slots`, one group for each response (its usage fields)."""
    for start in range(0, len(CLAMPED), slots):
        yield CLAMPED[start : start + slots]


def run_on(model: Any, project: Path, capsys: pytest.CaptureFixture[str], name: str) -> dict[str, Any]:
    capsys.readouterr()
    code = run_once(RunOptions(prompt="hi", model=name, output_format="json"), model, project, retry_base_delay=0)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Internal error" not in err
    result: dict[str, Any] = json.loads(out)
    assert result["result"] == "ok"
    assert isinstance(result["total_cost_usd"], float)
    return result


@pytest.fixture
def anthropic_api() -> Iterator[fake_anthropic.FakeAnthropic]:
    with fake_anthropic.FakeAnthropic(api_key=TEST_KEY) as api:
        yield api


def test_an_anthropic_usage_count_is_clamped(
    anthropic_api: fake_anthropic.FakeAnthropic, in_process_env: None, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fields = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]
    model = AnthropicModel(api_key=TEST_KEY, base_url=anthropic_api.url)
    for group in in_slots(len(fields)):
        usage: Any = {field: sent for field, (sent, _) in zip(fields, group, strict=True)}
        anthropic_api.script(fake_anthropic.reply(fake_anthropic.text("ok"), usage=usage))

        result = run_on(model, project, capsys, "claude-sonnet-5-5")

        assert [result["usage"][field] for field in fields] == [counted for _, counted in group], group


def test_an_openai_usage_count_is_clamped(
    in_process_env: None, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fake_openai.FakeOpenAI(api_key="sk-test") as api:
        model = OpenAIModel(api_key="sk-test", base_url=api.url)
        for (prompt, input_tokens), (completion, output_tokens) in in_slots(2):
            fields: Any = {"prompt_tokens": prompt, "completion_tokens": completion}
            api.script(fake_openai.reply("ok", **fields))

            result = run_on(model, project, capsys, "gpt-5")

            assert (result["usage"]["input_tokens"], result["usage"]["output_tokens"]) == (input_tokens, output_tokens)


def test_a_gemini_usage_count_is_clamped(
    in_process_env: None, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fake_gemini.FakeGemini(api_key="g-key") as api:
        model = GeminiModel(api_key="g-key", base_url=api.url)
        for (prompt, input_tokens), (thoughts, output_tokens) in in_slots(2):
            usage: Any = {"promptTokenCount": prompt, "candidatesTokenCount": 3, "thoughtsTokenCount": thoughts}
            api.script(fake_gemini.reply(fake_gemini.text("ok"), usage=usage))

            result = run_on(model, project, capsys, "gemini-2.5-flash")

            assert result["usage"]["input_tokens"] == input_tokens
            assert result["usage"]["output_tokens"] == min(3 + output_tokens, MAX_TOKENS)


def test_a_retry_after_the_calendar_cannot_hold_counts_as_none(
    fake_api: fake_anthropic.FakeAnthropic, run_wire: RunAgent
) -> None:
    for wait in ["Fri, 31 Dec 99999 23:59:59 GMT", "Fri, 31 Dec 9999999999999999999 23:59:59 GMT", "1e999", "NaN"]:
        overloaded = fake_anthropic.http_error(529, fake_anthropic.OVERLOADED_ERROR, headers={"retry-after": wait})
        fake_api.script(overloaded, fake_anthropic.reply(fake_anthropic.text("ok")))

        done = run_wire("hi")

        assert done.returncode == 0, done.stderr
        assert done.stdout == "ok\n"
        assert "retrying in 0s (overloaded, attempt 1 of 3)" in done.stderr, wait


def test_a_budget_stops_a_server_that_reports_infinite_usage(
    anthropic_api: fake_anthropic.FakeAnthropic, in_process_env: None, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = AnthropicModel(api_key=TEST_KEY, base_url=anthropic_api.url)
    usage: Any = {"input_tokens": float("inf")}
    anthropic_api.script(
        fake_anthropic.reply(fake_anthropic.tool_use("Glob", {"pattern": "*"}), usage=usage),
        fake_anthropic.reply(fake_anthropic.text("never sent")),
    )

    code = run_once(RunOptions(prompt="hi", max_budget_usd=5), model, project, retry_base_delay=0)

    err = capsys.readouterr().err
    assert code == 1
    assert re.search(r"Error: Used 1,000,000,00\d,\d{3} tokens, over this run's budget of 10,000,000 ", err), err
    assert len(anthropic_api.requests) == 1


# ------------------------------------------------------------------ a model's tool calls


def test_a_whole_number_written_as_a_float_reaches_the_tool_as_an_int(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    (project / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    model.script(
        reply(
            tool_use("Read", {"file_path": "a.txt", "offset": 3.0, "limit": 2e0}, id="toolu_read"),
            tool_use("Grep", {"pattern": "line", "head_limit": 1e308}, id="toolu_grep"),
        ),
        reply(text("done")),
    )

    done = run_agent("go")

    assert done.returncode == 0, done.stderr
    results = {b["tool_use_id"]: b for b in model.requests[1].messages[-1]["content"]}
    assert not results["toolu_read"].get("is_error"), results["toolu_read"]
    assert "line 3" in results["toolu_read"]["content"] and "line 5" not in results["toolu_read"]["content"]
    assert not results["toolu_grep"].get("is_error") and "a.txt" in results["toolu_grep"]["content"]
    # What the model sent goes back as it was.
    assert model.requests[1].messages[1]["content"][0]["input"]["offset"] == 3.0


# ------------------------------------------------------------------ transcripts and hooks


def test_a_transcript_with_absurd_counts_still_resumes_and_counts(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    model.script(reply(text("first"), usage={"input_tokens": 100, "output_tokens": 10}))
    assert run_agent("hi").returncode == 0
    [info] = list_sessions(project)
    lines = info.path.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    last = max(i for i, r in enumerate(records) if r.get("type") == "message" and "usage" in r)
    assert '"input_tokens":100' in lines[last]
    lines[last] = lines[last].replace('"input_tokens":100', '"input_tokens":1' + "0" * 400)
    lines.append('{"type":"title","title":"x","n":' + HUGE_DIGITS + "}")
    info.path.write_text("\n".join(lines) + "\n")

    found = json.loads(stats_text(project, all_projects=False, since=None, as_json=True, width=100))
    model.script(reply(text("second")))
    again = run_agent("go on", continue_session=True)

    assert found["sessions"] == 1 and found["tokens"]["input"] == 0  # the absurd count is left out
    assert again.returncode == 0, again.stderr
    assert again.stdout == "second\n"


def test_an_agent_definition_with_a_number_python_cannot_read_is_skipped_with_a_notice(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    definition = project / ".agentcli" / "agents" / "big.md"
    definition.parent.mkdir(parents=True)
    definition.write_text(f"---\nname: big\ndescription: Big.\nmaxTurns: {HUGE_DIGITS}\n---\nBody.\n")
    model.script(reply(text("fine")))

    done = run_agent("hi")

    assert done.returncode == 0, done.stderr
    # Read leniently (the number kept as text), then refused as a known key of the wrong type.
    notice = f"Skipped an agent definition: In the agent definition {definition}, `maxTurns:` must be a whole number"
    assert notice in done.stderr


def test_hook_output_with_a_number_python_cannot_read_is_plain_text(
    run_agent: RunAgent, model: ScriptedModel, home: Path, tmp_path: Path
) -> None:
    script = tmp_path / "big.sh"
    script.write_text('#!/bin/sh\nprintf \'{"continue": true, "n": ' + HUGE_DIGITS + "}'\n")
    script.chmod(0o755)
    write_json(
        home / ".agentcli" / "settings.json", {"hooks": {"UserPromptSubmit": [{"hooks": [{"command": str(script)}]}]}}
    )
    model.script(reply(text("fine")))

    done = run_agent("hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
