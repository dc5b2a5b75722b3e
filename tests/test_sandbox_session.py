"""The sandbox as a user meets it in `agentcli run` (in-process, the scripted model, the real
bubblewrap): turned on by settings or `--sandbox`, a Bash call runs without a question and fails
inside with the sandbox's reason when it reaches out; deny rules still come first; the model
cannot leave it unless the user allows that, and is asked then every time; a skill's `!` runs in
it; when it cannot start, one line says why and the usual questions come back (or, with
failIfUnavailable, nothing runs); the repository cannot loosen it."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from agentcli.contracts import JSON
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent, RunMain
from tests.sandbox_support import PYTHON, require_sandbox


def user_settings(home: Path, **settings: object) -> None:
    (home / ".agentcli" / "settings.json").write_text(json.dumps(settings))


def result_of(model: ScriptedModel, request: int = 1) -> JSON:
    blocks: list[JSON] = [b for b in model.requests[request].messages[-1]["content"] if b["type"] == "tool_result"]
    assert len(blocks) == 1
    return blocks[0]


@pytest.fixture
def sandbox_on(home: Path) -> None:
    require_sandbox()
    user_settings(home, sandbox={"enabled": True})


def test_a_sandboxed_command_runs_without_a_question_and_cannot_touch_what_is_outside(
    run_agent: RunAgent, model: ScriptedModel, sandbox_on: None, project: Path, outside: Path
) -> None:
    precious = outside / "precious.txt"
    precious.write_text("keep me\n")
    script = f"touch made-here.txt; {PYTHON} -c 'import os; os.remove(\"{precious}\")'"
    model.script(reply(tool_use("Bash", {"command": script}, id="toolu_1")), reply(text("done")))

    done = run_agent("tidy up")  # default mode, non-interactive: without the sandbox this is refused

    assert done.returncode == 0, done.stderr
    assert (project / "made-here.txt").exists()
    assert precious.read_text() == "keep me\n"
    result = result_of(model)
    assert result["is_error"] is True
    assert "Read-only file system" in str(result["content"])
    assert "This command ran in agentcli's sandbox" in str(result["content"])


def test_without_the_sandbox_the_same_command_is_refused_in_a_run(
    run_agent: RunAgent, model: ScriptedModel, sandbox_on: None, project: Path
) -> None:
    model.script(reply(tool_use("Bash", {"command": "touch made-here.txt"}, id="toolu_1")), reply(text("done")))

    done = run_agent("tidy up", sandbox=False)

    assert done.returncode == 0, done.stderr
    assert not (project / "made-here.txt").exists()
    assert "Permission denied" in str(result_of(model)["content"])


def test_deny_rules_still_come_first_in_the_sandbox(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path
) -> None:
    require_sandbox()
    user_settings(home, sandbox={"enabled": True}, permissions={"deny": ["Bash(rm:*)"]})
    (project / "keep.txt").write_text("x")
    model.script(reply(tool_use("Bash", {"command": "rm keep.txt"}, id="toolu_1")), reply(text("done")))

    run_agent("clean")

    assert (project / "keep.txt").exists()
    assert 'Permission denied by the deny rule "Bash(rm:*)"' in str(result_of(model)["content"])


def test_with_auto_allow_off_a_sandboxed_command_is_asked_about_as_usual(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path
) -> None:
    require_sandbox()
    user_settings(home, sandbox={"enabled": True, "autoAllowBashIfSandboxed": False})
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("done")))

    run_agent("go")

    assert not (project / "made.txt").exists()
    assert "Permission denied" in str(result_of(model)["content"])


def test_the_model_cannot_ask_to_leave_the_sandbox_unless_the_user_allows_it(
    run_agent: RunAgent, model: ScriptedModel, sandbox_on: None, project: Path
) -> None:
    call = {"command": "touch left.txt", "dangerouslyDisableSandbox": True}
    model.script(reply(tool_use("Bash", call, id="toolu_1")), reply(text("done")))

    run_agent("go", allowed_tools=["Bash"])

    [bash_tool] = [t for t in model.requests[0].tools if t["name"] == "Bash"]
    assert "dangerouslyDisableSandbox" not in bash_tool["input_schema"]["properties"]
    assert result_of(model)["is_error"] is True
    assert not (project / "left.txt").exists()


def test_a_call_that_leaves_the_sandbox_is_asked_about_even_where_a_rule_allows_it(
    run_agent: RunAgent, model: ScriptedModel, home: Path, project: Path
) -> None:
    require_sandbox()
    user_settings(home, sandbox={"enabled": True, "allowUnsandboxedCommands": True})
    call = {"command": "touch left.txt", "dangerouslyDisableSandbox": True}
    model.script(reply(tool_use("Bash", call, id="toolu_1")), reply(text("done")))

    run_agent("go", allowed_tools=["Bash"])

    [bash_tool] = [t for t in model.requests[0].tools if t["name"] == "Bash"]
    assert "dangerouslyDisableSandbox" in bash_tool["input_schema"]["properties"]
    assert "was to run outside the sandbox (dangerouslyDisableSandbox)" in str(result_of(model)["content"])
    assert not (project / "left.txt").exists()


def test_an_excluded_command_runs_outside_through_the_usual_rules(
    run_agent: RunAgent, model: ScriptedModel, home: Path, outside: Path
) -> None:
    require_sandbox()
    user_settings(home, sandbox={"enabled": True, "excludedCommands": ["touch"]})
    model.script(
        reply(tool_use("Bash", {"command": f"touch {outside}/by-touch"}, id="toolu_1")),
        reply(tool_use("Bash", {"command": f"cp /dev/null {outside}/by-cp"}, id="toolu_2")),
        reply(text("done")),
    )

    run_agent("go", allowed_tools=["Bash(touch:*)"])

    assert (outside / "by-touch").exists()  # outside the sandbox, and an allow rule said yes
    assert not (outside / "by-cp").exists()  # inside, auto-allowed, and held


def test_a_skill_s_command_runs_in_the_sandbox(
    run_agent: RunAgent, model: ScriptedModel, sandbox_on: None, project: Path
) -> None:
    (project / ".commands").mkdir()
    (project / ".commands" / "where.md").write_text("Inside: !`echo sandbox=$AGENTCLI_SANDBOX`")
    model.script(reply(text("ok")))

    done = run_agent("/where")

    assert done.returncode == 0, done.stderr
    assert "Inside: sandbox=1" in json.dumps(model.requests[0].messages[-1])


def path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with the programs a session runs, but no bwrap (as on a machine without bubblewrap)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for program in ("bash", "git", "rg", "touch"):
        for place in os.environ["PATH"].split(os.pathsep):
            if (Path(place) / program).exists():
                (folder / program).symlink_to(Path(place) / program)
                break
    return str(folder)


def test_when_bubblewrap_is_missing_one_line_says_so_and_commands_are_asked_about_as_usual(
    run_agent: RunAgent,
    model: ScriptedModel,
    home: Path,
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user_settings(home, sandbox={"enabled": True})
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path))
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("done")))

    done = run_agent("go")

    assert (
        "The sandbox is off for this session: bubblewrap (bwrap) is not installed: install bubblewrap "
        "(apt install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap)." in done.stderr
    )
    assert not (project / "made.txt").exists()
    assert "Permission denied" in str(result_of(model)["content"])


def test_with_fail_if_unavailable_nothing_runs_when_bubblewrap_is_missing(
    run_agent: RunAgent,
    model: ScriptedModel,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user_settings(home, sandbox={"enabled": True, "failIfUnavailable": True})
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path))
    model.script(reply(text("never")))

    done = run_agent("go")

    assert done.returncode == 1
    assert "The sandbox cannot start: bubblewrap (bwrap) is not installed" in done.stderr
    assert "sandbox.failIfUnavailable is set" in done.stderr
    assert model.requests == []


def test_the_repository_cannot_turn_the_sandbox_off_or_open_it(
    run_agent: RunAgent, model: ScriptedModel, sandbox_on: None, project: Path, outside: Path
) -> None:
    (project / ".agentcli").mkdir()
    checked_in = {"sandbox": {"enabled": False, "filesystem": {"allowWrite": [str(outside)]}}}
    (project / ".agentcli" / "settings.json").write_text(json.dumps(checked_in))
    model.script(reply(tool_use("Bash", {"command": f"touch {outside}/x"}, id="toolu_1")), reply(text("done")))

    done = run_agent("go")

    assert "Ignored sandbox.enabled in" in done.stderr and "would turn the sandbox off" in done.stderr
    assert "Ignored sandbox.filesystem.allowWrite in" in done.stderr
    assert not (outside / "x").exists()
    assert "Read-only file system" in str(result_of(model)["content"])


def test_sandbox_and_no_sandbox_together_are_a_usage_error(run_main: RunMain) -> None:
    done = run_main("run", "--sandbox", "--no-sandbox", "hi")

    assert done.returncode == 2
    assert "give --sandbox or --no-sandbox, not both" in done.stderr


def test_a_sandbox_that_cannot_be_set_up_says_why_in_one_line(
    run_agent: RunAgent,
    model: ScriptedModel,
    sandbox_on: None,
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deep = tmp_path / ("a-long-folder-name-" * 4) / ("for-the-sandbox-" * 4)
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))  # its proxy's socket path is then too long
    model.script(reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")), reply(text("done")))

    done = run_agent("go")

    assert done.returncode == 0, done.stderr
    assert "The sandbox is off for this session: it could not be set up: AF_UNIX path too long" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (project / "made.txt").exists()  # asked about as usual: refused in a run


def test_the_additional_directories_are_writable_in_the_sandbox(
    run_agent: RunAgent, model: ScriptedModel, home: Path, outside: Path
) -> None:
    require_sandbox()
    (outside / "more").mkdir()
    user_settings(home, sandbox={"enabled": True}, permissions={"additionalDirectories": [str(outside / "more")]})
    command = f"touch {outside}/more/made.txt; touch {outside}/not-this.txt"
    model.script(reply(tool_use("Bash", {"command": command}, id="toolu_1")), reply(text("done")))

    run_agent("go")

    assert (outside / "more" / "made.txt").exists()
    assert not (outside / "not-this.txt").exists()
