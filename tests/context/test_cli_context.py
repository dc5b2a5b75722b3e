"""`agentcli run` in-process: what the model is sent, /commands, the Skill tool; caching over the wire."""

from __future__ import annotations

import dataclasses
import itertools
import json
import shutil
from pathlib import Path
from typing import Any

from agentcli.context.paths import project_slug
from agentcli.context.system_prompt import CORE
from agentcli.contracts import JSON, ModelRequest
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests import fake_anthropic as fake
from tests.conftest import RunAgent, RunMain
from tests.context.helpers import git, write
from tests.fake_anthropic import FakeAnthropic

REPO = Path(__file__).resolve().parents[2]


def without_cache_marks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_marks(v) for v in value]
    return value


def as_json(request: ModelRequest) -> JSON:
    """The request as a JSON object, as it goes over the wire."""
    return dataclasses.asdict(request)


def cache_marks(body: dict[str, Any]) -> int:
    return json.dumps(body).count('"cache_control"')


def test_first_request_system_and_reminders_for_nested_claude_md_with_imports(
    run_agent: RunAgent, model: ScriptedModel, project: Path, home: Path
) -> None:
    write(home / ".agentcli" / "CLAUDE.md", "USER: be terse")
    write(project / "CLAUDE.md", "ROOT: run `make test`. Conventions: @docs/conventions.md")
    write(project / "docs" / "conventions.md", "CONVENTIONS: snake_case, see @../STYLE.md")
    write(project / "STYLE.md", "STYLE: 4 spaces")
    write(project / "CLAUDE.local.md", "LOCAL: my sandbox is at /tmp/x")
    write(project / "pkg" / "CLAUDE.md", "PKG: this package is pure; also @missing/notes.md")
    write(project / "AGENTS.md", "AGENTS: no network in tests")
    write(project / ".commands" / "review.md", "---\nargument-hint: [range]\ndescription: Review changes\n---\nReview")
    cwd = project / "pkg"
    model.script(reply(text("ok")))

    done = run_agent("hello", append_system_prompt="APPENDED LAST", cwd=cwd)

    assert done.returncode == 0, done.stderr
    sent = as_json(model.requests[0])
    core, session = sent["system"]
    assert core["text"] == CORE
    assert f"Working directory: {cwd}" in session["text"]
    assert f"/projects/{project_slug(cwd)}/memory/" in session["text"]
    assert "Branch: No commits yet on main" in session["text"]
    assert session["text"].endswith("APPENDED LAST")

    [message] = sent["messages"]
    instructions, skills, prompt = (block["text"] for block in message["content"])
    order = ["USER:", "ROOT:", "CONVENTIONS:", "STYLE:", "LOCAL:", "PKG:", "AGENTS:"]
    positions = [instructions.index(marker) for marker in order]
    assert positions == sorted(positions)
    for path, origin in [
        (home / ".agentcli" / "CLAUDE.md", "the user's private global instructions"),
        (project / "CLAUDE.md", "project instructions, checked into the codebase"),
        (project / "docs" / "conventions.md", f"imported by {project / 'CLAUDE.md'}"),
        (project / "STYLE.md", f"imported by {project / 'docs' / 'conventions.md'}"),
        (project / "CLAUDE.local.md", "the user's private project instructions, not checked in"),
        (cwd / "CLAUDE.md", "project instructions"),
    ]:
        assert f"Contents of {path} ({origin}" in instructions
    assert "[agentcli: @missing/notes.md was not imported" in instructions
    assert skills.startswith("<system-reminder>\nSkills") and "- /review [range]: Review changes" in skills
    assert prompt == "hello"
    assert cache_marks(sent) <= 4


def test_system_and_tools_byte_identical_across_a_10_step_session(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    write(project / "CLAUDE.md", "Original rules.")
    write(project / "a.py", "print(1)\n")
    write(project / ".commands" / "hello.md", "Say hello to $1")
    steps = [
        tool_use("Read", {"file_path": "a.py"}),
        tool_use("Grep", {"pattern": "print"}),
        tool_use("Bash", {"command": "echo 'Changed rules.' > CLAUDE.md"}),
        tool_use("Bash", {"command": "echo new > b.txt"}),
        tool_use("Skill", {"skill": "hello", "args": "Ann"}),
        tool_use("Read", {"file_path": "b.txt"}),
        tool_use("Bash", {"command": "mkdir -p .commands && echo Bye > .commands/bye.md"}),
        tool_use("Grep", {"pattern": "Bye", "path": ".commands"}),
        tool_use("Read", {"file_path": "CLAUDE.md"}),
    ]
    model.script(*(reply(text(f"step {n}"), call) for n, call in enumerate(steps)), reply(text("done")))

    done = run_agent("work", allowed_tools=["Bash"])

    assert done.returncode == 0, done.stderr
    requests = [as_json(r) for r in model.requests]
    assert len(requests) == 10
    first_system, first_tools = json.dumps(requests[0]["system"]), json.dumps(requests[0]["tools"])
    for body in requests:
        assert json.dumps(body["system"]) == first_system
        assert json.dumps(body["tools"]) == first_tools
        assert cache_marks(body) <= 4
    # Every request repeats the previous one's messages unchanged, then adds to them.
    for before, after in itertools.pairwise(requests):
        n = len(before["messages"])
        assert without_cache_marks(after["messages"][:n]) == without_cache_marks(before["messages"])
    # Tool results are not user messages: no reminder was slipped into them.
    assert "<system-reminder>" not in json.dumps(requests[-1]["messages"][1:])
    assert model.rejected == []


def test_unknown_command_exits_2_and_sends_nothing(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    write(project / ".commands" / "commit.md", "Commit")
    write(project / ".commands" / "git" / "push.md", "Push")

    done = run_agent("/comit all")

    assert done.returncode == 2
    assert "Unknown command /comit. Did you mean /commit?" in done.stderr
    assert done.stdout == ""
    assert model.requests == []

    done = run_agent("/zzz", output_format="json")
    assert done.returncode == 2
    result = json.loads(done.stdout)
    assert result["is_error"] is True and "Available: /commit, /git:push." in result["result"]
    assert model.requests == []


def test_malformed_skill_exits_2_naming_the_file(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    path = write(project / ".commands" / "bad.md", "---\ndisable-model-invocation: maybe\n---\nbody")
    done = run_agent("/bad")
    assert done.returncode == 2
    assert f"Malformed frontmatter in {path}" in done.stderr
    assert model.requests == []


def test_bang_command_needs_permission_and_nothing_is_sent_without_it(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    marker = project / "ran.txt"
    write(project / ".commands" / "stamp.md", f"Stamp: !`touch {marker} && echo stamped`")

    denied = run_agent("/stamp")

    assert denied.returncode == 2
    assert f"/stamp was not run: its command !`touch {marker} && echo stamped` is not allowed" in denied.stderr
    assert not marker.exists()
    assert model.requests == []

    model.script(reply(text("ok")))
    allowed = run_agent("/stamp", allowed_tools=["Bash"])

    assert allowed.returncode == 0, allowed.stderr
    assert marker.exists()
    assert model.requests[0].messages[0]["content"][-1]["text"] == "Stamp: stamped"


def test_repository_commit_skill_expands_with_git_state(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    shutil.copytree(REPO / ".commands", project / ".commands")
    write(project / "app.py", "x = 1\n")
    git(project, "add", "app.py")
    git(project, "commit", "-q", "-m", "Add the app")
    write(project / "app.py", "x = 2\n")
    model.script(reply(text("Committed.")))

    done = run_agent("/commit only the app change", allowed_tools=["Bash"])

    assert done.returncode == 0, done.stderr
    sent = model.requests[0].messages[0]["content"][-1]["text"]
    assert "## main\n M app.py" in sent
    assert "app.py | 2 +-" in sent
    assert "Add the app" in sent
    assert "Create one git commit for the changes above. only the app change" in sent
    assert "!`" not in sent and "$ARGUMENTS" not in sent


def test_skill_tool_round_trip(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    write(project / ".commands" / "greet.md", "---\ndescription: Greet someone\n---\nGreet $1 warmly, in $2.")
    write(project / ".commands" / "private.md", "---\ndisable-model-invocation: true\n---\nUser only")
    model.script(
        reply(
            text("Using the greet skill."),
            tool_use("Skill", {"skill": "greet", "args": "Ann French"}, id="toolu_1"),
            tool_use("Skill", {"skill": "private"}, id="toolu_2"),
            tool_use("Skill", {"skill": "gret"}, id="toolu_3"),
        ),
        reply(text("Bonjour, Ann !")),
    )

    done = run_agent("please greet Ann in French")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Bonjour, Ann !\n"
    first = as_json(model.requests[0])
    skill_tool = next(t for t in first["tools"] if t["name"] == "Skill")
    assert skill_tool["input_schema"]["required"] == ["skill"]
    assert "private" not in json.dumps(first["messages"])  # not offered to the model
    greet, private, typo = model.requests[1].messages[-1]["content"]
    assert greet["tool_use_id"] == "toolu_1" and "is_error" not in greet
    assert greet["content"].endswith("Greet Ann warmly, in French.")
    assert private["is_error"] is True and "can only be run by the user" in private["content"]
    assert typo["is_error"] is True and "Did you mean /greet?" in typo["content"]
    assert "● Skill(greet)" in done.stderr


def test_cache_reads_grow_and_a_new_session_reads_the_shared_prefix(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    write(project / "a.txt", "alpha\n")
    fake_api.script(
        fake.reply(fake.tool_use("Read", {"file_path": "a.txt"})),
        fake.reply(fake.tool_use("Read", {"file_path": "a.txt", "offset": 1})),
        fake.reply(fake.text("done")),
    )
    assert run_main("run", "read it").returncode == 0
    first, second, third = fake_api.usage_log
    assert first["cache_read_input_tokens"] == 0
    for before, after in ((first, second), (second, third)):
        total_before = before["cache_read_input_tokens"] + before["cache_creation_input_tokens"]
        assert after["cache_read_input_tokens"] == total_before
        assert after["input_tokens"] == 0

    other = tmp_path / "other-project"
    other.mkdir()
    fake_api.script(fake.reply(fake.text("hi")))
    assert run_main("run", "hi", cwd=other).returncode == 0
    new_session = fake_api.usage_log[-1]
    tools_and_core = json.dumps(fake_api.requests[-1].body["tools"]) + CORE
    assert new_session["cache_read_input_tokens"] >= len(tools_and_core) // 4 * 0.9


def test_skill_allowed_tools_allow_its_commands_and_nothing_else(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    write(project / ".commands" / "hi.md", "---\nallowed-tools: Bash(echo:*)\n---\nSays: !`echo hi there`")
    marker = project / "touched"
    write(project / ".commands" / "sneaky.md", f"---\nallowed-tools: Bash(echo:*)\n---\n!`echo hi && touch {marker}`")
    model.script(reply(text("ok")))

    allowed = run_agent("/hi")
    refused = run_agent("/sneaky")

    assert allowed.returncode == 0, allowed.stderr
    assert model.requests[0].messages[0]["content"][-1]["text"] == "Says: hi there"
    assert refused.returncode == 2
    assert "/sneaky was not run" in refused.stderr
    assert not marker.exists()
    assert len(model.requests) == 1


def test_skill_rules_cover_the_rest_of_the_turn(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    write(project / ".commands" / "stamp.md", "---\nallowed-tools: Bash(touch:*)\n---\nStamp the file.")
    model.script(
        reply(tool_use("Bash", {"command": "touch before"}, id="toolu_0")),
        reply(tool_use("Skill", {"skill": "stamp"}, id="toolu_1")),
        reply(tool_use("Bash", {"command": "touch after"}, id="toolu_2")),
        reply(text("done")),
    )

    done = run_agent("stamp it")

    assert done.returncode == 0, done.stderr
    assert not (project / "before").exists()  # not allowed before the skill ran
    assert (project / "after").exists()
    [after] = model.requests[3].messages[-1]["content"]
    assert after["tool_use_id"] == "toolu_2" and "is_error" not in after


def test_skill_model_is_used_for_its_turn(run_agent: RunAgent, model: ScriptedModel, project: Path) -> None:
    write(project / ".commands" / "quick.md", "---\nmodel: claude-haiku-4-5\n---\nAnswer quickly: $ARGUMENTS")
    model.script(reply(text("4")))

    done = run_agent("/quick 2+2?", model="claude-opus-5", output_format="stream-json")

    assert done.returncode == 0, done.stderr
    assert model.requests[0].model == "claude-haiku-4-5"
    assert json.loads(done.stdout.splitlines()[0])["model"] == "claude-haiku-4-5"
    assert model.requests[0].messages[0]["content"][-1]["text"] == "Answer quickly: 2+2?"


def test_plan_mode_is_announced_in_the_first_message_and_only_then(run_agent: RunAgent, model: ScriptedModel) -> None:
    model.script(reply(text("The plan: ...")), reply(text("Hello.")))

    assert run_agent("plan the work", permission_mode="plan").returncode == 0
    assert run_agent("hi").returncode == 0

    first_message = json.dumps(model.requests[0].messages[0])
    assert "<system-reminder>\\nPlan mode is on: the user wants a plan before any change." in first_message
    assert "Plan mode" not in json.dumps(model.requests[1].messages)


def test_a_skill_the_model_writes_and_runs_grants_neither_its_command_nor_later_bash(
    run_agent: RunAgent, model: ScriptedModel, project: Path
) -> None:
    helper = "---\nallowed-tools: Bash\n---\nHelper: !`touch bang`\n"
    model.script(
        reply(tool_use("Write", {"file_path": ".commands/helper.md", "content": helper}, id="toolu_1")),
        reply(tool_use("Skill", {"skill": "helper"}, id="toolu_2")),
        reply(tool_use("Bash", {"command": "touch later"}, id="toolu_3")),
        reply(text("done")),
    )

    done = run_agent(
        "set up a helper and use it", permission_mode="acceptEdits", allowed_tools=["Write(./.commands/helper.md)"]
    )

    assert done.returncode == 0, done.stderr
    assert (project / ".commands" / "helper.md").read_text() == helper  # written: what follows is the skill's doing
    assert not (project / "bang").exists()
    assert not (project / "later").exists()
    not_in_force = (
        "/helper's allowed-tools are not in force: .commands/helper.md was created or changed during this "
        "session; run /helper yourself once to trust it."
    )
    [skill_result] = model.requests[2].messages[-1]["content"]
    assert skill_result["is_error"] is True and not_in_force in skill_result["content"]
    [bash_result] = model.requests[3].messages[-1]["content"]
    assert bash_result["is_error"] is True and "Permission denied" in bash_result["content"]
    assert f"! {not_in_force}" in done.stderr

    # The user runs it by hand: its allowed-tools apply as they always did.
    model.script(reply(text("ok")))
    by_hand = run_agent("/helper")
    assert by_hand.returncode == 0, by_hand.stderr
    assert (project / "bang").exists()
