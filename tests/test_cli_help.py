"""The command line explains itself: --help, --version, and options that do not exist."""

from __future__ import annotations

import pytest

from tests.conftest import RunCli, RunMain

HEAVY = {"agentcli.session", "agentcli.runner", "agentcli.repl.app", "anthropic", "rich", "prompt_toolkit"}


def imported(stderr: str) -> set[str]:
    """The modules named by PYTHONPROFILEIMPORTTIME's report."""
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_help_says_what_a_bare_agentcli_does_and_lists_environment_exit_codes_and_examples(run_cli: RunCli) -> None:
    done = run_cli("--help", env={"PYTHONPROFILEIMPORTTIME": "1"})

    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "`agentcli` with no command starts the interactive REPL" in text
    for variable in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "AGENTCLI_MODEL",
        "AGENTCLI_HOME",
    ):
        assert variable in done.stdout
    assert "Exit codes: 0 done · 1 runtime failure" in text
    for code in ("2 usage error", "130 interrupted (Ctrl-C)", "143 SIGTERM", "129 SIGHUP"):
        assert code in text
    examples = done.stdout.split("Examples:")[1].splitlines()
    assert sum(line.strip().startswith(("agentcli ", "git diff | agentcli")) for line in examples) >= 2
    assert "agentcli.cli" in imported(done.stderr)  # the measurement works
    assert not HEAVY & imported(done.stderr)


def test_run_help_has_its_own_examples(run_main: RunMain) -> None:
    done = run_main("run", "-h")

    assert done.returncode == 0
    assert "--output-format" in done.stdout and "Exit codes:" in done.stdout
    assert 'agentcli run "' in done.stdout.split("Examples:")[1]


def test_version_is_fast(run_cli: RunCli) -> None:
    done = run_cli("--version", env={"PYTHONPROFILEIMPORTTIME": "1"})

    assert done.returncode == 0
    assert done.stdout.startswith("agentcli ")
    assert not HEAVY & imported(done.stderr)


@pytest.mark.parametrize(
    ("args", "wrong", "suggestion"),
    [
        (["--modle", "x"], "--modle", "Did you mean --model?"),
        (["run", "--max-turn", "3", "hi"], "--max-turn", "Did you mean --max-turns?"),
        (["run", "hi", "--outputformat=json"], "--outputformat", "Did you mean --output-format?"),
        (["--allow-tools", "Read"], "--allow-tools", "Did you mean --allowed-tools or --disallowed-tools?"),
    ],
)
def test_a_mistyped_option_gets_the_real_one_suggested(
    args: list[str], wrong: str, suggestion: str, run_main: RunMain
) -> None:
    done = run_main(*args)

    assert done.returncode == 2
    assert f"Error: No such option: {wrong}. {suggestion}" in done.stderr


def test_an_unknown_option_lists_the_real_ones(run_main: RunMain) -> None:
    done = run_main("--bogus")

    assert done.returncode == 2
    message = " ".join(done.stderr.split())
    assert "Error: No such option: --bogus. The options are" in message
    assert "--model" in message and "--permission-mode" in message and "--resume" in message
    assert "agentcli --help describes them" in message
    assert "Possible options" not in message


def test_an_option_value_that_looks_like_an_option_is_left_alone(run_main: RunMain) -> None:
    done = run_main("run", "--append-system-prompt", "--be-brief", "--max-turns", "0", "hi")

    assert done.returncode == 2
    assert "No such option" not in done.stderr  # --be-brief is the prompt's text; --max-turns 0 is what is wrong
    assert "--max-turns" in done.stderr
