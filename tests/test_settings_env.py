"""The `env` setting: a gateway configured in your own settings, as Claude Code users do, reaches
the provider; its token never reaches a child process or the transcript; a checked-in file's
`env` is never applied."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.providers import choose
from agentcli.settings import load_settings
from agentcli.settings_env import settings_environment
from tests.conftest import RunCli, RunMain
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.mcp.helpers import write_config
from tests.mcp.recording import recorded, recorder
from tests.session_helpers import transcript_files
from tests.waiting import wait_until

TOKEN = "gateway-token-0123456789-THE-SECRET"
GATEWAY_MODEL = "gateway-model-1"


@pytest.fixture
def gateway() -> Iterator[FakeAnthropic]:
    """A second Anthropic-compatible server, the one the settings' `env` names."""
    with FakeAnthropic(api_key=TOKEN) as fake:
        yield fake


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def gateway_env(gateway: FakeAnthropic) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": gateway.url,
        "ANTHROPIC_AUTH_TOKEN": TOKEN,
        "ANTHROPIC_MODEL": GATEWAY_MODEL,
        "GATEWAY_REGION": "eu-1",
    }


def bash_output(api: FakeAnthropic, request: int) -> str:
    [result] = [b for b in api.requests[request].body["messages"][-1]["content"] if b["type"] == "tool_result"]
    return str(result["content"])


def assert_token_nowhere(home: Path, project: Path, stdout: str, stderr: str) -> None:
    for path in transcript_files(home, project):
        assert TOKEN not in path.read_text()
    assert TOKEN not in stdout and TOKEN not in stderr


def test_a_gateway_in_the_users_claude_settings_gets_the_requests_and_bash_not_the_token(
    run_main: RunMain,
    fake_api: FakeAnthropic,
    gateway: FakeAnthropic,
    home: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")  # the token of `env` is the only credential
    write_json(home / ".claude" / "settings.json", {"env": gateway_env(gateway)})
    gateway.script(reply(tool_use("Bash", {"command": "env"}, id="toolu_1")), reply(text("Done.")))

    done = run_main("run", "show the environment", "--allowed-tools", "Bash")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Done.\n"
    assert fake_api.requests == []  # the file's ANTHROPIC_BASE_URL beats the shell's
    first = gateway.requests[0]
    assert first.headers["authorization"] == f"Bearer {TOKEN}"
    assert first.body["model"] == GATEWAY_MODEL  # ANTHROPIC_MODEL, as Claude Code reads it
    listed = bash_output(gateway, 1)
    assert "GATEWAY_REGION=eu-1" in listed and f"ANTHROPIC_BASE_URL={gateway.url}" in listed
    assert "ANTHROPIC_AUTH_TOKEN" not in listed and TOKEN not in listed
    assert_token_nowhere(home, project, done.stdout, done.stderr)


def test_the_shells_other_key_is_not_sent_to_the_gateway_env_names(
    run_main: RunMain, gateway: FakeAnthropic, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_key = "sk-ant-exported-for-anthropic-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", real_key)
    write_json(home / ".claude" / "settings.json", {"env": gateway_env(gateway)})
    (project / "notes.txt").write_text(f"key: {real_key}\n")
    gateway.script(reply(tool_use("Read", {"file_path": "notes.txt"}, id="toolu_1")), reply(text("Done.")))

    done = run_main("run", "go")

    assert done.returncode == 0, done.stderr
    assert [r.headers["authorization"] for r in gateway.requests] == [f"Bearer {TOKEN}"] * 2
    assert all(real_key not in json.dumps(r.headers) + r.raw.decode() for r in gateway.requests)  # nor redaction


def test_the_env_of_an_untracked_local_file_applies_in_a_real_process(
    run_cli: RunCli, fake_api: FakeAnthropic, gateway: FakeAnthropic, home: Path, project: Path
) -> None:
    write_json(project / ".claude" / "settings.local.json", {"env": gateway_env(gateway)})
    command = 'echo "token=${ANTHROPIC_AUTH_TOKEN:-none} region=$GATEWAY_REGION"'
    gateway.script(reply(tool_use("Bash", {"command": command}, id="toolu_1")), reply(text("Done.")))

    done = run_cli("run", "go", "--allowed-tools", "Bash", env={"ANTHROPIC_API_KEY": ""})

    assert done.returncode == 0, done.stderr
    assert fake_api.requests == []
    assert gateway.requests[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert bash_output(gateway, 1).startswith("token=none region=eu-1\n")
    assert_token_nowhere(home, project, done.stdout, done.stderr)


def test_a_stdio_mcp_server_gets_the_env_without_the_token(
    run_main: RunMain, fake_api: FakeAnthropic, home: Path, tmp_path: Path
) -> None:
    write_json(home / ".claude" / "settings.json", {"env": {"GATEWAY_REGION": "eu-1", "ANTHROPIC_AUTH_TOKEN": TOKEN}})
    out = tmp_path / "server-got.json"
    write_config(home / ".agentcli" / "mcp.json", recording=recorder(tmp_path, out))
    fake_api.api_key = TOKEN  # the token of `env` is the one sent
    fake_api.script(reply(text("Done.")))

    done = run_main("run", "go")
    wait_until(out.exists, "the server being started")

    assert done.returncode == 0, done.stderr
    got = recorded(out)["env"]
    assert got["GATEWAY_REGION"] == "eu-1"
    assert "ANTHROPIC_AUTH_TOKEN" not in got and TOKEN not in json.dumps(got)


@pytest.mark.parametrize(
    "where", [".claude/settings.json", ".agentcli/settings.json", "tracked .claude/settings.local.json"]
)
def test_a_checked_in_env_is_not_applied(
    run_main: RunMain, fake_api: FakeAnthropic, gateway: FakeAnthropic, project: Path, where: str
) -> None:
    name = where.removeprefix("tracked ")
    write_json(project / name, {"env": {"ANTHROPIC_BASE_URL": gateway.url, "PATH": "/repository/bin"}})
    if where.startswith("tracked "):
        subprocess.run(["git", "add", "-f", name], cwd=project, check=True)
    fake_api.script(reply(tool_use("Bash", {"command": 'echo "path=$PATH"'}, id="toolu_1")), reply(text("Done.")))

    done = run_main("run", "go", "--allowed-tools", "Bash")

    assert done.returncode == 0, done.stderr
    assert gateway.requests == []
    assert len(fake_api.requests) == 2
    assert "/repository/bin" not in bash_output(fake_api, 1)
    [said] = [line for line in done.stderr.splitlines() if "env" in line and name in line]
    if where.startswith("tracked "):
        assert "Ignored there: env." in said and f"git rm --cached {name}" in said
    else:  # where to put it instead
        assert said.startswith(f"! Ignored env in {project / name}")
        assert ".agentcli/settings.local.json" in said and "~/.claude/settings.json" in said


def test_files_merge_variable_by_variable_and_bad_entries_are_skipped_by_name(
    in_process_env: None, home: Path, project: Path
) -> None:
    write_json(home / ".claude" / "settings.json", {"env": {"A": "claude-user", "B": "claude-user", "PORT": 8080}})
    write_json(home / ".agentcli" / "settings.json", {"env": {"B": "agentcli-user", "C": None}})
    write_json(
        project / ".agentcli" / "settings.local.json",
        {"env": {"A": "local", "AGENTCLI_HOME": "/elsewhere", "X=Y": "1", "D": {"not": "text"}}},
    )

    found = settings_environment(load_settings(project))

    assert found.variables == {"A": "local", "B": "agentcli-user", "PORT": "8080"}
    assert len(found.notices) == 2
    assert "C" in found.notices[0] and str(home / ".agentcli" / "settings.json") in found.notices[0]
    assert "AGENTCLI_HOME, X=Y, D" in found.notices[1]
    assert "/elsewhere" not in found.notices[1] and "not" not in found.notices[1].split("(")[0]


@pytest.mark.parametrize(
    ("model", "environ", "model_setting", "expected"),
    [
        (None, {"ANTHROPIC_MODEL": "glm-4.6"}, None, ("anthropic", "glm-4.6")),
        (None, {"ANTHROPIC_MODEL": "glm-4.6"}, "claude-haiku-5-5", ("anthropic", "glm-4.6")),
        ("claude-opus-5-5", {"ANTHROPIC_MODEL": "glm-4.6"}, None, ("anthropic", "claude-opus-5-5")),
        (
            None,
            {"ANTHROPIC_MODEL": "glm-4.6", "AGENTCLI_MODEL": "claude-opus-5-5"},
            None,
            ("anthropic", "claude-opus-5-5"),
        ),
        (None, {"ANTHROPIC_MODEL": "glm-4.6"}, "openai:gpt-5", ("openai", "gpt-5")),
        (None, {"ANTHROPIC_MODEL": "glm-4.6", "AGENTCLI_PROVIDER": "gemini"}, None, ("gemini", "gemini-2.5-flash")),
    ],
)
def test_anthropic_model_names_only_anthropics_model_and_only_when_nothing_closer_does(
    model: str | None, environ: dict[str, str], model_setting: str | None, expected: tuple[str, str]
) -> None:
    assert choose(model, None, model_setting=model_setting, environ=environ) == expected
