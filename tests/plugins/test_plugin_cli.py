"""`agentcli plugin …` from the command line (in-process, `run_main`): exit codes, what is
printed, GitHub's owner/repo form, updates moving the pin."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import RunMain
from tests.context.helpers import write
from tests.plugins.helpers import bare_remote, commit_all, git, market_with_greeter


def test_install_asks_and_without_a_terminal_or_yes_installs_nothing(
    run_main: RunMain, home: Path, tmp_path: Path
) -> None:
    _, remote = market_with_greeter(tmp_path)
    added = run_main("plugin", "marketplace", "add", str(remote))
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("Added the marketplace test-market (1 plugins)")

    refused = run_main("plugin", "install", "greeter@test-market")

    assert refused.returncode == 1
    assert "hooks (each runs a program with your permissions):" in refused.stdout
    assert refused.stderr.strip().splitlines() == [
        "Error: Not installed: there is nobody to ask here (no terminal); pass --yes if you have read what it brings."
    ]
    assert not (home / ".agentcli" / "plugins" / "cache").exists()

    done = run_main("plugin", "install", "greeter@test-market", "--yes")
    assert done.returncode == 0, done.stderr
    listed = run_main("plugin", "list")
    assert listed.stdout.startswith("greeter@test-market 1.0.0 · enabled · pin ")
    servers = run_main("mcp", "list")
    assert (
        "plugin:greeter:demo (mcp__plugin_greeter_demo) · plugin greeter@test-market · stdio · connected"
        in servers.stdout
    )
    settings = json.loads((home / ".agentcli" / "settings.json").read_text())
    assert settings["enabledPlugins"] == {"greeter@test-market": True}

    assert run_main("plugin", "disable", "greeter@test-market").returncode == 0
    assert "· disabled ·" in run_main("plugin", "list").stdout
    gone = run_main("plugin", "uninstall", "greeter@test-market")
    assert gone.returncode == 0 and not list((home / ".agentcli" / "plugins" / "cache").rglob("plugin.json"))
    assert run_main("plugin", "install", "nothing@test-market", "--yes").returncode == 1
    assert run_main("plugin", "install", "--scope", "everywhere", "x@y").returncode == 2


def test_the_owner_repo_form_is_github_and_update_moves_the_pin(run_main: RunMain, home: Path, tmp_path: Path) -> None:
    work, _ = market_with_greeter(tmp_path)
    remote = bare_remote(work, tmp_path / "github" / "team" / "tools.git")
    gitconfig = write(tmp_path / "gitconfig", f'[url "file://{tmp_path}/github/"]\n\tinsteadOf = https://github.com/\n')
    env = {"GIT_CONFIG_GLOBAL": str(gitconfig)}

    added = run_main("plugin", "marketplace", "add", "team/tools", env=env)
    assert added.returncode == 0, added.stderr
    assert "test-market · team/tools · 1 plugins" in run_main("plugin", "marketplace", "list").stdout
    assert run_main("plugin", "install", "greeter", "--yes", env=env).returncode == 0
    [first] = (home / ".agentcli" / "plugins" / "cache" / "test-market" / "greeter").iterdir()

    write(work / "plugins" / "greeter" / "commands" / "greet.md", "Say goodbye to $ARGUMENTS.\n")
    commit_all(work, "goodbye")
    git(work, "push", "-q", str(remote), "main")
    current = run_main("plugin", "update", "greeter@test-market", env=env)

    assert current.returncode == 1  # asked, and nobody to answer: the pin stays
    assert first.is_dir()
    updated = run_main("plugin", "update", "greeter@test-market", "--yes", env=env)
    assert updated.returncode == 0, updated.stderr
    assert f"Updated greeter@test-market: pin {first.name[:12]} → " in updated.stdout
    [second] = (home / ".agentcli" / "plugins" / "cache" / "test-market" / "greeter").iterdir()
    assert second != first and (second / "commands" / "greet.md").read_text() == "Say goodbye to $ARGUMENTS.\n"
    again = run_main("plugin", "update", "--yes", env=env)
    assert "greeter@test-market is up to date" in again.stdout


def test_a_marketplace_the_settings_suggest_is_added_when_you_install_from_it(
    run_main: RunMain, project: Path, home: Path, tmp_path: Path
) -> None:
    _, remote = market_with_greeter(tmp_path)
    suggested = {"test-market": {"source": {"source": "git", "url": f"file://{remote}"}}}
    write(project / ".agentcli" / "settings.json", json.dumps({"extraKnownMarketplaces": suggested}))

    listed = run_main("plugin", "marketplace", "list")
    assert f"test-market · file://{remote} · not added" in listed.stdout
    assert not (home / ".agentcli" / "plugins").exists()  # suggesting adds nothing

    done = run_main("plugin", "install", "greeter@test-market", "--yes")

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Added the marketplace test-market from file://{remote} (extraKnownMarketplaces).")
    assert "Installed greeter@test-market" in done.stdout


def test_a_settings_file_agentcli_cannot_use_is_a_usage_error_not_a_traceback(run_main: RunMain, project: Path) -> None:
    write(project / ".agentcli" / "settings.json", '{"enabledPlugins": ["greeter@test-market"]}')

    done = run_main("plugin", "list")

    assert done.returncode == 2
    assert done.stderr.strip().endswith("enabledPlugins must be an object, not a list.")
    assert "Traceback" not in done.stderr
