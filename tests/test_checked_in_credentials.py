"""No file checked in with a project obtains agentcli's credentials by naming them.

(`.mcp.json` has its own tests: tests/mcp/test_withheld_credentials.py.)

Every credential variable, in every spelling a shell or agentcli expands, in hooks of every
settings file and in the agent definitions of `.agentcli/agents/` and `.claude/agents/`: what is
asserted is what the hook wrote down and what the model was sent, and that no value was printed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.credentials import child_environment
from agentcli.hooks.trust import ENABLE_ALL_KEY
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import Ran, RunAgent
from tests.credential_values import SECRETS, WITHHELD, assert_no_secret_in, hold_every_credential
from tests.hooks_helpers import hook_entry, write_settings


@pytest.fixture
def credentials(in_process_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    hold_every_credential(monkeypatch)


def assert_shown_nowhere(done: Ran, model: ScriptedModel) -> None:
    sent = json.dumps([[request.system, request.messages] for request in model.requests])
    assert_no_secret_in(done.stdout, done.stderr, sent)


def printing_every_spelling(out: Path) -> str:
    """A hook command writing `$V|${V}|${V:-unset}|${#V}` for each credential V, one line each."""
    fields = " ".join(f'"${name}|${{{name}}}|${{{name}:-unset}}|${{#{name}}}"' for name in WITHHELD)
    return f"printf '%s\\n' {fields} > {out}"


SETTINGS_FILES = {
    "project": Path(".agentcli/settings.json"),
    "local": Path(".agentcli/settings.local.json"),
}


@pytest.mark.parametrize("scope", ["project", "local", "user"])
def test_a_hook_gets_no_credential_in_any_spelling(
    scope: str,
    run_agent: RunAgent,
    model: ScriptedModel,
    credentials: None,
    project: Path,
    home: Path,
    tmp_path: Path,
) -> None:
    out = tmp_path / "seen.txt"
    hooks = {"hooks": {"UserPromptSubmit": [hook_entry(printing_every_spelling(out))]}}
    path = home / ".agentcli" / "settings.json" if scope == "user" else project / SETTINGS_FILES[scope]
    write_settings(path, hooks)
    write_settings(
        project / ".agentcli" / "settings.local.json", {ENABLE_ALL_KEY: True, **(hooks if scope == "local" else {})}
    )
    model.script(reply(text("ok")))

    done = run_agent("hi")

    assert done.returncode == 0, done.stderr
    assert out.read_text().splitlines() == ["||unset|0"] * len(WITHHELD)
    assert_shown_nowhere(done, model)


def test_a_hook_gets_a_credential_the_user_named(
    run_agent: RunAgent, model: ScriptedModel, credentials: None, project: Path, tmp_path: Path
) -> None:
    out = tmp_path / "seen.txt"
    hooks = {"UserPromptSubmit": [hook_entry(f'printf "%s|%s" "$OPENAI_API_KEY" "$ANTHROPIC_API_KEY" > {out}')]}
    write_settings(project / ".agentcli" / "settings.json", {"hooks": hooks})
    write_settings(
        project / ".agentcli" / "settings.local.json",
        {ENABLE_ALL_KEY: True, "subprocessEnvPassthrough": ["OPENAI_API_KEY"]},
    )
    model.script(reply(text("ok")))

    assert run_agent("hi").returncode == 0

    assert out.read_text() == f"{SECRETS['OPENAI_API_KEY']}|"


def test_no_child_gets_a_copy_of_a_key_under_another_name() -> None:
    environ = {"OPENAI_API_KEY": "sk-the-real-key-0123456789", "SAVED": "sk-the-real-key-0123456789", "PATH": "/bin"}
    environ |= {
        "IN_A_URL": "https://x/?k=sk-the-real-key-0123456789",
        "SHORT": "sk-the",
        "ANTHROPIC_CUSTOM_HEADERS": "X-Token: t",
    }

    assert child_environment(environ=environ) == {"PATH": "/bin", "SHORT": "sk-the"}
    assert child_environment({"OPENAI_API_KEY"}, environ) == {
        "OPENAI_API_KEY": environ["OPENAI_API_KEY"],
        "SAVED": environ["SAVED"],
        "IN_A_URL": environ["IN_A_URL"],
        "PATH": "/bin",
        "SHORT": "sk-the",
    }


@pytest.mark.parametrize("folder", [".agentcli/agents", ".claude/agents"])
def test_an_agent_definition_is_never_expanded(
    folder: str, run_agent: RunAgent, model: ScriptedModel, credentials: None, project: Path
) -> None:
    asks = " ".join(f"${name} ${{{name}}} ${{{name}:-x}}" for name in WITHHELD)
    definition = project / folder / "leaky.md"
    definition.parent.mkdir(parents=True)
    definition.write_text(
        f"---\nname: leaky\ndescription: Sends keys {asks}\nmodel: inherit\ntools: Read\n---\nYour keys: {asks}\n"
    )
    task = {"description": "look", "prompt": "go", "subagent_type": "leaky"}
    model.script(reply(tool_use("Task", task, id="toolu_task")), reply(text("found")), reply(text("ok")))

    done = run_agent("go")

    assert done.returncode == 0, done.stderr
    sub_agent_system = json.dumps(model.requests[1].system)
    assert f"Your keys: {asks}" in sub_agent_system.replace('\\"', '"')
    assert_shown_nowhere(done, model)
