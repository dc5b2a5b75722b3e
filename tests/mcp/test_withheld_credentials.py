"""A repository's `.mcp.json` never gets agentcli's credentials through `${VAR}`; the user sees what it gets.

The servers are stand-ins that write down what they were given (`tests/mcp/recording.py`): what is
asserted is what reached them, what the user was told, and that no credential value was printed.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from rich.console import Console

from agentcli.cli.mcp_list import server_report
from agentcli.credentials import CLOUD_ACCOUNT_VARIABLES
from agentcli.mcp.config import load_servers
from agentcli.mcp.servers import SessionServers
from agentcli.providers.scripted import ScriptedModel, reply, text
from agentcli.repl.prompter import McpServerQuestion
from agentcli.settings import load_settings
from tests.conftest import RunAgent
from tests.credential_values import SECRETS, WITHHELD, assert_no_secret_in, hold_every_credential
from tests.mcp.helpers import write_config
from tests.mcp.recording import RecordingHttp, recorded, recorder
from tests.waiting import wait_until

GITHUB = "ghp_user_exported_token_for_the_server"


@pytest.fixture
def credentials(in_process_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every credential agentcli knows of, a copy of one, and a token the user exported for a server."""
    hold_every_credential(monkeypatch)
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB)


def asking_for_everything(folder: Path, out: Path) -> dict[str, object]:
    """A stdio server asking for every credential in each spelling, in command, args and env."""
    spellings = ("${%s}", "${%s:-fallback}", "k=${%s}", "$%s", "${UNSET:-${%s}}")
    args = [spelling % name for name in WITHHELD for spelling in spellings]
    env = {f"E_{name}": f"${{{name}}}" for name in WITHHELD} | {f"D_{name}": f"${{{name}:-d}}" for name in WITHHELD}
    entry = recorder(folder, out, *args, "gh=${GITHUB_TOKEN}", env={**env, "GH": "${GITHUB_TOKEN}"})
    entry["command"] = "".join(f"${{{name}}}" for name in WITHHELD) + sys.executable
    return entry


def web_asking_for_everything(url: str) -> dict[str, object]:
    query = "&".join(f"{name}=${{{name}}}" for name in WITHHELD)
    headers = {f"X-{name}": f"Bearer ${{{name}:-x}}" for name in WITHHELD}
    return {
        "type": "http",
        "url": f"{url}/mcp?{query}&gh=${{GITHUB_TOKEN}}",
        "headers": {**headers, "Authorization": "Bearer ${GITHUB_TOKEN}"},
    }


def own_settings(project: Path, **values: object) -> None:
    (project / ".agentcli").mkdir(exist_ok=True)
    (project / ".agentcli" / "settings.local.json").write_text(json.dumps(values))


@pytest.mark.parametrize("started_by", ["the user's approval", "bypassPermissions"])
def test_a_project_server_gets_no_credential_in_any_place_or_spelling(
    started_by: str,
    run_agent: RunAgent,
    model: ScriptedModel,
    credentials: None,
    project: Path,
    tmp_path: Path,
) -> None:
    out = tmp_path / "stdio.json"
    with RecordingHttp() as web:
        write_config(
            project / ".mcp.json", local=asking_for_everything(tmp_path, out), web=web_asking_for_everything(web.url)
        )
        mode = "bypassPermissions" if started_by == "bypassPermissions" else None
        if mode is None:
            own_settings(project, enabledMcpjsonServers=["local", "web"])
        model.script(reply(text("ok")))

        done = run_agent("hi", permission_mode=mode)
        wait_until(lambda: out.exists() and bool(web.requests), "both servers being started")

    assert done.returncode == 0, done.stderr
    got = recorded(out)
    expected_args = [arg for name in WITHHELD for arg in ("", "", "k=", f"${name}", f"${{{name}}}")]  # never twice
    assert got["argv"] == [*expected_args, f"gh={GITHUB}"]
    for name in WITHHELD:
        assert got["env"][f"E_{name}"] == got["env"][f"D_{name}"] == ""
        assert name not in got["env"]
    assert got["env"]["GH"] == GITHUB  # the user's other variables still expand
    assert_no_secret_in(json.dumps(got))
    for path, headers in web.requests:
        assert_no_secret_in(path, json.dumps(headers))
        assert f"gh={GITHUB}" in path and headers["Authorization"] == f"Bearer {GITHUB}"
        assert {f"X-{name}".lower() for name in WITHHELD} <= {header.lower() for header in headers}
    notice = next(line for line in done.stderr.splitlines() if "Withheld from" in line)
    assert str(project / ".mcp.json") in notice
    assert all(name in notice for name in WITHHELD) and "subprocessEnvPassthrough" in notice
    assert 'OPENAI_API_KEY (server "local": command, args, env.E_OPENAI_API_KEY, env.D_OPENAI_API_KEY; ' in notice
    assert 'server "web": url, headers.X-OPENAI_API_KEY)' in notice
    assert done.stderr.count("Withheld from") == 1
    assert_no_secret_in(done.stdout, done.stderr, json.dumps([r.messages for r in model.requests]))


def test_the_users_own_settings_may_let_a_named_credential_through(
    run_agent: RunAgent, model: ScriptedModel, credentials: None, project: Path, tmp_path: Path
) -> None:
    out = tmp_path / "stdio.json"
    server = recorder(tmp_path, out, "${OPENAI_API_KEY}", "${ANTHROPIC_API_KEY}")
    write_config(project / ".mcp.json", local=server)
    own_settings(project, enabledMcpjsonServers=["local"], subprocessEnvPassthrough=["OPENAI_API_KEY"])
    model.script(reply(text("ok")))

    done = run_agent("hi")

    assert done.returncode == 0, done.stderr
    assert recorded(out)["argv"] == [SECRETS["OPENAI_API_KEY"], ""]
    assert "ANTHROPIC_API_KEY" in done.stderr and "OPENAI_API_KEY (asked" not in done.stderr


def test_the_repository_cannot_let_its_own_servers_have_credentials(
    project: Path, home: Path, credentials: None
) -> None:
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_text(json.dumps({"subprocessEnvPassthrough": ["OPENAI_API_KEY"]}))
    write_config(project / ".mcp.json", local={"command": "server", "args": ["${OPENAI_API_KEY}"]})
    notices: list[str] = []
    servers = SessionServers(
        load_settings(project),
        project,
        [],
        False,
        mode=lambda: "default",
        local_settings=None,
        ask=None,
        on_notice=notices.append,
    )

    assert servers.manager is not None
    (status,) = servers.manager.statuses()
    assert status.config.args == ("",)
    assert any("Withheld from" in notice and "OPENAI_API_KEY" in notice for notice in notices)


@pytest.mark.parametrize("scope", ["user", "flag"])
def test_the_users_own_files_expand_every_variable(scope: str, project: Path, home: Path, credentials: None) -> None:
    files = {"user": home / ".agentcli" / "mcp.json", "flag": home / "mine.json"}
    write_config(files[scope], mine={"command": "server", "args": ["${ANTHROPIC_API_KEY}"]})

    found = load_servers(project, [files["flag"]] if scope == "flag" else [])

    assert found.notices == []
    assert found.servers["mine"].args == (SECRETS["ANTHROPIC_API_KEY"],)
    assert_no_secret_in(found.servers["mine"].target)  # shown as written


def render(question: McpServerQuestion) -> str:
    out = io.StringIO()
    Console(file=out, width=160, color_system=None).print(question)
    return out.getvalue()


def test_the_question_lists_everything_the_server_gets_and_no_value(
    project: Path, home: Path, credentials: None, tmp_path: Path
) -> None:
    write_config(
        project / ".mcp.json",
        local={
            "command": "node",
            "args": ["server.js", "--token", "${GITHUB_TOKEN}", "--key=${ANTHROPIC_API_KEY}"],
            "env": {"NODE_OPTIONS": "--require ./hook.js", "TOKEN": "${GITHUB_TOKEN}", "K": "${OPENAI_API_KEY}"},
        },
        web={
            "type": "http",
            "url": "https://mcp.example.com/x?k=${GEMINI_API_KEY}",
            "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}", "X-Team": "core"},
        },
    )
    found = load_servers(project)

    local = render(McpServerQuestion(found.servers["local"]))
    web = render(McpServerQuestion(found.servers["web"]))

    assert "local runs node server.js --token ${GITHUB_TOKEN} --key=${ANTHROPIC_API_KEY}" in local
    assert "env NODE_OPTIONS=--require ./hook.js" in local and "env TOKEN=${GITHUB_TOKEN}" in local
    assert "env K=${OPENAI_API_KEY}" in local
    assert "withheld ANTHROPIC_API_KEY, OPENAI_API_KEY: agentcli's credentials, given an empty value" in local
    assert "web connects (http) to https://mcp.example.com/x?k=${GEMINI_API_KEY}" in web
    assert "header Authorization: Bearer ${GITHUB_TOKEN}" in web and "header X-Team: core" in web
    assert "withheld GEMINI_API_KEY" in web
    assert_no_secret_in(local, web)
    assert GITHUB not in local and GITHUB not in web


def test_a_failed_servers_error_shows_its_variables_by_name(
    project: Path, home: Path, credentials: None, tmp_path: Path
) -> None:
    says = "echo token=$0 >&2; exit 1"
    write_config(home / ".agentcli" / "mcp.json", mine={"command": "sh", "args": ["-c", says, "${GITHUB_TOKEN}"]})
    with RecordingHttp() as web:
        write_config(project / ".mcp.json", web={"type": "http", "url": web.url + "/mcp?t=${GITHUB_TOKEN}"})
        own_settings(project, enabledMcpjsonServers=["web"])
        report, _ = server_report(project)

    assert "token=${GITHUB_TOKEN}" in report  # what the server printed, its value shown by name
    assert f"{web.url}/mcp?t=${{GITHUB_TOKEN}}" in report
    assert GITHUB not in report


def test_a_project_server_gets_no_cloud_account_credential_unless_the_user_names_it(
    project: Path, home: Path, credentials: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    cloud = {name: f"cloud-secret-of-{name.lower()}-0123456789" for name in CLOUD_ACCOUNT_VARIABLES}
    for name, value in cloud.items():
        monkeypatch.setenv(name, value)
    asks = {name: f"${{{name}}}" for name in CLOUD_ACCOUNT_VARIABLES}
    write_config(project / ".mcp.json", local={"command": "server", "args": list(asks.values()), "env": asks})

    found = load_servers(project, allowed={"GOOGLE_APPLICATION_CREDENTIALS"})

    server = found.servers["local"]
    given = dict(zip(CLOUD_ACCOUNT_VARIABLES, server.args, strict=True))
    assert server.env == given
    assert given == {name: "" for name in CLOUD_ACCOUNT_VARIABLES} | {
        "GOOGLE_APPLICATION_CREDENTIALS": cloud["GOOGLE_APPLICATION_CREDENTIALS"]
    }
    (notice,) = [notice for notice in found.notices if "Withheld from" in notice]
    assert all(name in notice for name in CLOUD_ACCOUNT_VARIABLES if name != "GOOGLE_APPLICATION_CREDENTIALS")
    assert "GOOGLE_APPLICATION_CREDENTIALS" not in notice
    assert all(value not in notice for value in cloud.values())
