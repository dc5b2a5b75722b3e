"""MCP servers in `agentcli run`, end to end: the command line (in-process, `run_main`), the fake
Anthropic server, the demo MCP server as its own process."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RunCli, RunMain
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.mcp.helpers import stdio_server, write_config


def _results(api: FakeAnthropic, request: int) -> list[dict[str, object]]:
    content = api.requests[request].body["messages"][-1]["content"]
    return [block for block in content if block["type"] == "tool_result"]


def test_the_model_calls_an_mcp_tool_and_gets_its_answer(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, home: Path
) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    fake_api.script(
        reply(tool_use("mcp__demo__echo", {"text": "hello"}, id="toolu_1")),
        reply(text("It echoed.")),
    )

    done = run_main("run", "--allowed-tools", "mcp__demo", "echo hello")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "It echoed.\n"
    manifest = {tool["name"]: tool for tool in fake_api.requests[0].body["tools"]}
    assert manifest["mcp__demo__echo"]["description"] == "Echo the text back."
    assert manifest["mcp__demo__echo"]["input_schema"]["required"] == ["text"]
    assert "mcp__demo__get_weather_" in manifest  # "get weather!" sanitised
    assert "Read" in manifest
    [result] = _results(fake_api, 1)
    assert (result["tool_use_id"], result["content"], "is_error" in result) == ("toolu_1", "echo: hello", False)


def test_without_a_rule_run_denies_an_mcp_call_saying_which_rule_allows_it(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, home: Path
) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    fake_api.script(reply(tool_use("mcp__demo__shout", {"text": "hi"}, id="toolu_1")), reply(text("denied")))

    done = run_main("run", "--permission-mode", "acceptEdits", "shout")

    assert done.returncode == 0, done.stderr
    [result] = _results(fake_api, 1)
    assert result["is_error"] is True
    assert str(result["content"]).startswith(
        "Permission denied: mcp__demo__shout needs approval, and this run is non-interactive."
    )
    assert "--allowed-tools" in str(result["content"])


def test_an_error_result_and_an_image_reach_the_model(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, home: Path
) -> None:
    config = write_config(project / "servers.json", demo=stdio_server())
    fake_api.script(
        reply(
            tool_use("mcp__demo__fail", {"why": "testing"}, id="toolu_1"),
            tool_use("mcp__demo__picture", {}, id="toolu_2"),
        ),
        reply(text("ok")),
    )

    # agentcli's options may come before `run` as after it
    done = run_main("--mcp-config", str(config), "run", "--allowed-tools", "mcp__demo", "go")

    assert done.returncode == 0, done.stderr
    failed, picture = _results(fake_api, 1)
    assert failed["is_error"] is True and "failed on purpose: testing" in str(failed["content"])
    content = picture["content"]
    assert isinstance(content, list)
    assert content[1]["type"] == "image"
    assert content[1]["source"]["media_type"] == "image/png"


def test_a_server_that_crashes_mid_call_is_reported_and_its_calls_fail(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, home: Path
) -> None:
    write_config(home / ".agentcli" / "mcp.json", demo=stdio_server())
    fake_api.script(
        reply(tool_use("mcp__demo__crash", {}, id="toolu_1")),
        reply(tool_use("mcp__demo__echo", {"text": "again"}, id="toolu_2")),
        reply(text("carried on")),
    )

    done = run_main("run", "--allowed-tools", "mcp__demo", "crash it")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "carried on\n"
    [crashed] = _results(fake_api, 1)
    [after] = _results(fake_api, 2)
    for result in (crashed, after):
        assert result["is_error"] is True
        assert 'The MCP server "demo" is down' in str(result["content"])
    assert done.stderr.count('MCP server "demo" stopped') == 1


def test_a_run_without_mcp_servers_never_imports_the_sdk(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("done")))

    done = run_cli("run", "hi", env={"PYTHONPROFILEIMPORTTIME": "1"})

    assert done.returncode == 0, done.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "agentcli.session" in imported  # the measurement works
    assert not {name for name in imported if name.split(".")[0] in ("mcp", "mcp_types")}
    assert "agentcli.mcp.manager" not in imported
