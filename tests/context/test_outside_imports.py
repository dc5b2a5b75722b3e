"""`agentcli run` (in-process) and `@` imports of files outside the project: left out unless approved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent
from tests.context.helpers import write

SECRET = "TOP SECRET CONTENT"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    return write(tmp_path / "outside" / "secret.md", SECRET).resolve()


def sent(model: ScriptedModel, request: int = 0) -> str:
    return json.dumps(model.requests[request].messages)


def settings(path: Path, **values: object) -> None:
    write(path, json.dumps(values))


def test_run_leaves_out_imports_outside_the_project_and_says_how_to_allow_them(
    run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path, secret: Path
) -> None:
    write(home / "private.md", "PRIVATE NOTES")
    write(project / "CLAUDE.md", "Rules.\nSee @../outside/secret.md and @~/private.md.")
    model.script(reply(text("ok")))

    done = run_agent("hi")

    assert done.returncode == 0, done.stderr
    assert SECRET not in sent(model) and "PRIVATE NOTES" not in sent(model)
    assert "Rules." in sent(model)
    assert (
        "[agentcli: @../outside/secret.md was not imported: it is outside the project and not approved "
        f'({secret}; the user can allow it under \\"allowedExternalImports\\" in .agentcli/settings.local.json).]'
    ) in sent(model)
    private = (home / "private.md").resolve()
    assert done.stderr.count("Not sent to the model") == 1
    assert f"  {secret} (@../outside/secret.md in {project / 'CLAUDE.md'})" in done.stderr
    assert f"  {private} (@~/private.md in {project / 'CLAUDE.md'})" in done.stderr
    local = project / ".agentcli" / "settings.local.json"
    assert f"add their paths to allowedExternalImports in {local}" in done.stderr
    assert json.dumps({"allowedExternalImports": [str(secret), str(private)]}) in done.stderr


def test_an_import_is_approved_by_your_own_settings_never_by_the_projects(
    run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path, secret: Path
) -> None:
    write(project / "CLAUDE.md", "See @../outside/secret.md")
    settings(project / ".agentcli" / "settings.json", allowedExternalImports=[str(secret)])
    model.script(reply(text("one")), reply(text("two")), reply(text("three")))

    checked_in = run_agent("hi")
    assert checked_in.returncode == 0, checked_in.stderr
    assert SECRET not in sent(model, 0)
    assert f"Ignored allowedExternalImports in {project / '.agentcli' / 'settings.json'}" in checked_in.stderr

    settings(project / ".agentcli" / "settings.local.json", allowedExternalImports=[str(secret)])
    local = run_agent("hi")
    assert local.returncode == 0, local.stderr
    assert SECRET in sent(model, 1) and "Not sent to the model" not in local.stderr

    (project / ".agentcli" / "settings.local.json").unlink()
    settings(home / ".agentcli" / "settings.json", allowedExternalImports=[str(secret)])
    user = run_agent("hi")
    assert user.returncode == 0, user.stderr
    assert SECRET in sent(model, 2)


def test_a_symlink_in_the_project_that_points_outside_counts_as_outside(
    run_agent: RunAgent, model: ScriptedModel, project: Path, secret: Path
) -> None:
    (project / "notes.md").symlink_to(secret)
    write(project / "CLAUDE.md", "Notes: @notes.md")
    model.script(reply(text("ok")))

    done = run_agent("hi")

    assert done.returncode == 0, done.stderr
    assert SECRET not in sent(model)
    assert f"  {secret} (@notes.md in {project / 'CLAUDE.md'})" in done.stderr


def test_a_path_outside_the_project_written_in_a_skill_needs_the_same_approval(
    run_agent: RunAgent, model: ScriptedModel, project: Path, secret: Path
) -> None:
    write(project / ".commands" / "brief.md", "Summarise @../outside/secret.md for me.")
    model.script(reply(text("one")), reply(text("two")))

    left_out = run_agent("/brief")

    assert left_out.returncode == 0, left_out.stderr
    message = model.requests[0].messages[0]["content"][-1]["text"]
    assert SECRET not in message
    assert message.startswith(
        "Summarise [agentcli: @../outside/secret.md was not attached: it is outside the project and not approved"
    )
    assert f"  {secret} (@../outside/secret.md in {project / '.commands' / 'brief.md'})" in left_out.stderr

    settings(project / ".agentcli" / "settings.local.json", allowedExternalImports=[str(secret)])
    approved = run_agent("/brief")
    assert approved.returncode == 0, approved.stderr
    message = model.requests[1].messages[0]["content"][-1]["text"]
    assert f'<file path="../outside/secret.md">\n{SECRET}\n</file>' in message


def test_a_path_the_model_passes_to_a_skill_is_a_read_checked_by_the_gate(
    run_agent: RunAgent, model: ScriptedModel, project: Path, secret: Path
) -> None:
    write(project / ".commands" / "explain.md", "Explain @$1 to a newcomer.")
    call = tool_use("Skill", {"skill": "explain", "args": "../outside/secret.md"}, id="toolu_1")
    model.script(reply(call), reply(text("refused")), reply(call), reply(text("explained")))

    denied = run_agent("explain the secret")

    assert denied.returncode == 0, denied.stderr
    [result] = model.requests[1].messages[-1]["content"]
    assert result["is_error"] is True
    assert result["content"].startswith("/explain: @../outside/secret.md was not attached. Permission denied")
    assert SECRET not in sent(model, 1)

    allowed = run_agent("explain the secret", allowed_tools=[f"Read(/{secret})"])
    assert allowed.returncode == 0, allowed.stderr
    [result] = model.requests[3].messages[-1]["content"]
    assert "is_error" not in result and SECRET in result["content"]


def test_a_path_the_user_passes_to_a_skill_is_their_own_request(
    run_agent: RunAgent, model: ScriptedModel, project: Path, secret: Path
) -> None:
    write(project / ".commands" / "explain.md", "Explain @$1 to a newcomer.")
    model.script(reply(text("explained")))

    done = run_agent("/explain ../outside/secret.md")

    assert done.returncode == 0, done.stderr
    message = model.requests[0].messages[0]["content"][-1]["text"]
    assert f'<file path="../outside/secret.md">\n{SECRET}\n</file>' in message
    assert "Not sent to the model" not in done.stderr


def test_a_malformed_approval_list_is_a_usage_error_naming_the_file(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    local = project / ".agentcli" / "settings.local.json"
    settings(local, allowedExternalImports="/etc/passwd")

    done = run_agent("hi")

    assert done.returncode == 2
    assert f"Settings file {local}: allowedExternalImports must be a list of paths (strings)." in done.stderr
    assert model.requests == []
