"""Start-up paths stay light: --version and --help never import the anthropic SDK, `run` reads its
options without the command-line framework, and WebFetch's fetching and converting wait for a fetch."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import RunCli
from tests.fake_anthropic import FakeAnthropic, reply, text


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_flag_does_not_import_the_sdk(flag: str) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agentcli", flag], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0
    imported = [line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line]
    assert "anthropic" not in imported
    assert "agentcli.cli" in imported  # the measurement really covered our entry point


def test_version_prints_the_version() -> None:
    done = subprocess.run([sys.executable, "-m", "agentcli", "--version"], capture_output=True, text=True, timeout=30)
    assert done.stdout.startswith("agentcli ")


FRAMEWORK = {"typer", "click", "pydantic"}


def imported_modules(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_version_is_answered_before_the_command_line_framework_loads() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agentcli", "--version"], capture_output=True, text=True, timeout=30
    )

    assert done.stdout.startswith("agentcli ")
    assert "agentcli.cli" in imported_modules(done.stderr)
    assert not FRAMEWORK & imported_modules(done.stderr)


@pytest.mark.parametrize(
    "args",
    [
        ("run", "hello"),
        ("-p", "hello"),
        ("run", "--model", "m", "--permission-mode=plan", "--allowed-tools", "Read", "--max-turns", "3", "-c", "hi"),
        ("--output-format", "json", "--verbose", "-p", "hello", "--disallowed-tools", "Bash"),
    ],
)
def test_run_and_print_read_their_options_without_typer_or_pydantic(args: tuple[str, ...], run_cli: RunCli) -> None:
    """Without an API key the command stops right after reading its options (exit 1)."""
    done = run_cli(*args, env={"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "", "PYTHONPROFILEIMPORTTIME": "1"})

    assert done.returncode == 1
    assert "No API key" in done.stderr
    assert "agentcli.credentials" in imported_modules(done.stderr)  # the command ran
    assert not FRAMEWORK & imported_modules(done.stderr)


FETCHING = {"agentcli.web.fetch", "agentcli.web.convert", "html_to_markdown", "pypdfium2"}
"""What WebFetch needs only once it fetches: its HTTP client side, the converter and the PDF reader."""


def test_a_run_offers_webfetch_without_importing_what_fetching_needs(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("hello")))

    done = run_cli("run", "hi", env={"PYTHONPROFILEIMPORTTIME": "1"})

    assert done.returncode == 0, done.stderr
    assert "WebFetch" in [tool["name"] for tool in fake_api.requests[0].body["tools"]]
    assert "agentcli.tools.web_fetch" in imported_modules(done.stderr)
    assert not FETCHING & imported_modules(done.stderr)
