"""Start-up paths stay light: --version and --help never import the anthropic SDK."""

from __future__ import annotations

import subprocess
import sys

import pytest


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
