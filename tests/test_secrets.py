"""The API key agentcli was given stays out of child processes, tool output, requests, transcripts and the screen.

End to end once (the real CLI with the key in its environment), the rest in-process.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.providers import scripted
from agentcli.providers.scripted import ScriptedModel
from tests.conftest import AGENTCLI, Ran, RunAgent, cli_env
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.session_helpers import model_settings, transcript_files

KEY = "sk-ant-test-0123456789abcdef-THE-SECRET"
OTHER_KEY = "sk-openai-test-9876543210-ANOTHER-SECRET"


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=KEY) as fake:
        yield fake


def run(api: FakeAnthropic, home: Path, project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**cli_env(home, api.url), "ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": OTHER_KEY, **env}
    return subprocess.run(
        [AGENTCLI, "run", *args], cwd=project, env=full_env, capture_output=True, text=True, timeout=60, input=""
    )


@pytest.fixture
def keyed(in_process_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process runs hold the keys as the CLI would (in its environment)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OTHER_KEY)


def outputs(model: ScriptedModel, request: int) -> list[str]:
    return [str(b["content"]) for b in model.requests[request].messages[-1]["content"] if b["type"] == "tool_result"]


def assert_sent_nowhere(secret: str, model: ScriptedModel, home: Path, project: Path, done: Ran) -> None:
    """Not in any request the model was sent, not in the transcript, not on stdout or stderr."""
    assert all(secret not in json.dumps(dataclasses.asdict(request)) for request in model.requests)
    for path in transcript_files(home, project):
        assert secret not in path.read_text()
    assert secret not in done.stdout and secret not in done.stderr


def results(api: FakeAnthropic, request: int) -> list[str]:
    return [
        str(b["content"]) for b in api.requests[request].body["messages"][-1]["content"] if b["type"] == "tool_result"
    ]


def assert_nowhere(
    secret: str, api: FakeAnthropic, home: Path, project: Path, done: subprocess.CompletedProcess[str]
) -> None:
    """Not in any request body the server received, not in the transcript, not on stdout or stderr."""
    assert all(secret.encode() not in request.raw for request in api.requests)
    for path in transcript_files(home, project):
        assert secret not in path.read_text()
    assert secret not in done.stdout and secret not in done.stderr


def test_bash_does_not_get_the_api_credentials(api: FakeAnthropic, home: Path, project: Path) -> None:
    commands = ['echo "key=$ANTHROPIC_API_KEY openai=$OPENAI_API_KEY"', "env", "printenv | grep -c _API_KEY || true"]
    api.script(
        reply(*(tool_use("Bash", {"command": c}, id=f"toolu_{n}") for n, c in enumerate(commands))),
        reply(text("Done.")),
    )

    done = run(api, home, project, "show me the environment", "--allowed-tools", "Bash")

    assert done.returncode == 0, done.stderr
    echoed, listed, counted = results(api, 1)
    assert echoed.startswith("key= openai=\n")  # removed, not merely redacted
    assert "HOME=" in listed and "ANTHROPIC_API_KEY" not in listed and "OPENAI_API_KEY" not in listed
    assert counted.startswith("0\n")
    assert_nowhere(KEY, api, home, project, done)
    assert_nowhere(OTHER_KEY, api, home, project, done)


def own_settings(project: Path, **values: object) -> None:
    """The user's own .agentcli/settings.local.json (the checked-in settings.json may not set these)."""
    (project / ".agentcli").mkdir(exist_ok=True)
    (project / ".agentcli" / "settings.local.json").write_text(json.dumps(values))


def test_a_named_variable_can_be_passed_through(
    run_agent: RunAgent, model: ScriptedModel, keyed: None, project: Path
) -> None:
    own_settings(project, subprocessEnvPassthrough=["OPENAI_API_KEY"])
    command = 'echo "openai=${#OPENAI_API_KEY} chars, anthropic=${#ANTHROPIC_API_KEY} chars"'
    model.script(
        scripted.reply(scripted.tool_use("Bash", {"command": command}, id="toolu_1")),
        scripted.reply(scripted.text("Done.")),
    )

    done = run_agent("test my client", allowed_tools=["Bash"])

    assert done.returncode == 0, done.stderr
    [echoed] = outputs(model, 1)
    assert echoed.startswith(f"openai={len(OTHER_KEY)} chars, anthropic=0 chars")


def test_a_key_in_tool_output_is_redacted_before_the_model_sees_it(
    run_agent: RunAgent, model: ScriptedModel, keyed: None, home: Path, project: Path
) -> None:
    (project / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\nOPENAI_API_KEY={OTHER_KEY}\nDEBUG=1\n")
    model.script(
        scripted.reply(
            scripted.tool_use("Read", {"file_path": ".env"}, id="toolu_1"),
            scripted.tool_use("Grep", {"pattern": "API_KEY", "output_mode": "content"}, id="toolu_2"),
            scripted.tool_use("Bash", {"command": "cat .env"}, id="toolu_3"),
        ),
        scripted.reply(scripted.text("Done.")),
    )

    done = run_agent("what is configured?", allowed_tools=["Bash"])

    assert done.returncode == 0, done.stderr
    read, grepped, catted = outputs(model, 1)
    assert "ANTHROPIC_API_KEY=[REDACTED]" in read and "OPENAI_API_KEY=[REDACTED]" in read and "DEBUG=1" in read
    assert "ANTHROPIC_API_KEY=[REDACTED]" in grepped
    assert "ANTHROPIC_API_KEY=[REDACTED]" in catted
    assert_sent_nowhere(KEY, model, home, project, done)
    assert_sent_nowhere(OTHER_KEY, model, home, project, done)


def test_a_skills_commands_neither_get_nor_show_the_key(
    run_agent: RunAgent, model: ScriptedModel, keyed: None, home: Path, project: Path
) -> None:
    (project / "key.txt").write_text(f"{KEY}\n")
    skill = (
        '---\nallowed-tools: Bash(echo:*), Bash(cat:*)\n---\nEnv: !`echo "k=$ANTHROPIC_API_KEY"`\nFile: !`cat key.txt`'
    )
    (project / ".commands").mkdir()
    (project / ".commands" / "leak.md").write_text(skill)
    model.script(scripted.reply(scripted.text("Done.")))

    done = run_agent("/leak")

    assert done.returncode == 0, done.stderr
    sent = json.dumps(model.requests[0].messages[-1])
    assert "Env: k=\\n" in sent and "File: [REDACTED]" in sent
    assert_sent_nowhere(KEY, model, home, project, done)


def test_the_repository_cannot_pass_credentials_through(
    run_agent: RunAgent, model: ScriptedModel, keyed: None, project: Path
) -> None:
    model_settings(project, subprocessEnvPassthrough=["OPENAI_API_KEY", "ANTHROPIC_API_KEY"])
    command = 'echo "openai=${#OPENAI_API_KEY} chars, anthropic=${#ANTHROPIC_API_KEY} chars"'
    model.script(
        scripted.reply(scripted.tool_use("Bash", {"command": command}, id="toolu_1")),
        scripted.reply(scripted.text("Done.")),
    )

    done = run_agent("run the tests", allowed_tools=["Bash"])

    assert done.returncode == 0, done.stderr
    [echoed] = outputs(model, 1)
    assert echoed.startswith("openai=0 chars, anthropic=0 chars")
    assert f"Ignored subprocessEnvPassthrough in {project / '.agentcli' / 'settings.json'}" in done.stderr


def test_a_malformed_passthrough_setting_is_a_usage_error(
    run_agent: RunAgent, model: ScriptedModel, keyed: None, project: Path
) -> None:
    own_settings(project, subprocessEnvPassthrough="OPENAI_API_KEY")

    done = run_agent("hi")

    assert done.returncode == 2
    assert "subprocessEnvPassthrough" in done.stderr and "list of environment variable names" in done.stderr
    assert model.requests == []
