"""README's install commands are the scripts CI runs, and set-up refuses a Python that is too old."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def install_section() -> str:
    readme = (REPO / "README.md").read_text()
    return readme.split("## Install and test\n", 1)[1].split("\n## ", 1)[0]


def test_readme_installs_with_the_script_the_tests_use() -> None:
    section = install_section()
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]

    assert commands == ["scripts/setup", "scripts/test"]
    test_script = (REPO / "scripts" / "test").read_text()
    assert re.search(r"^scripts/setup$", test_script, re.MULTILINE)  # one way to install, used by both
    assert "pip install" not in test_script
    assert "pip install" in (REPO / "scripts" / "setup").read_text()


def test_readme_states_the_python_version_pyproject_requires() -> None:
    required = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    version = required.removeprefix(">=")

    assert f"Python {version} or newer" in install_section()
    assert f"Python {version}+" in (REPO / "CLAUDE.md").read_text()


def test_readme_says_how_to_put_agentcli_on_path() -> None:
    section = install_section()

    assert "source .venv/bin/activate" in section
    assert "pipx install ." in section and "uv tool install ." in section


def test_setup_refuses_a_python_that_is_too_old(tmp_path: Path) -> None:
    shutil.copytree(REPO / "scripts", tmp_path / "scripts")
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    old_python = tmp_path / "python3.10"
    old_python.write_text('#!/bin/sh\n[ "$1" = --version ] && { echo "Python 3.10.12"; exit 0; }\nexit 1\n')
    old_python.chmod(0o755)

    done = subprocess.run(
        [str(tmp_path / "scripts" / "setup")],
        env={"PATH": "/usr/bin:/bin", "PYTHON": str(old_python)},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 1
    assert f"agentcli needs Python 3.11 or newer; {old_python} is Python 3.10.12." in done.stderr
    assert not (tmp_path / ".venv").exists()
