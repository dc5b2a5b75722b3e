"""Plugin folders and marketplaces as others write them: read leniently, and never trusted to
reach outside what they are (hostile paths, names, links), each refusal one clear line."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.mcp.config import load_servers
from agentcli.permissions import persist
from agentcli.plugins import store
from agentcli.plugins.enabled import active_plugins
from agentcli.plugins.hooks import plugin_hooks
from agentcli.plugins.manifest import PluginError, read_plugin
from agentcli.settings import load_settings
from agentcli.skills.catalog import BUILT_IN_HOLDER
from agentcli.skills.loader import load_skills
from tests.context.helpers import write
from tests.plugins.helpers import commands, commit_all, make_marketplace, make_plugin


def test_unknown_keys_and_a_missing_folder_are_one_warning_and_the_rest_loads(tmp_path: Path) -> None:
    folder = make_plugin(tmp_path / "p", name="p", commands="./nope/", outputStyles="./styles", somethingNew={"x": 1})

    plugin = read_plugin(folder)

    [unknown, not_done, missing] = plugin.warnings
    assert "skipped somethingNew (not plugin keys agentcli knows)" in unknown
    assert "skipped outputStyles (agentcli does not load these)" in not_done
    assert "skipped commands './nope/': there is no such file or folder" in missing
    assert plugin.commands == (folder.resolve() / "commands",)  # the default folder still counts
    assert load_skills(tmp_path, tmp_path / "h", tmp_path / "c", [plugin]).get("p:greet") is not None


def test_paths_that_lead_out_of_the_plugin_are_skipped(tmp_path: Path, outside: Path) -> None:
    write(outside / "agents" / "evil.md", "---\nname: evil\ndescription: x\n---\nx\n")
    folder = make_plugin(tmp_path / "p", name="p", agents=["../../", str(outside / "agents"), "./linked"])
    (folder / "linked").symlink_to(outside / "agents")

    plugin = read_plugin(folder)

    assert plugin.agents == (folder.resolve() / "agents",)
    assert sum("leads outside the plugin's folder" in w for w in plugin.warnings) == 3


@pytest.mark.parametrize("name", ["../evil", "a/b", "..", ""])
def test_a_plugin_name_that_could_leave_the_store_is_refused(tmp_path: Path, name: str) -> None:
    folder = make_plugin(tmp_path / "p", name=name)

    with pytest.raises(PluginError, match="cannot name a plugin"):
        read_plugin(folder)


def _market(tmp_path: Path, entries: list[dict[str, object]]) -> Path:
    make_plugin(tmp_path / "market" / "plugins" / "good", name="good")
    return make_marketplace(tmp_path / "market", entries)


def _nothing_installed(home: Path) -> None:
    store = home / "plugins"
    assert not (store / "cache").exists()
    assert not (store / "installed_plugins.json").exists()
    assert not list((store / ".staging").iterdir()) if (store / ".staging").exists() else True


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("./plugins/missing", "is not a folder of the marketplace"),
        ("../", "leads outside the marketplace's folder"),
        ("/etc", "leads outside the marketplace's folder"),
        ({"source": "npm", "package": "x"}, "agentcli cannot install a plugin whose source is 'npm'"),
        ({"source": "github", "repo": "../../x"}, 'its "repo" must be owner/name'),
        ({"source": "url", "url": "--upload-pack=touch /tmp/pwned"}, "git repository's address"),
        ({"source": "url", "url": "https://h/x.git", "ref": "--foo"}, "is not a git ref"),
    ],
)
def test_a_marketplace_entry_that_cannot_be_used_installs_nothing(tmp_path: Path, source: object, why: str) -> None:
    market = _market(tmp_path, [{"name": "bad", "source": source}, {"name": "good", "source": "./plugins/good"}])
    home = tmp_path / "home"
    ops, said = commands(tmp_path, home)
    ops.marketplace_add(str(market))

    with pytest.raises(PluginError, match="cannot be installed") as refused:
        ops.install("bad@test-market")

    assert why in str(refused.value) and "\n" not in str(refused.value)
    _nothing_installed(home)
    ops.install("good@test-market")  # the other entries stay usable
    assert "Installed good@test-market" in said[-1]


def test_an_unreachable_git_source_is_one_line_and_leaves_nothing_behind(tmp_path: Path) -> None:
    gone = f"file://{tmp_path}/nowhere.git"
    market = _market(tmp_path, [{"name": "far", "source": {"source": "url", "url": gone}}])
    home = tmp_path / "home"
    ops, _ = commands(tmp_path, home)
    ops.marketplace_add(str(market))

    with pytest.raises(PluginError) as refused:
        ops.install("far@test-market")

    message = str(refused.value)
    assert message.startswith(f"Cannot get {gone}: ") and "\n" not in message
    _nothing_installed(home)
    with pytest.raises(PluginError, match=f"Cannot get {gone}"):
        ops.marketplace_add(gone)
    assert not (home / "plugins" / "marketplaces").exists()


def test_a_symlink_out_of_a_plugin_refuses_the_install(tmp_path: Path, outside: Path) -> None:
    market = _market(tmp_path, [{"name": "good", "source": "./plugins/good"}])
    (market / "plugins" / "good" / "commands" / "secret.md").symlink_to(outside / "secret.txt")
    home = tmp_path / "home"
    ops, _ = commands(tmp_path, home)
    ops.marketplace_add(str(market))

    with pytest.raises(PluginError, match=r"commands/secret.md is a symlink to .*, outside the plugin.s folder"):
        ops.install("good@test-market")

    _nothing_installed(home)


def test_saying_no_or_having_nobody_to_ask_installs_nothing(tmp_path: Path) -> None:
    market = _market(tmp_path, [{"name": "good", "source": "./plugins/good"}])
    home = tmp_path / "home"
    for answer in (False, None):
        ops, said = commands(tmp_path, home, answer)
        ops.marketplace_add(str(market)) if answer is False else None

        with pytest.raises(PluginError, match="Not installed"):
            ops.install("good@test-market")

        assert any("hooks (each runs a program" in line for line in said)  # what it brings was shown
        _nothing_installed(home)


def test_two_plugins_with_the_same_name_and_a_built_in_one_are_resolved_the_same_way_every_time(
    tmp_path: Path,
) -> None:
    first = read_plugin(make_plugin(tmp_path / "a", name="alpha"), marketplace="m")
    second = read_plugin(make_plugin(tmp_path / "b", name="beta"), marketplace="m")
    write(tmp_path / "a" / "commands" / "help.md", "Not the REPL's help.\n")

    catalog = load_skills(tmp_path, tmp_path / "h", tmp_path / "c", [first, second])

    greet = catalog.get("greet")
    assert greet is not None and greet.name == "alpha:greet" and greet.source == "plugin alpha@m"
    assert catalog.get("beta:greet") is not None
    lost = {(skill.name, holder) for skill, holder in catalog.short_names_lost}
    assert ("beta:greet", "alpha:greet") in lost
    assert catalog.get("help") is None and catalog.get("alpha:help") is not None  # /help stays built in
    assert ("alpha:help", BUILT_IN_HOLDER) in lost
    write(tmp_path / ".claude" / "commands" / "greet.md", "The project's own.\n")  # the project's beats both
    again = load_skills(tmp_path, tmp_path / "h", tmp_path / "c", [first, second]).get("greet")
    assert again is not None and again.plugin is None


def test_the_project_recommends_plugins_but_never_enables_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    market = _market(tmp_path, [{"name": "good", "source": "./plugins/good"}])
    home = tmp_path / "home"
    monkeypatch.setenv("AGENTCLI_HOME", str(home))
    project = tmp_path / "project"
    ops, _ = commands(project, home)
    ops.marketplace_add(str(market))
    ops.install("good@test-market")
    (home / "settings.json").write_text("{}")  # installed, but the user has not enabled it
    write(
        project / ".agentcli" / "settings.json",
        json.dumps(
            {
                "enabledPlugins": {"good@test-market": True},
                "extraKnownMarketplaces": {"team": {"source": {"source": "github", "repo": "team/plugins"}}},
            }
        ),
    )

    active = active_plugins(load_settings(project), home)

    assert active.plugins == ()
    assert any("This project recommends the plugin good@test-market" in n for n in active.notices)
    assert any("recommends the marketplace team" in n for n in active.notices)
    ops.enable("good@test-market", "local")  # the user's own yes
    assert [p.key for p in active_plugins(load_settings(project), home).plugins] == ["good@test-market"]


def test_a_plugin_installed_with_claude_code_and_enabled_in_its_settings_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    folder = make_plugin(claude / "plugins" / "cache" / "mkt" / "greeter" / "1.0.0")
    record = {"scope": "user", "installPath": str(folder), "version": "1.0.0"}
    write(
        claude / "plugins" / "installed_plugins.json", json.dumps({"version": 2, "plugins": {"greeter@mkt": [record]}})
    )
    write(claude / "settings.json", json.dumps({"enabledPlugins": {"greeter@mkt": True}}))

    [plugin] = active_plugins(load_settings(tmp_path)).plugins

    assert (plugin.key, plugin.root) == ("greeter@mkt", folder.resolve())


def test_a_plugins_mcp_server_gets_its_root_but_never_a_credential(tmp_path: Path) -> None:
    folder = make_plugin(tmp_path / "p", name="p")
    spec = {"command": "${CLAUDE_PLUGIN_ROOT}/run", "env": {"KEY": "${ANTHROPIC_API_KEY}", "USER_TOKEN": "${TOKEN}"}}
    write(folder / ".mcp.json", json.dumps({"mcpServers": {"s": spec}}))
    plugin = read_plugin(folder, marketplace="m")

    found = load_servers(tmp_path, environ={"ANTHROPIC_API_KEY": "sk-ant-secret-value", "TOKEN": "t"}, plugins=[plugin])

    server = found.servers["plugin:p:s"]
    assert server.command == f"{folder.resolve()}/run" and server.origin == "plugin p@m"
    assert server.env["KEY"] == "" and server.env["USER_TOKEN"] == "t"
    assert server.env["CLAUDE_PLUGIN_ROOT"] == str(folder.resolve())
    assert any("ANTHROPIC_API_KEY" in notice for notice in found.notices)


def test_a_plugins_broken_hook_is_left_out_with_a_notice_and_its_other_hooks_load(tmp_path: Path) -> None:
    folder = make_plugin(tmp_path / "p", name="p")
    broken = {"matcher": "Bash(", "hooks": [{"type": "command", "command": "guard"}]}
    kept = {"matcher": "Write", "hooks": [{"type": "command", "command": "check"}]}
    write(folder / "hooks" / "hooks.json", json.dumps({"hooks": {"PreToolUse": [broken, kept]}}))

    loaded = plugin_hooks([read_plugin(folder, marketplace="m")])

    assert [(hook.matcher, hook.command, hook.origin) for hook in loaded.commands] == [("Write", "check", "plugin p@m")]
    [notice] = loaded.notices
    assert notice.startswith(f"Skipped hooks in {folder / 'hooks' / 'hooks.json'} (plugin p@m): ")
    assert "hooks.PreToolUse[0].matcher 'Bash(' is not a valid regular expression" in notice
    assert "asking you about every tool call instead" in notice
    [guard] = loaded.guards  # fail closed: what it could have refused is asked about
    assert guard.matches("Read") and guard.origin == "plugin p@m"


def test_a_git_url_that_would_run_a_command_is_refused_whatever_the_git_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowing = write(tmp_path / "gitconfig", '[protocol "ext"]\n\tallow = always\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(allowing))
    proof = tmp_path / "ran"
    market = _market(tmp_path, [{"name": "ext", "source": {"source": "url", "url": f"ext::sh -c touch% {proof}"}}])
    ops, _ = commands(tmp_path, tmp_path / "home")
    ops.marketplace_add(str(market))

    with pytest.raises(PluginError, match="Cannot get ext::"):
        ops.install("ext@test-market")

    assert not proof.exists()
    _nothing_installed(tmp_path / "home")


def test_a_plugins_command_knows_its_folder_as_claude_plugin_root(tmp_path: Path) -> None:
    folder = make_plugin(tmp_path / "p", name="p")
    write(
        folder / "commands" / "loop.md",
        '---\nallowed-tools: ["Bash(${CLAUDE_PLUGIN_ROOT}/scripts/setup.sh:*)"]\n---\n'
        '"${CLAUDE_PLUGIN_ROOT}/scripts/setup.sh" $ARGUMENTS\n',
    )
    root = folder.resolve()

    loop = load_skills(tmp_path, tmp_path / "h", tmp_path / "c", [read_plugin(folder, marketplace="m")]).get("loop")

    assert loop is not None
    assert loop.body == f'"{root}/scripts/setup.sh" $ARGUMENTS\n'
    assert loop.allowed_tools == (f"Bash({root}/scripts/setup.sh:*)",)


def test_the_marketplace_entry_names_the_plugin_when_its_manifest_says_otherwise(tmp_path: Path) -> None:
    folder = make_plugin(tmp_path / "p", name="other-name")

    plugin = read_plugin(folder, marketplace="m", name="greeter")

    assert (plugin.key, plugin.label) == ("greeter@m", "plugin greeter@m")
    assert "its manifest names it 'other-name'; it is 'greeter', as the marketplace lists it" in plugin.warnings[0]
    assert load_skills(tmp_path, tmp_path / "h", tmp_path / "c", [plugin]).get("greeter:greet") is not None


def test_a_record_that_cannot_be_written_takes_the_files_back_out(tmp_path: Path) -> None:
    market = _market(tmp_path, [{"name": "good", "source": "./plugins/good"}])
    home = tmp_path / "home"
    ops, _ = commands(tmp_path, home)
    ops.marketplace_add(str(market))
    (home / "plugins" / "installed_plugins.json").mkdir()  # the record cannot replace it

    with pytest.raises(PluginError, match=r"Cannot read .*installed_plugins.json: it is a folder"):
        ops.install("good@test-market")

    assert not list((home / "plugins" / "cache").rglob("plugin.json"))
    assert not list((home / "plugins" / ".staging").iterdir())


def test_every_record_is_read_and_written_under_the_stores_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two agentcli processes installing at once must not lose one record: each read-modify-write
    of the store's files happens while the lock other processes take is held."""
    held: list[Path] = []
    outside_lock: list[str] = []
    real_lock, real_write = persist.locked_beside, persist.write_json_atomically

    @contextlib.contextmanager
    def recording_lock(path: Path) -> Iterator[None]:
        with real_lock(path):
            held.append(path)
            try:
                yield
            finally:
                held.remove(path)

    def checked_write(path: Path, data: object) -> None:
        if path not in held:
            outside_lock.append(path.name)
        real_write(path, data)

    monkeypatch.setattr(store, "locked_beside", recording_lock)
    monkeypatch.setattr(store, "write_json_atomically", checked_write)
    market = _market(tmp_path, [{"name": "good", "source": "./plugins/good"}])
    ops, _ = commands(tmp_path, tmp_path / "home")

    ops.marketplace_add(str(market))
    ops.install("good@test-market")
    ops.uninstall("good@test-market")
    ops.marketplace_remove("test-market")

    assert outside_lock == []
    records = json.loads((tmp_path / "home" / "plugins" / "installed_plugins.json").read_text())
    assert records == {"version": 2, "plugins": {}}


def test_claude_codes_marketplaces_are_known_and_left_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    market = _market(tmp_path, [{"name": "good", "source": "./plugins/good"}])
    record = {"source": {"source": "github", "repo": "team/market"}, "installLocation": str(market)}
    write(claude / "plugins" / "known_marketplaces.json", json.dumps({"test-market": record}))
    home = tmp_path / "home"
    ops, said = commands(tmp_path, home)

    ops.marketplace_list()
    ops.install("good@test-market")

    assert said[0] == "test-market · team/market · 1 plugins (Claude Code's)"
    assert said[-1].startswith("Installed good@test-market")
    for change in (ops.marketplace_update, ops.marketplace_remove):
        with pytest.raises(PluginError, match="is Claude Code's: update or remove it with Claude Code"):
            change("test-market")
    assert (market / ".claude-plugin" / "marketplace.json").exists()


def test_a_plugin_folder_or_git_url_installs_directly_as_name_at_local(tmp_path: Path) -> None:
    folder = make_plugin(tmp_path / "src" / "greeter")
    work = make_plugin(tmp_path / "repo", name="waver")
    commit_all(work)
    home = tmp_path / "home"
    ops, said = commands(tmp_path, home)

    ops.install(str(folder))
    ops.install(f"file://{work}")

    assert said[-1].startswith("Installed waver@local (pin ")
    assert sorted(ops.store.installed()) == ["greeter@local", "waver@local"]
    write(folder / "commands" / "greet.md", "Changed.\n")
    ops.update("greeter@local")
    assert said[-1].startswith("Updated greeter@local: pin ")
    assert (ops.store.installed()["greeter@local"].path / "commands" / "greet.md").read_text() == "Changed.\n"


@pytest.mark.parametrize(
    ("manifest", "why"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "must hold a JSON object, not list"),
        ('{"version": "1.0.0"}', 'has no "name"'),
        ('{"name": "good", "commands": 7}', '"commands" must be a path'),
    ],
)
def test_a_manifest_that_cannot_be_used_installs_nothing(tmp_path: Path, manifest: str, why: str) -> None:
    market = _market(tmp_path, [{"name": "good", "source": "./plugins/good"}])
    write(market / "plugins" / "good" / ".claude-plugin" / "plugin.json", manifest)
    home = tmp_path / "home"
    ops, _ = commands(tmp_path, home)
    ops.marketplace_add(str(market))

    with pytest.raises(PluginError, match=why) as refused:
        ops.install("good@test-market")

    assert "\n" not in str(refused.value)
    _nothing_installed(home)
