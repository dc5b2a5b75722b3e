"""Sub-agents: the Task tool, agent types and definitions, concurrency, permissions, interrupts,
usage and transcripts.

What is asserted is what the model was sent (the fake server's or the scripted model's recorded
requests), the files, the exit code and the transcripts on disk.
"""

from __future__ import annotations

import json
import re
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from agentcli.agents.definitions import load_agent_types
from agentcli.context.paths import project_state_dir
from agentcli.contracts import JSON, ModelRequest, Usage
from agentcli.errors import CostBudgetExceeded, ModelAPIError
from agentcli.events import (
    MAIN_AGENT,
    Event,
    Notice,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolCallStarted,
)
from agentcli.loop import INTERRUPTED_MARKER
from agentcli.permissions.prompt import Answer, PermissionRequest
from agentcli.providers.anthropic import AnthropicModel
from agentcli.providers.scripted import Reply, ScriptedModel, reply, text, tool_use
from agentcli.session import Session, SessionOptions
from agentcli.sessions.store import list_sessions
from agentcli.tree_stamp import TreeStamp
from tests import fake_anthropic as fake
from tests.conftest import TEST_KEY, RunAgent
from tests.fake_anthropic import FakeAnthropic, validation_error
from tests.waiting import wait_until

WAIT_S = 30.0
"""How long a sub-agent's request waits for its sibling's: sequential execution times out here."""
EXPLORE_TOOLS = ["Read", "Grep", "Glob"]


def task(prompt: str, subagent_type: str = "Explore", *, id: str, description: str = "look around") -> Any:
    return tool_use("Task", {"description": description, "prompt": prompt, "subagent_type": subagent_type}, id=id)


def usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def names(tools: list[JSON]) -> list[str]:
    return [tool["name"] for tool in tools]


def texts(message: JSON) -> list[str]:
    return [block["text"] for block in message["content"] if block.get("type") == "text"]


def tool_results(request: ModelRequest) -> dict[str, JSON]:
    return {b["tool_use_id"]: b for b in request.messages[-1]["content"] if b.get("type") == "tool_result"}


def transcript_lines(path: Path) -> list[JSON]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def define(folder: Path, name: str, text_: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text_)
    return path


# ------------------------------------------------------------------ the round trip


def test_a_task_runs_a_separate_conversation_and_the_parent_sees_only_its_answer(
    fake_api: FakeAnthropic, run_wire: RunAgent, project: Path
) -> None:
    (project / "config.py").write_text("SECRET_DETAIL = 'only the sub-agent reads this'\n")
    fake_api.script(
        fake.reply(
            fake.text("I'll have the code searched."),
            fake.tool_use(
                "Task",
                {
                    "description": "find the config",
                    "prompt": "Where is the config defined?",
                    "subagent_type": "Explore",
                },
                id="toolu_task",
            ),
        ),
        fake.reply(fake.text("Searching."), fake.tool_use("Read", {"file_path": "config.py"}, id="toolu_read")),
        fake.reply(fake.text("It is defined in config.py:1."), usage=usage(1000, 20)),
        fake.reply(fake.text("The config lives in config.py.")),
    )

    ran = run_wire("where is the config?")

    assert ran.returncode == 0, ran.stderr
    parent_first, sub_first, sub_second, parent_second = (r.body for r in fake_api.requests)
    assert "Task" in names(parent_first["tools"])
    # The sub-agent's conversation: its own system prompt and tools, the prompt as its first message.
    assert sub_first["system"] != parent_first["system"]
    assert "You are Explore" in sub_first["system"][0]["text"]
    assert f"Working directory: {project}" in sub_first["system"][1]["text"]
    assert names(sub_first["tools"]) == EXPLORE_TOOLS
    assert [m["role"] for m in sub_first["messages"]] == ["user"]
    assert texts(sub_first["messages"][0]) == ["Where is the config defined?"]
    assert "where is the config?" not in json.dumps(sub_first)
    assert "SECRET_DETAIL" in json.dumps(sub_second["messages"][-1])
    # The parent's next request: only the final text and the footer, none of the sub-agent's work.
    [result] = parent_second["messages"][-1]["content"]
    assert result["tool_use_id"] == "toolu_task" and not result.get("is_error")
    answer, footer = result["content"].split("\n\n")
    assert answer == "It is defined in config.py:1."
    assert footer.startswith("[Explore sub-agent: 2 turns, 1 tool call, ") and footer.endswith(" tokens]")
    assert "SECRET_DETAIL" not in json.dumps(parent_second)
    assert "Searching." not in json.dumps(parent_second)
    # Byte-stable manifest: the prompt cache keeps hitting.
    assert json.dumps(parent_first["tools"]) == json.dumps(parent_second["tools"])


def test_the_footer_counts_the_sub_agents_turns_tool_calls_and_tokens(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    (project / "a.txt").write_text("alpha\n")
    model.script(
        reply(task("Read a.txt", id="toolu_task")),
        reply(tool_use("Read", {"file_path": "a.txt"}), usage=usage(500, 10)),
        reply(text("a.txt says alpha."), usage=usage(600, 5)),
        reply(text("done")),
    )

    assert run_agent("go").returncode == 0
    result = tool_results(model.requests[3])["toolu_task"]
    assert result["content"] == "a.txt says alpha.\n\n[Explore sub-agent: 2 turns, 1 tool call, 1,115 tokens]"


def test_sub_agents_cannot_start_sub_agents(model: ScriptedModel, run_agent: RunAgent) -> None:
    model.script(
        reply(task("nest", "general-purpose", id="toolu_task")),
        reply(task("deeper", "Explore", id="toolu_nested")),
        reply(text("I could not.")),
        reply(text("done")),
    )

    assert run_agent("go", permission_mode="bypassPermissions").returncode == 0
    assert "Task" not in names(model.requests[1].tools)
    # general-purpose: every tool the parent has but Task, and it neither asks the user nor leaves plan mode.
    parents = names(model.requests[0].tools)
    assert {"AskUserQuestion", "ExitPlanMode"} <= set(parents)
    not_inherited = ("Task", "AskUserQuestion", "ExitPlanMode")
    assert names(model.requests[1].tools) == [name for name in parents if name not in not_inherited]
    assert names(model.requests[1].tools) == [
        "Read", "Write", "Edit", "Bash", "Grep", "Glob", "WebFetch", "WebSearch", "Skill", "TodoWrite"
    ]  # fmt: skip
    nested = tool_results(model.requests[2])["toolu_nested"]
    assert nested["is_error"] and "Unknown tool 'Task'" in nested["content"]


def test_an_unknown_agent_type_is_an_error_listing_the_types(model: ScriptedModel, run_agent: RunAgent) -> None:
    model.script(reply(task("x", "Spelunker", id="toolu_task")), reply(text("ok")))

    assert run_agent("go").returncode == 0
    result = tool_results(model.requests[1])["toolu_task"]
    assert result["is_error"]
    assert result["content"] == "There is no agent type 'Spelunker'. The types are: general-purpose, Explore."


# ------------------------------------------------------------------ concurrency


def test_two_task_calls_in_one_turn_run_concurrently_and_answer_in_call_order(
    model: ScriptedModel, run_agent: RunAgent
) -> None:
    both_asking = threading.Barrier(2, timeout=WAIT_S)

    def together(request: ModelRequest) -> Reply | BaseException:
        try:
            both_asking.wait()  # sequential sub-agents never get here together
        except threading.BrokenBarrierError:
            return ModelAPIError("the two sub-agents' first requests did not overlap")
        [prompt] = texts(request.messages[0])
        return reply(text(f"answer to {prompt}"))

    model.script(
        reply(task("question A", id="toolu_a"), task("question B", id="toolu_b")),
        together,
        together,
        reply(text("both answered")),
    )

    ran = run_agent("ask both")

    assert ran.returncode == 0, ran.stderr
    last = model.requests[-1].messages[-1]["content"]
    assert [block["tool_use_id"] for block in last] == ["toolu_a", "toolu_b"]
    assert last[0]["content"].startswith("answer to question A\n\n[Explore sub-agent: 1 turn")
    assert last[1]["content"].startswith("answer to question B\n\n[Explore sub-agent: 1 turn")


# ------------------------------------------------------------------ agent types and definitions


def test_a_custom_definition_gives_its_tools_prompt_model_and_turn_limit(
    model: ScriptedModel, run_agent: RunAgent, project: Path, home: Path
) -> None:
    define(
        project / ".agentcli" / "agents",
        "reviewer",
        "---\nname: reviewer\ndescription: Reviews a change for bugs.\ntools: Read, Grep\n"
        "model: claude-haiku-4-5\nmaxTurns: 1\n---\nYou review code changes and list the bugs you find.\n",
    )
    define(home / ".agentcli" / "agents", "reviewer", "---\nname: reviewer\ndescription: The user's.\n---\nUser's.\n")
    (project / "a.py").write_text("x = 1\n")
    model.script(
        reply(task("Review a.py", "reviewer", id="toolu_task")),
        reply(text("Reading it."), tool_use("Read", {"file_path": "a.py"}, id="toolu_read")),
        reply(text("done")),
    )

    assert run_agent("review").returncode == 0
    listing = next(t["description"] for t in model.requests[0].tools if t["name"] == "Task")
    assert "- reviewer: Reviews a change for bugs. (Tools: Read, Grep.)" in listing
    assert "The user's." not in listing  # the project's definition wins
    sub = model.requests[1]
    assert sub.system[0]["text"] == "You review code changes and list the bugs you find."
    assert "# Environment" in sub.system[1]["text"] and "Model: claude-haiku-4-5" in sub.system[1]["text"]
    assert names(sub.tools) == ["Read", "Grep"]
    assert sub.model == "claude-haiku-4-5"
    # maxTurns 1: its first turn's call is not run, and the parent hears why and what was done.
    result = tool_results(model.requests[2])["toolu_task"]
    assert result["is_error"]
    assert "The reviewer sub-agent did not finish: it reached its turn limit (1 turns" in result["content"]
    assert "Done so far: 1 turn, 0 tool calls" in result["content"]
    assert "Its last message: Reading it." in result["content"]


def test_a_definition_naming_exit_plan_mode_starts_without_it_and_says_so(project: Path, in_process_env: None) -> None:
    define(
        project / ".claude" / "agents",
        "planner",
        "---\nname: planner\ndescription: Plans.\ntools: Read, ExitPlanMode, Grep\n---\nPlan it.\n",
    )
    model = ScriptedModel(
        reply(task("Plan it", "planner", id="toolu_task")),
        reply(text("A plan.")),
        reply(text("done")),
        check=validation_error,
    )
    events: list[Event] = []

    with Session(SessionOptions(), project, events.append, model=model) as session:
        session.send("plan")

    assert names(model.requests[1].tools) == ["Read", "Grep"]
    assert tool_results(model.requests[2])["toolu_task"].get("is_error") is not True
    [notice] = [e.text for e in events if isinstance(e, Notice) and "planner.md" in e.text]
    assert "names ExitPlanMode" in notice and "left out" in notice


def test_definitions_from_claude_folders_and_invalid_ones_skipped_and_reported_once(
    project: Path, home: Path, in_process_env: None
) -> None:
    define(project / ".claude" / "agents", "tester", "---\nname: tester\ndescription: Runs tests.\n---\nRun them.\n")
    define(project / ".agentcli" / "agents", "broken", "---\nname: broken\ntools: [1, 2]\n---\nBody.\n")
    model = ScriptedModel(reply(text("one")), reply(text("two")), check=validation_error)
    events: list[Event] = []

    with Session(SessionOptions(), project, events.append, model=model) as session:
        session.send("first")
        session.send("second")

    notices = [e.text for e in events if isinstance(e, Notice) and "agent definition" in e.text]
    assert len(notices) == 1 and "broken.md" in notices[0]
    listing = next(t["description"] for t in model.requests[0].tools if t["name"] == "Task")
    assert "- tester: Runs tests. (Tools: all tools but Task.)" in listing and "broken" not in listing
    assert json.dumps(model.requests[0].tools) == json.dumps(model.requests[1].tools)
    listed = {t.name: t.source for t in load_agent_types(project, home / ".agentcli")}
    assert listed == {
        "general-purpose": "built-in",
        "Explore": "built-in",
        "tester": str(project / ".claude" / "agents" / "tester.md"),
    }


def test_the_task_listing_changes_only_when_a_definition_does(project: Path, in_process_env: None) -> None:
    model = ScriptedModel(reply(text("one")), reply(text("two")), reply(text("three")), check=validation_error)
    with Session(SessionOptions(), project, lambda event: None, model=model) as session:
        session.send("first")
        session.send("second")
        define(project / ".agentcli" / "agents", "docs", "---\nname: docs\ndescription: Writes docs.\n---\nWrite.\n")
        session.send("third")

    first, second, third = (json.dumps(r.tools) for r in model.requests)
    assert first == second
    assert third != second and "- docs: Writes docs." in third


def test_definitions_added_in_new_subfolders_edited_or_removed_mid_session_reach_the_next_request(
    project: Path, home: Path, in_process_env: None
) -> None:
    """The listing is read again only when a stat says something changed: each kind of change is seen."""
    model = ScriptedModel(*(reply(text(f"answer {n}")) for n in range(6)), check=validation_error)
    agents = project / ".claude" / "agents"
    user_agents = home / ".agentcli" / "agents"
    with Session(SessionOptions(), project, lambda event: None, model=model) as session:
        session.send("first")
        (agents / "team").mkdir(parents=True)  # an empty subfolder first, its file after that request
        session.send("second")
        define(agents / "team", "reviewer", "---\nname: reviewer\ndescription: Reviews diffs.\n---\nReview.\n")
        session.send("third")
        define(agents / "team", "reviewer", "---\nname: reviewer\ndescription: Reviews code.\n---\nReview.\n")
        define(user_agents, "mine", "---\nname: mine\ndescription: My own.\n---\nHelp.\n")
        session.send("fourth")
        (agents / "team" / "reviewer.md").unlink()
        session.send("fifth")

    listings = [next(t["description"] for t in r.tools if t["name"] == "Task") for r in model.requests]
    assert "reviewer" not in listings[1]
    assert "- reviewer: Reviews diffs." in listings[2]
    assert "- reviewer: Reviews code." in listings[3] and "- mine: My own." in listings[3]
    assert "reviewer" not in listings[4] and "- mine: My own." in listings[4]


def test_a_tree_stamp_sees_every_change_below_its_folders(tmp_path: Path) -> None:
    root, missing = tmp_path / "agents", tmp_path / "not-yet"
    define(root / "a", "one", "x")
    stamp = TreeStamp([root, missing], [root / "a" / "one.md"])
    assert not stamp.changed()
    for change in (
        lambda: (root / "a" / "one.md").write_text("xy"),  # edited
        lambda: (root / "a" / "deep").mkdir(),  # a folder appears in a folder
        lambda: missing.mkdir(),  # a root appears
        lambda: (root / "a" / "one.md").rename(root / "a" / "two.md"),  # renamed
    ):
        change()
        assert stamp.changed()
        stamp = TreeStamp([root, missing], sorted(root.rglob("*.md")))
        assert not stamp.changed()
    (root / ".hidden").mkdir()
    assert stamp.changed()  # the root's own listing changed
    stamp = TreeStamp([root, missing], sorted(root.rglob("*.md")))
    (root / ".hidden" / "x.md").write_text("ignored")  # files in hidden folders are not definitions
    assert not stamp.changed()


def test_explore_cannot_write_even_when_everything_is_allowed(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    model.script(
        reply(task("Create notes.txt", id="toolu_task")),
        reply(tool_use("Write", {"file_path": "notes.txt", "content": "x"}, id="toolu_write")),
        reply(tool_use("Bash", {"command": "touch notes.txt"}, id="toolu_bash")),
        reply(text("I cannot write.")),
        reply(text("done")),
    )

    assert run_agent("go", permission_mode="bypassPermissions").returncode == 0
    assert not (project / "notes.txt").exists()
    for request, call in ((model.requests[2], "toolu_write"), (model.requests[3], "toolu_bash")):
        result = tool_results(request)[call]
        assert result["is_error"] and "Available tools: Read, Grep, Glob." in result["content"]


# ------------------------------------------------------------------ permissions


def test_a_denied_edit_inside_a_sub_agent_leaves_the_file_unchanged(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    (project / "app.py").write_text("x = 1\n")
    model.script(
        reply(task("Change x to 2 in app.py", "general-purpose", id="toolu_task")),
        reply(tool_use("Read", {"file_path": "app.py"}, id="toolu_read")),
        reply(tool_use("Edit", {"file_path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}, id="toolu_edit")),
        reply(text("The edit was denied.")),
        reply(text("done")),
    )

    ran = run_agent("change it")

    assert ran.returncode == 0, ran.stderr
    assert (project / "app.py").read_text() == "x = 1\n"
    denied = tool_results(model.requests[3])["toolu_edit"]
    assert denied["is_error"] and "Permission denied" in denied["content"]
    parent = tool_results(model.requests[4])["toolu_task"]
    assert parent["content"].startswith("The edit was denied.")


def test_sub_agents_questions_name_them_and_come_one_at_a_time(project: Path, in_process_env: None) -> None:
    asked: list[PermissionRequest] = []
    on_screen = threading.Lock()

    def prompter(request: PermissionRequest) -> Answer:
        assert on_screen.acquire(blocking=False), "two questions at once"
        try:
            asked.append(request)
            return Answer.yes()
        finally:
            on_screen.release()

    model = ScriptedModel(
        reply(task("list A", "general-purpose", id="toolu_a"), task("list B", "general-purpose", id="toolu_b")),
        lambda request: reply(tool_use("Bash", {"command": "ls -R"})),
        lambda request: reply(tool_use("Bash", {"command": "ls -R"})),
        lambda request: reply(text("listed")),
        lambda request: reply(text("listed")),
        reply(text("done")),
        check=validation_error,
    )

    with Session(SessionOptions(), project, lambda event: None, model=model, prompter=prompter) as session:
        session.send("list")

    assert [r.asked_label for r in asked] == ["general-purpose · Bash(ls -R)"] * 2
    assert all(r.heading == "general-purpose · Bash command" for r in asked)


# ------------------------------------------------------------------ skills

STAMP = "---\ndescription: Stamps the project.\nallowed-tools: Bash(touch:*)\n---\nStamp the project with touch."


def test_a_sub_agents_skill_grants_its_allowed_tools_to_its_own_calls_only(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    """Sub-agent A runs /stamp (allowed-tools: Bash(touch:*)) and may touch; its sibling B, asking
    while A's grant is in force, and the parent, after A ended, are asked as usual: in `run`, denied."""
    (project / ".commands").mkdir()
    (project / ".commands" / "stamp.md").write_text(STAMP)
    a_granted, b_tried = threading.Event(), threading.Event()

    def serve(request: ModelRequest) -> Reply | BaseException:
        messages = request.messages
        prompt = texts(messages[0])[-1]
        if "Task" in names(request.tools):  # the parent
            if len(messages) == 1:
                return reply(task("A", "general-purpose", id="toolu_a"), task("B", "general-purpose", id="toolu_b"))
            if len(messages) == 3:
                return reply(tool_use("Bash", {"command": "touch by-parent"}, id="toolu_parent"))
            return reply(text("done"))
        if prompt == "A":
            if len(messages) == 1:
                return reply(tool_use("Skill", {"skill": "stamp"}, id="toolu_skill"))
            if len(messages) == 3:
                a_granted.set()
                if not b_tried.wait(WAIT_S):
                    return ModelAPIError("B never tried its command")
                return reply(tool_use("Bash", {"command": "touch by-a"}, id="toolu_touch_a"))
            return reply(text("A stamped."))
        if len(messages) == 1:
            if not a_granted.wait(WAIT_S):
                return ModelAPIError("A never ran its skill")
            return reply(tool_use("Bash", {"command": "touch by-b"}, id="toolu_touch_b"))
        b_tried.set()
        return reply(text("B was refused."))

    model.script(*[serve] * 8)

    ran = run_agent("stamp it")

    assert ran.returncode == 0, ran.stderr
    assert (project / "by-a").exists()
    assert not (project / "by-b").exists()
    assert not (project / "by-parent").exists()
    sub_a = next(r for r in model.requests if "Task" not in names(r.tools) and texts(r.messages[0])[-1] == "A")
    # The sub-agent is told which skills there are, as its parent was.
    assert "- /stamp: Stamps the project." in texts(sub_a.messages[0])[0]
    b_result = next(tool_results(r)["toolu_touch_b"] for r in model.requests if "toolu_touch_b" in tool_results(r))
    assert b_result["is_error"] and "Permission denied" in b_result["content"]
    parent_result = tool_results(model.requests[-1])["toolu_parent"]
    assert parent_result["is_error"] and "Permission denied" in parent_result["content"]


def test_a_skill_a_sub_agent_writes_and_runs_grants_nothing(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    helper = "---\nallowed-tools: Bash\n---\nHelper: !`touch bang`\n"
    model.script(
        reply(task("set up a helper", "general-purpose", id="toolu_task")),
        reply(tool_use("Write", {"file_path": ".commands/helper.md", "content": helper}, id="toolu_write")),
        reply(tool_use("Skill", {"skill": "helper"}, id="toolu_skill")),
        reply(tool_use("Bash", {"command": "touch later"}, id="toolu_bash")),
        reply(text("The helper did not work.")),
        reply(text("done")),
    )
    allowed = ["Write(./.commands/helper.md)"]

    ran = run_agent("go", permission_mode="acceptEdits", allowed_tools=allowed, output_format="stream-json")

    assert ran.returncode == 0, ran.stderr
    assert (project / ".commands" / "helper.md").read_text() == helper
    assert not (project / "bang").exists() and not (project / "later").exists()
    skill_result = tool_results(model.requests[3])["toolu_skill"]
    assert skill_result["is_error"] and "/helper's allowed-tools are not in force" in skill_result["content"]
    bash_result = tool_results(model.requests[4])["toolu_bash"]
    assert bash_result["is_error"] and "Permission denied" in bash_result["content"]


# ------------------------------------------------------------------ interrupts


def test_ctrl_c_stops_every_running_sub_agent_and_answers_its_pending_calls(
    project: Path, in_process_env: None
) -> None:
    both_asking = threading.Barrier(3, timeout=WAIT_S)
    interrupted = threading.Event()

    def hold(request: ModelRequest) -> Reply | BaseException:
        both_asking.wait()
        interrupted.wait(WAIT_S)  # the stream ends after the user pressed Ctrl-C
        return reply(text("Touching."), tool_use("Bash", {"command": "touch after-interrupt"}))

    model = ScriptedModel(
        reply(task("A", "general-purpose", id="toolu_a"), task("B", "general-purpose", id="toolu_b")),
        hold,
        hold,
        check=validation_error,
    )
    events: list[Event] = []
    main = threading.main_thread().ident
    assert main is not None and threading.get_ident() == main

    def press_ctrl_c() -> None:
        both_asking.wait()
        signal.pthread_kill(main, signal.SIGINT)

    presser = threading.Thread(target=press_ctrl_c)
    presser.start()
    with Session(SessionOptions(permission_mode="bypassPermissions"), project, events.append, model=model) as session:
        with pytest.raises(KeyboardInterrupt):
            session.send("do both")
        session.record_interrupt()
        interrupted.set()
        presser.join()
        session.agent.executor.close()  # waits for the sub-agents to stop
        finished = [e for e in events if isinstance(e, SubagentFinished)]
        assert sorted(e.parent_tool_use_id for e in finished) == ["toolu_a", "toolu_b"]
        assert all(e.error == "it was interrupted by the user" for e in finished)
        assert not (project / "after-interrupt").exists()
        for event in finished:
            assert event.transcript is not None
            messages = [r["message"] for r in transcript_lines(Path(event.transcript)) if r["type"] == "message"]
            *_, calls, answers = messages
            assert calls["role"] == "assistant"
            assert answers["content"][0]["content"] == "Interrupted by the user before this call finished."
            assert answers["content"][-1]["text"] == INTERRUPTED_MARKER
        last = session.agent.messages[-1]["content"]
        assert [b.get("tool_use_id") for b in last[:2]] == ["toolu_a", "toolu_b"]
        assert last[-1]["text"] == INTERRUPTED_MARKER


def test_ctrl_c_aborts_the_sub_agents_model_requests_and_the_parent_hears_what_they_had_done(
    fake_api: FakeAnthropic, project: Path, in_process_env: None
) -> None:
    """Over the wire: each sub-agent waits on a model stream that never ends. Ctrl-C must not wait
    for those streams (the server holds them until the client hangs up)."""
    (project / "config.py").write_text("LOADER = 1\n")

    def serve(request: fake.RecordedRequest) -> fake.Reply:
        messages = request.body["messages"]
        if "Task" in names(request.body.get("tools", [])):  # the main agent
            if len(messages) == 1:
                return fake.reply(
                    fake.tool_use(
                        "Task", {"description": "find it", "prompt": "A", "subagent_type": "Explore"}, id="toolu_a"
                    ),
                    fake.tool_use(
                        "Task", {"description": "list it", "prompt": "B", "subagent_type": "Explore"}, id="toolu_b"
                    ),
                )
            return fake.reply(fake.text("Carrying on."))
        if texts(messages[0]) == ["A"] and len(messages) == 1:  # A searches once, then thinks for ever
            return fake.reply(fake.tool_use("Grep", {"pattern": "LOADER"}, id="toolu_grep"))
        return fake.reply(fake.text("This never arrives."), stall_after=0)

    fake_api.script(*[serve] * 5)
    main = threading.main_thread().ident
    assert main is not None

    def press_ctrl_c() -> None:
        fake_api.wait_for_requests(4, timeout=WAIT_S)  # the main agent's, A's two and B's one
        signal.pthread_kill(main, signal.SIGINT)

    events: list[Event] = []
    both_finished = threading.Event()

    def record(event: Event) -> None:
        events.append(event)
        if len([e for e in events if isinstance(e, SubagentFinished)]) == 2:
            both_finished.set()

    wire = AnthropicModel(api_key=TEST_KEY, base_url=fake_api.url)
    presser = threading.Thread(target=press_ctrl_c)
    presser.start()
    with Session(SessionOptions(), project, record, model=wire) as session:
        with pytest.raises(KeyboardInterrupt):
            session.send("look for the loader")
        presser.join()
        session.record_interrupt()
        # Both sub-agents stop while their streams are still held open: they hung up.
        assert both_finished.wait(WAIT_S), "a sub-agent kept waiting for its model after Ctrl-C"
        wait_until(lambda: len([r for r in fake_api.requests if r.disconnected]) == 2, "both streams hung up")
        assert all(e.error == "it was interrupted by the user" for e in events if isinstance(e, SubagentFinished))
        # The parent's results say what each sub-agent had done before it was stopped.
        results = {b["tool_use_id"]: b for b in session.agent.messages[-1]["content"] if b.get("tool_use_id")}
        assert results["toolu_a"]["is_error"]
        assert results["toolu_a"]["content"].startswith(
            "The Explore sub-agent did not finish: it was interrupted by the user.\nDone so far: 1 turn, 1 tool call, "
        )
        assert "(Grep ×1)." in results["toolu_a"]["content"]
        assert results["toolu_b"]["content"].startswith(
            "The Explore sub-agent did not finish: it was interrupted by the user.\nDone so far: 0 turns, 0 tool calls"
        )
        # The conversation is still valid: the next message goes through (the fake checks it).
        assert session.send("go on").text == "Carrying on."
    wire.close()


def test_a_question_waiting_behind_another_is_answered_no_on_interrupt(project: Path, in_process_env: None) -> None:
    asked: list[PermissionRequest] = []
    question_up = threading.Event()

    def prompter(request: PermissionRequest) -> Answer:
        asked.append(request)
        question_up.set()
        assert request.cancel is not None
        request.cancel.wait(WAIT_S)  # the terminal's question stops when the turn is interrupted
        return Answer.no()

    model = ScriptedModel(
        reply(task("A", "general-purpose", id="toolu_a"), task("B", "general-purpose", id="toolu_b")),
        lambda request: reply(tool_use("Bash", {"command": "touch made-by-a-sub-agent"})),
        lambda request: reply(tool_use("Bash", {"command": "touch made-by-a-sub-agent"})),
        check=validation_error,
    )
    main = threading.main_thread().ident
    assert main is not None

    events: list[Event] = []
    both_calls_at_the_gate = threading.Event()

    def record(event: Event) -> None:
        events.append(event)
        started = [e for e in events if isinstance(e, ToolCallStarted) and e.agent_id != MAIN_AGENT]
        if len(started) == 2:
            both_calls_at_the_gate.set()

    def press_ctrl_c() -> None:
        question_up.wait(WAIT_S)
        both_calls_at_the_gate.wait(WAIT_S)  # the second sub-agent's call is queued behind the question
        signal.pthread_kill(main, signal.SIGINT)

    presser = threading.Thread(target=press_ctrl_c)
    presser.start()
    with Session(SessionOptions(), project, record, model=model, prompter=prompter) as session:
        with pytest.raises(KeyboardInterrupt):
            session.send("do both")
        presser.join()
        session.agent.executor.close()
    assert len(asked) == 1  # the second question was never put: answered for the user
    assert not (project / "made-by-a-sub-agent").exists()
    seen = [f"{type(e).__name__}({e.agent_id[-4:]})" for e in events]  # what happened, if it fails
    assert len([e for e in events if isinstance(e, SubagentFinished)]) == 2, seen


# ------------------------------------------------------------------ usage and budget


def test_usage_and_cost_include_sub_agents(model: ScriptedModel, run_agent: RunAgent) -> None:
    model.script(
        reply(task("look", id="toolu_task"), usage=usage(100, 10)),
        reply(text("found"), usage=usage(1000, 20)),
        reply(text("done"), usage=usage(200, 5)),
    )

    ran = run_agent("go", output_format="json")

    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["usage"]["input_tokens"] == 1300
    assert out["usage"]["output_tokens"] == 35


def test_a_sub_agent_on_another_model_is_priced_at_its_models_rates(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    define(
        project / ".agentcli" / "agents",
        "cheap",
        "---\nname: cheap\ndescription: Cheap searches.\nmodel: claude-haiku-4-5\n---\nSearch.\n",
    )
    model.script(
        reply(task("look", "cheap", id="toolu_task"), usage=usage(100, 10)),
        reply(text("found"), usage=usage(1000, 20)),
        reply(text("done"), usage=usage(100, 10)),
    )

    ran = run_agent("go", output_format="json", model="claude-sonnet-5-5")

    assert ran.returncode == 0, ran.stderr
    assert model.requests[1].model == "claude-haiku-4-5"
    out = json.loads(ran.stdout)
    # claude-sonnet-5-5 ($2 / $10 a million) for the main agent's 200 in and 20 out, claude-haiku-4-5
    # ($1 / $5) for the sub-agent's 1,000 in and 20 out.
    assert out["total_cost_usd"] == round((200 * 2 + 20 * 10 + 1000 * 1 + 20 * 5) / 1e6, 6)
    assert out["usage"]["input_tokens"] == 1200 and out["usage"]["output_tokens"] == 40


def test_session_usage_includes_sub_agents(project: Path, in_process_env: None) -> None:
    model = ScriptedModel(
        reply(task("look", id="toolu_task"), usage=usage(100, 10)),
        reply(text("found"), usage=usage(1000, 20)),
        reply(text("done"), usage=usage(200, 5)),
        check=validation_error,
    )
    with Session(SessionOptions(), project, lambda event: None, model=model) as session:
        session.send("go")
        assert (session.usage.input_tokens, session.usage.output_tokens) == (1300, 35)


def test_a_sub_agent_spends_the_runs_token_budget(model: ScriptedModel, run_agent: RunAgent, project: Path) -> None:
    model.script(
        reply(task("look", id="toolu_task"), usage=usage(990, 10)),
        reply(tool_use("Glob", {"pattern": "*"}), usage=usage(990, 10)),  # 2,000 in all: over the budget
        reply(text("found")),
        reply(text("done")),
    )

    ran = run_agent("go", max_budget_tokens=1500)

    # The sub-agent's Glob never ran, and once the budget is passed the main agent sends nothing more.
    assert len(model.requests) == 2 and model.remaining == 2
    assert "✗ Task(look around) — Explore: stopped, the run's token budget was used up" in ran.stderr
    assert (
        "Error: Used 2,000 tokens, over this run's budget of 1,500 (raise it with --max-budget-tokens)." in ran.stderr
    )
    assert ran.returncode == 1


def test_a_sub_agent_may_spend_only_what_is_left_of_the_runs_dollar_budget(project: Path, in_process_env: None) -> None:
    with Session(SessionOptions(), project, lambda event: None) as probe:
        turn_cost = probe.model_info.cost_usd(Usage(input_tokens=400))
    model = ScriptedModel(
        reply(task("look", id="toolu_task"), usage=usage(400, 0)),  # the parent spends one turn's cost
        reply(tool_use("Glob", {"pattern": "*"}), usage=usage(400, 0)),  # the sub-agent one more: over what was left
        reply(text("done")),
        check=validation_error,
    )
    events: list[Event] = []
    options = SessionOptions(max_budget_usd=turn_cost * 1.5)
    with Session(options, project, events.append, model=model) as session, pytest.raises(CostBudgetExceeded):
        session.send("go")

    [result] = [e.result for e in events if isinstance(e, ToolCallFinished) and e.name == "Task"]
    assert result.is_error and "the run's cost budget was used up" in result.content
    assert not [e for e in events if isinstance(e, ToolCallFinished) and e.name == "Glob"]
    assert len(model.requests) == 2  # the parent sent nothing after the budget was passed


def test_concurrent_sub_agents_draw_on_one_dollar_budget(
    model: ScriptedModel, run_agent: RunAgent, project: Path
) -> None:
    """Three Task calls under a $40 budget, each sub-agent spending $5 a turn, the requests of their
    first three turns in flight together (the worst case). Given the whole remaining budget each,
    as before, they spent $40 apiece; drawing on one budget, the run passes $40 by at most the
    three requests in flight when it ran out, and the main agent sends nothing after."""
    settings = {"models": {"priced-model": {"input_usd_per_mtok": 5000, "output_usd_per_mtok": 0}}}
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_text(json.dumps(settings))
    each_round = threading.Barrier(3, timeout=WAIT_S)

    def answer(request: ModelRequest) -> Reply | BaseException:
        if "Task" in names(request.tools):  # the main agent again: it should not have asked
            return reply(text("All three reported."))
        if len(request.messages) <= 5:  # a sub-agent's first three turns: all three in flight at once
            try:
                each_round.wait()
            except threading.BrokenBarrierError:
                return ModelAPIError("the sub-agents' requests did not overlap")
        turn = (len(request.messages) + 1) // 2
        return reply(tool_use("Glob", {"pattern": f"*{turn}"}), usage=usage(1000, 0))  # $5

    model.script(
        reply(
            task("A", id="toolu_a", description="A"),
            task("B", id="toolu_b", description="B"),
            task("C", id="toolu_c", description="C"),
            usage=usage(200, 0),  # $1
        ),
        *[answer] * 40,
    )

    ran = run_agent("go", model="priced-model", max_budget_usd=40)

    assert ran.returncode == 1
    for name in "ABC":  # each sub-agent says why it stopped
        assert f"✗ Task({name}) — Explore: stopped, the run's cost budget was used up" in ran.stderr
    # $1, then rounds of 3 x $5: $31 after two (under $40), $46 after the third; one sub-agent may
    # have sent its fourth request before its siblings' third ones were counted: $51.
    [spent] = re.findall(r"Error: Spent \$(\d+\.\d{4}), over this run's budget of \$40\.0000", ran.stderr)
    assert float(spent) in (46, 51), ran.stderr
    assert float(spent) <= 40 + 3 * 5  # the bound the docs state: the budget plus the requests in flight
    assert len([r for r in model.requests if "Task" in names(r.tools)]) == 1  # the main agent asked once
    assert len(model.requests) == 1 + float(spent) // 5


# ------------------------------------------------------------------ events and transcripts


def test_sub_agent_events_carry_its_id_and_bypass_the_parents_transcript(project: Path, in_process_env: None) -> None:
    model = ScriptedModel(
        reply(task("look", id="toolu_task", description="find the loader")),
        reply(text("Sub-agent thinking aloud."), tool_use("Glob", {"pattern": "*.py"})),
        reply(text("found it")),
        reply(text("done")),
        check=validation_error,
    )
    events: list[Event] = []
    with Session(SessionOptions(), project, events.append, model=model) as session:
        session.send("go")
        session_id = session.id

    [started] = [e for e in events if isinstance(e, SubagentStarted)]
    [finished] = [e for e in events if isinstance(e, SubagentFinished)]
    assert (started.agent_id, started.parent_tool_use_id, started.subagent_type, started.description) == (
        "main",
        "toolu_task",
        "Explore",
        "find the loader",
    )
    inside = events[events.index(started) + 1 : events.index(finished)]
    assert inside and all(e.agent_id == started.subagent_id for e in inside)
    assert (finished.turns, finished.tool_calls, finished.error) == (2, 1, None)

    state = project_state_dir(project)
    parent_records = transcript_lines(state / f"{session_id}.jsonl")
    assert "Sub-agent thinking aloud." not in json.dumps(parent_records)
    [linked] = [r for r in parent_records if "subagents" in r]
    assert linked["subagents"] == {"toolu_task": finished.transcript}
    sub_path = Path(str(finished.transcript))
    assert sub_path == state / session_id / "subagents" / f"{started.subagent_id}.jsonl"
    sub_records = transcript_lines(sub_path)
    sub_messages = [r["message"] for r in sub_records if r["type"] == "message"]
    assert texts(sub_messages[0]) == ["look"]
    assert "Sub-agent thinking aloud." in json.dumps(sub_messages[1])
    assert any(r["type"] == "title" and r["title"] == "find the loader" for r in sub_records)
    # Not a session of its own: /resume and --continue see only the parent.
    assert [info.id for info in list_sessions(project)] == [session_id]
