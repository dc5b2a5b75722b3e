"""The `sandbox` settings (a repository may only tighten them), the question about a new host
(and its "don't ask again", saved to the local settings), and what /sandbox shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.errors import UsageError
from agentcli.permissions.gate import Gate
from agentcli.permissions.prompt import Answer, PermissionRequest
from agentcli.session.sandbox import SandboxStatus, describe
from agentcli.settings import load_settings
from agentcli.workspace.sandbox_settings import SandboxSettings, sandbox_settings
from agentcli.workspace.sandboxed import SandboxedWorkspace
from tests.sandbox_support import require_sandbox


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_the_user_s_files_set_everything_and_the_repository_s_only_tightens(
    in_process_env: None, home: Path, project: Path
) -> None:
    write(
        home / ".agentcli" / "settings.json",
        {"sandbox": {"network": {"allowedDomains": ["pypi.org"]}, "filesystem": {"denyRead": ["~/private"]}}},
    )
    write(project / ".agentcli" / "settings.local.json", {"sandbox": {"excludedCommands": ["docker"]}})
    write(
        project / ".agentcli" / "settings.json",
        {
            "sandbox": {
                "enabled": True,
                "autoAllowBashIfSandboxed": False,
                "network": {"allowedDomains": ["evil.example"], "allowAllUnixSockets": True},
                "filesystem": {"denyWrite": ["build"], "allowWrite": ["/"]},
            }
        },
    )
    notices: list[str] = []

    merged = sandbox_settings(load_settings(project), None, notices.append)

    assert merged.enabled and merged.enabled_by == str(project / ".agentcli" / "settings.json")
    assert merged.auto_allow is False
    assert merged.allowed_domains == ("pypi.org",)
    assert merged.excluded_commands == ("docker",)
    assert merged.deny_read == ("~/private",) and merged.deny_write == ("build",)
    assert merged.allow_write == () and merged.allow_unix_sockets is False
    assert [n.split(":")[0] for n in notices] == [
        f"Ignored sandbox.network.allowedDomains in {project / '.agentcli' / 'settings.json'}",
        f"Ignored sandbox.network.allowAllUnixSockets in {project / '.agentcli' / 'settings.json'}",
        f"Ignored sandbox.filesystem.allowWrite in {project / '.agentcli' / 'settings.json'}",
    ]


def test_the_command_line_decides_for_one_run_and_a_wrong_value_names_its_file(
    in_process_env: None, home: Path, project: Path
) -> None:
    write(home / ".agentcli" / "settings.json", {"sandbox": {"enabled": True}})
    assert sandbox_settings(load_settings(project), False).enabled is False
    assert sandbox_settings(load_settings(project), False).enabled_by == "--no-sandbox"

    write(project / ".agentcli" / "settings.local.json", {"sandbox": {"enabled": "yes"}})
    with pytest.raises(UsageError, match=r"Setting sandbox.enabled in .*settings.local.json must be true or false"):
        sandbox_settings(load_settings(project))


def test_a_yes_for_good_to_a_new_host_is_saved_to_the_local_settings(project: Path) -> None:
    asked: list[PermissionRequest] = []

    def prompter(request: PermissionRequest) -> Answer:
        asked.append(request)
        return Answer("always") if request.subject.startswith("pypi.org") else Answer("no")

    local = project / ".agentcli" / "settings.local.json"
    gate = Gate(prompter=prompter, local_settings=local)

    assert gate.ask_about_host("pypi.org", 443) is True
    assert gate.ask_about_host("evil.example", 443) is False
    assert json.loads(local.read_text()) == {"sandbox": {"network": {"allowedDomains": ["pypi.org"]}}}
    assert asked[0].title == "Network access from the sandbox" and asked[0].subject == "pypi.org:443"
    assert Gate().ask_about_host("pypi.org", 443) is None  # agentcli run: nobody to ask
    assert Gate(mode="bypassPermissions").ask_about_host("pypi.org", 443) is True


def test_slash_sandbox_says_how_to_turn_it_on_and_what_it_allows_once_on(project: Path, outside: Path) -> None:
    require_sandbox()
    off = describe(SandboxStatus(SandboxSettings()))
    assert off[0].startswith("The sandbox is off")
    assert off[1].startswith('To turn it on: "sandbox": {"enabled": true}')

    unavailable = describe(SandboxStatus(SandboxSettings(enabled=True, enabled_by="--sandbox"), unavailable="no bwrap"))
    assert unavailable[1] == "It was asked for (--sandbox) but cannot start: no bwrap."

    settings = SandboxSettings(enabled=True, allowed_domains=("pypi.org",), enabled_by="--sandbox")
    (outside / ".ssh").mkdir()
    with SandboxedWorkspace(project, settings, home=outside) as workspace:
        on = describe(SandboxStatus(settings, workspace))

    assert on[0].startswith("The sandbox is on (--sandbox): the agent's commands run in it (bubblewrap)")
    assert f"Writable: {project.resolve()} and a private /tmp." in on
    assert "Hidden: " in "\n".join(on) and ".ssh" in "\n".join(on)
    assert any(line.startswith("Network: only through agentcli's proxy, to pypi.org;") for line in on)
    assert on[-1] == "The model cannot leave it (sandbox.allowUnsandboxedCommands is off)."


def test_only_the_user_s_own_files_name_unix_sockets_commands_may_reach(
    in_process_env: None, home: Path, project: Path
) -> None:
    write(home / ".agentcli" / "settings.json", {"sandbox": {"network": {"allowUnixSockets": ["/run/docker.sock"]}}})
    write(project / ".agentcli" / "settings.local.json", {"sandbox": {"network": {"allowUnixSockets": ["~/a.sock"]}}})
    write(project / ".agentcli" / "settings.json", {"sandbox": {"network": {"allowUnixSockets": ["/run/evil.sock"]}}})
    notices: list[str] = []

    merged = sandbox_settings(load_settings(project), None, notices.append)

    assert merged.unix_sockets == ("/run/docker.sock", "~/a.sock")
    assert notices == [
        f"Ignored sandbox.network.allowUnixSockets in {project / '.agentcli' / 'settings.json'}: it would open "
        "Unix sockets to commands, which only your own settings (.agentcli/settings.local.json or "
        "$AGENTCLI_HOME/settings.json) may do, never the repository's."
    ]
