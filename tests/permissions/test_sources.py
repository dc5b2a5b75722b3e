"""Rules and the mode from the three settings files plus the flags: merging, precedence, errors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from agentcli.errors import UsageError
from agentcli.permissions.gate import Gate, build_gate
from agentcli.settings import load_settings
from tests.permissions.helpers import check


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "agentcli-home"
    project = tmp_path / "project"
    home.mkdir()
    (project / ".agentcli").mkdir(parents=True)
    monkeypatch.setenv("AGENTCLI_HOME", str(home))
    return {
        "project_dir": project,
        "user": home / "settings.json",
        "project": project / ".agentcli" / "settings.json",
        "local": project / ".agentcli" / "settings.local.json",
    }


def write(path: Path, permissions: object) -> None:
    path.write_text(json.dumps({"permissions": permissions}))


def gate_for(
    places: dict[str, Path], mode: str | None = None, allowed: Sequence[str] = (), disallowed: Sequence[str] = ()
) -> Gate:
    cwd = places["project_dir"]
    return build_gate(load_settings(cwd), cwd, mode, list(allowed), list(disallowed))


def allowed(gate: Gate, places: dict[str, Path], command: str) -> bool:
    return check(gate, "Bash", {"command": command}, places["project_dir"]).allowed


def test_rules_from_every_file_and_flag_are_merged(places: dict[str, Path]) -> None:
    write(places["user"], {"allow": ["Bash(echo:*)"]})
    write(places["project"], {"allow": ["Bash(npm test)"]})
    write(places["local"], {"allow": ["Bash(ls:*)"]})
    gate = gate_for(places, allowed=["Bash(pwd)"])
    for command in ("echo hi", "npm test", "ls -la", "pwd", "echo a && npm test && ls && pwd"):
        assert allowed(gate, places, command), command
    assert not allowed(gate, places, "touch x")
    sources = {r.text: r.source.label for r in gate.rules.rules}
    assert sources["Bash(echo:*)"] == str(places["user"])
    assert sources["Bash(npm test)"] == str(places["project"])
    assert sources["Bash(ls:*)"] == str(places["local"])
    assert sources["Bash(pwd)"] == "--allowed-tools"


@pytest.mark.parametrize(
    ("deny_in", "allow_in"),
    [("user", "local"), ("local", "user"), ("project", "flag"), ("flag", "local"), ("user", "flag")],
)
def test_deny_anywhere_beats_allow_anywhere(places: dict[str, Path], deny_in: str, allow_in: str) -> None:
    allow, deny = ["Bash(git:*)"], ["Bash(git push:*)"]
    if allow_in != "flag":
        write(places[allow_in], {"allow": allow})
    if deny_in != "flag":
        write(places[deny_in], {"deny": deny})
    gate = gate_for(
        places,
        "bypassPermissions",
        allowed=allow if allow_in == "flag" else (),
        disallowed=deny if deny_in == "flag" else (),
    )
    assert allowed(gate, places, "git status")
    decision = check(gate, "Bash", {"command": "git push origin main"}, places["project_dir"])
    assert not decision.allowed
    where = "--disallowed-tools" if deny_in == "flag" else str(places[deny_in])
    assert 'deny rule "Bash(git push:*)"' in decision.message and where in decision.message


def test_ask_sits_between_deny_and_allow(places: dict[str, Path]) -> None:
    write(places["user"], {"allow": ["Bash"], "deny": ["Bash(rm:*)"]})
    write(places["project"], {"ask": ["Bash(git push:*)", "Bash(rm:*)"]})
    gate = gate_for(places)
    assert allowed(gate, places, "git status")
    asked = check(gate, "Bash", {"command": "git push"}, places["project_dir"])
    assert not asked.allowed
    assert 'ask rule "Bash(git push:*)"' in asked.message and str(places["project"]) in asked.message
    denied = check(gate, "Bash", {"command": "rm x"}, places["project_dir"])
    assert 'deny rule "Bash(rm:*)"' in denied.message


def test_default_mode_most_specific_file_wins_and_the_flag_beats_them(places: dict[str, Path]) -> None:
    write(places["user"], {"defaultMode": "bypassPermissions"})
    write(places["project"], {"defaultMode": "plan"})
    assert gate_for(places).mode == "plan"
    write(places["local"], {"defaultMode": "acceptEdits"})
    assert gate_for(places).mode == "acceptEdits"
    assert gate_for(places, "default").mode == "default"


def test_no_settings_means_default_mode_and_no_rules(places: dict[str, Path]) -> None:
    gate = gate_for(places)
    assert gate.mode == "default" and gate.rules.rules == []


@pytest.mark.parametrize(
    ("permissions", "expected"),
    [
        ({"deny": ["Read", "(ls)"]}, 'Invalid permission rule "(ls)" in {path} (permissions.deny[1]): no tool name'),
        ({"ask": [7]}, 'Invalid permission rule "7" in {path} (permissions.ask[0]): a rule must be a string'),
        ({"deny": "Bash"}, "{path}: permissions.deny must be a list"),  # an allow one is skipped (test_e2e)
        ({"additionalDirectories": "../lib"}, "{path}: permissions.additionalDirectories must be a list"),
        ({"disableBypassPermissionsMode": True}, '{path}: permissions.disableBypassPermissionsMode must be "disable"'),
        ({"defaultMode": "yolo"}, "Unknown permission mode 'yolo' in {path} (permissions.defaultMode)"),
        ({"defaultMode": 1}, "{path}: permissions.defaultMode must be a string"),
        (["Bash"], '{path}: "permissions" must be an object'),
    ],
)
def test_malformed_settings_name_the_file_and_the_rule(
    places: dict[str, Path], permissions: object, expected: str
) -> None:
    write(places["project"], permissions)
    with pytest.raises(UsageError) as raised:
        gate_for(places)
    assert expected.format(path=places["project"]) in str(raised.value)
    assert raised.value.exit_code == 2


def test_malformed_flag_rules_name_the_flag(places: dict[str, Path]) -> None:
    with pytest.raises(UsageError, match=r'"Bash\(\)" in --disallowed-tools: empty parentheses'):
        gate_for(places, disallowed=["Bash()"])
    with pytest.raises(UsageError, match="Unknown permission mode 'nope' in --permission-mode"):
        gate_for(places, "nope")
