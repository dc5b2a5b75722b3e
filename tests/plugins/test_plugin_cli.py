"""`agentcli plugin …` from the command line (in-process, `run_main`): exit codes, what is
printed, GitHub's owner/repo form, updates moving the pin, a marketplace file at a URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import RunMain
from tests.context.helpers import write
from tests.plugins.helpers import bare_remote, commit_all, git, make_plugin, market_with_greeter
from tests.web_pages import PageServer, Route


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


def _market_file(git_url: str) -> str:
    """A marketplace published as a file: one plugin from a git repository, one named by folder."""
    return json.dumps(
        {
            "name": "web-market",
            "owner": {"name": "Tests"},
            "plugins": [
                {"name": "greeter", "source": {"source": "url", "url": git_url}},
                {"name": "local-one", "source": "./plugins/local-one"},
            ],
        }
    )


def test_a_marketplace_file_at_a_url_is_added_installed_from_and_updated(
    run_main: RunMain, home: Path, tmp_path: Path
) -> None:
    plugin = make_plugin(tmp_path / "greeter-src")
    commit_all(plugin)
    remote = bare_remote(plugin, tmp_path / "greeter.git")
    with PageServer() as pages:
        pages.page("/marketplace.json", _market_file(f"file://{remote}"), "application/json")
        url = pages.url("/marketplace.json")

        added = run_main("plugin", "marketplace", "add", url)
        assert added.returncode == 0, added.stderr
        assert "Added the marketplace web-market (2 plugins)" in added.stdout
        installed = run_main("plugin", "install", "greeter@web-market", "--yes")
        assert installed.returncode == 0, installed.stderr
        [pinned] = (home / ".agentcli" / "plugins" / "cache" / "web-market" / "greeter").iterdir()
        assert (pinned / "commands" / "greet.md").is_file()
        folder_entry = run_main("plugin", "install", "local-one@web-market", "--yes")
        assert folder_entry.returncode == 1
        assert "a marketplace fetched from a URL has none" in folder_entry.stderr
        assert not (home / ".agentcli" / "plugins" / "cache" / "web-market" / "local-one").exists()

        pages.page("/marketplace.json", _market_file(f"file://{remote}").replace('"local-one"', '"other"'))
        updated = run_main("plugin", "marketplace", "update", "web-market")
        assert updated.returncode == 0, updated.stderr
        listed = run_main("plugin", "marketplace", "list").stdout
        assert f"web-market · {url} · 2 plugins" in listed
        names = [seen.path for seen in pages.requests]
        assert names == ["/marketplace.json", "/marketplace.json"]  # fetched when added and when updated
    store = home / ".agentcli" / "plugins" / "marketplaces" / "web-market" / ".claude-plugin" / "marketplace.json"
    assert '"other"' in store.read_text()


@pytest.mark.parametrize(
    ("setup", "why"),
    [
        ("missing", "the server answered 404"),
        ("elsewhere", "redirects to http://other.test/marketplace.json"),
        ("huge", "larger than 5 MB"),
    ],
)
def test_a_marketplace_url_that_cannot_be_used_adds_nothing(
    run_main: RunMain, home: Path, setup: str, why: str
) -> None:
    with PageServer() as pages:
        if setup == "missing":
            pages.page("/marketplace.json", "no such file", "text/plain", status=404)
        elif setup == "elsewhere":
            pages.redirect("/marketplace.json", "http://other.test/marketplace.json")
        else:
            pages.routes["/marketplace.json"] = Route(content_type="application/json", endless_bytes=6 * 1024 * 1024)

        added = run_main("plugin", "marketplace", "add", pages.url("/marketplace.json"))

    assert added.returncode == 1
    assert why in added.stderr and "Traceback" not in added.stderr
    assert len(added.stderr.strip().splitlines()) == 1
    assert not (home / ".agentcli" / "plugins" / "known_marketplaces.json").exists()
    assert list((home / ".agentcli" / "plugins" / "marketplaces").glob("*")) == []


def test_a_marketplace_url_over_plain_http_to_another_machine_is_refused_before_any_request(
    run_main: RunMain, home: Path
) -> None:
    added = run_main("plugin", "marketplace", "add", "http://plugins.example/marketplace.json")

    assert added.returncode == 1
    assert "is plain http" in added.stderr and "give its https:// address" in added.stderr
    assert not (home / ".agentcli" / "plugins" / "known_marketplaces.json").exists()


def test_installing_a_marketplace_url_as_a_plugin_says_how_to_add_it(run_main: RunMain, home: Path) -> None:
    ran = run_main("plugin", "install", "https://plugins.example/marketplace.json", "--yes")

    assert ran.returncode == 1
    assert "is a marketplace file, not a plugin" in ran.stderr
    assert "agentcli plugin marketplace add https://plugins.example/marketplace.json" in ran.stderr
