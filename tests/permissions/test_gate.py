"""The gate: modes × tools, rules, paths outside the project, prompting, and the messages."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from agentcli.contracts import Cancellation, Decision, McpOrigin, ToolContext
from agentcli.errors import UsageError
from agentcli.permissions.gate import AgentGate, Gate
from agentcli.permissions.prompt import Answer, PermissionRequest
from agentcli.workspace.local import LocalWorkspace
from tests.permissions.helpers import TOOLS, Recorder, StandIn, check, mcp_tool, outcome, rules
from tests.waiting import CEILING, wait_until


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\nbeta\n")
    (root / "src" / "m.py").write_text("x = 1\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s")
    return root


CALLS = {
    "read": ("Read", {"file_path": "a.txt"}),
    "grep": ("Grep", {"pattern": "x"}),
    "glob": ("Glob", {"pattern": "*.py", "path": "src"}),
    "read-outside": ("Read", {"file_path": "../outside/secret.txt"}),
    "write": ("Write", {"file_path": "src/new.py", "content": "y"}),
    "edit": ("Edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
    "write-outside": ("Write", {"file_path": "../outside/new.txt", "content": "y"}),
    "bash": ("Bash", {"command": "ls"}),
    "mcp": ("mcp__srv__do", {}),
    "mcp-read-only": ("mcp__srv__look", {}),
}

MATRIX = {
    #                 read     grep     glob     read-out write    edit     write-out bash    mcp      mcp-ro
    "default": ("allow", "allow", "allow", "ask", "ask", "ask", "ask", "ask", "ask", "ask"),
    "acceptEdits": ("allow", "allow", "allow", "ask", "allow", "allow", "ask", "ask", "ask", "ask"),
    "plan": ("allow", "allow", "allow", "ask", "deny", "deny", "deny", "deny", "deny", "ask"),
    "bypassPermissions": ("allow",) * 10,
}


@pytest.mark.parametrize("mode", list(MATRIX))
@pytest.mark.parametrize("call", list(CALLS))
def test_modes_by_tools(project: Path, mode: str, call: str) -> None:
    expected = MATRIX[mode][list(CALLS).index(call)]
    tool, tool_input = CALLS[call]
    assert outcome(Gate(mode=mode), tool, tool_input, project) == expected


@pytest.mark.parametrize("mode", list(MATRIX))
def test_a_deny_rule_wins_in_every_mode(project: Path, mode: str) -> None:
    gate = Gate(rules(allow=("Bash", "Read", "Edit"), deny=("Bash(ls:*)", "Read(./a.txt)", "Edit(src/**)")), mode)
    assert outcome(gate, "Bash", {"command": "ls -la"}, project) == "deny"
    assert outcome(gate, "Read", {"file_path": "a.txt"}, project) == "deny"
    assert outcome(gate, "Write", {"file_path": "src/new.py", "content": ""}, project) == "deny"


def test_plan_mode_refuses_even_what_a_rule_allows(project: Path) -> None:
    gate = Gate(rules(allow=("Bash(ls:*)",)), "plan")
    decision = check(gate, "Bash", {"command": "ls"}, project)
    assert not decision.allowed and "plan mode" in decision.message


def test_ask_rules_ask_even_in_bypass_mode(project: Path) -> None:
    gate = Gate(rules(allow=("Bash",), ask=("Bash(git push:*)",)), "bypassPermissions")
    assert outcome(gate, "Bash", {"command": "git status"}, project) == "allow"
    assert outcome(gate, "Bash", {"command": "git fetch && git push"}, project) == "ask"


def test_allow_rules_by_tool(project: Path) -> None:
    gate = Gate(rules(allow=("Bash(git diff:*)", "Edit(src/**)", "mcp__srv")))
    assert outcome(gate, "Bash", {"command": "git diff HEAD"}, project) == "allow"
    assert outcome(gate, "Bash", {"command": "git diff HEAD && touch x"}, project) == "ask"
    # An Edit rule covers Write.
    assert outcome(gate, "Write", {"file_path": "src/deep/new.py", "content": ""}, project) == "allow"
    assert outcome(gate, "Edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b"}, project) == "ask"
    assert outcome(gate, "mcp__srv__do", {}, project) == "allow"
    assert outcome(gate, "mcp__other__do", {}, project) == "ask"


def test_read_rules_cover_grep_and_glob(project: Path) -> None:
    gate = Gate(rules(deny=("Read(src/**)",)))
    assert outcome(gate, "Grep", {"pattern": "x", "path": "src"}, project) == "deny"
    assert outcome(gate, "Glob", {"pattern": "*", "path": "src/m.py"}, project) == "deny"
    assert outcome(gate, "Grep", {"pattern": "x", "path": "a.txt"}, project) == "allow"


# --------------------------------------------------------------- outside the project


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan"])
def test_dot_dot_out_of_the_project_is_never_approved_by_a_mode(project: Path, mode: str) -> None:
    assert outcome(Gate(mode=mode), "Read", {"file_path": "src/../../outside/secret.txt"}, project) == "ask"
    assert outcome(Gate(mode=mode), "Grep", {"pattern": "x", "path": ".."}, project) == "ask"


def test_a_symlink_out_of_the_project_is_outside(project: Path) -> None:
    (project / "escape").symlink_to(project.parent / "outside")
    gate = Gate(rules(allow=("Edit", "Read(**)")), "acceptEdits")
    assert outcome(gate, "Read", {"file_path": "escape/secret.txt"}, project) == "ask"
    assert outcome(gate, "Write", {"file_path": "escape/new.txt", "content": ""}, project) == "ask"
    assert outcome(gate, "Write", {"file_path": "src/ok.txt", "content": ""}, project) == "allow"


def test_a_path_that_leaves_and_comes_back_is_inside(project: Path) -> None:
    gate = Gate(mode="acceptEdits")
    assert outcome(gate, "Edit", {"file_path": "../project/a.txt", "old_string": "a", "new_string": "b"}, project) == (
        "allow"
    )


def test_only_a_rule_naming_the_outside_path_allows_it(project: Path) -> None:
    outside = project.parent / "outside"
    gate = Gate(rules(allow=(f"Edit(/{outside}/**)", f"Read(/{outside}/secret.txt)")))
    assert outcome(gate, "Write", {"file_path": str(outside / "new.txt"), "content": ""}, project) == "allow"
    assert outcome(gate, "Read", {"file_path": "../outside/secret.txt"}, project) == "allow"
    assert outcome(gate, "Read", {"file_path": "../outside/other.txt"}, project) == "ask"


def test_deny_rules_see_through_symlinks_both_ways(project: Path) -> None:
    (project / ".env").write_text("KEY=1")
    (project / "innocent").symlink_to(project / ".env")
    gate = Gate(rules(deny=("Read(./.env)",)))
    assert outcome(gate, "Read", {"file_path": "innocent"}, project) == "deny"
    (project / "link").symlink_to(project.parent / "outside")
    gate = Gate(rules(deny=("Read(./link/**)",)), "bypassPermissions")
    assert outcome(gate, "Read", {"file_path": "link/secret.txt"}, project) == "deny"


# -------------------------------------------------------------------- non-interactive


def test_non_interactive_bash_denial_names_the_rule(project: Path) -> None:
    gate = Gate(rules(allow=("Bash(echo:*)",)))
    decision = check(gate, "Bash", {"command": "echo hi && touch x"}, project)
    assert not decision.allowed
    first = decision.message.splitlines()[0]
    assert "`echo hi && touch x` needs approval, and this run is non-interactive" in first
    assert '--allowed-tools "Bash(touch:*)"' in first and "--permission-mode bypassPermissions" in first


def test_non_interactive_edit_denial_offers_accept_edits(project: Path) -> None:
    decision = check(Gate(), "Edit", {"file_path": "src/m.py", "old_string": "1", "new_string": "2"}, project)
    first = decision.message.splitlines()[0]
    assert "Edit of src/m.py" in first
    assert '--permission-mode acceptEdits or --allowed-tools "Edit(./src/**)"' in first


def test_non_interactive_outside_denial_names_an_absolute_rule(project: Path) -> None:
    decision = check(Gate(mode="acceptEdits"), "Write", {"file_path": "../outside/n.txt", "content": ""}, project)
    first = decision.message.splitlines()[0]
    outside = (project.parent / "outside").resolve()
    assert "(outside the project)" in first
    assert f'--allowed-tools "Edit(/{outside}/n.txt)"' in first
    # ...and that rule really allows it.
    gate = Gate(rules(allow=(f"Edit(/{outside}/n.txt)",)))
    assert outcome(gate, "Write", {"file_path": "../outside/n.txt", "content": ""}, project) == "allow"


def test_a_command_no_rule_can_cover_points_to_the_mode(project: Path) -> None:
    decision = check(Gate(), "Bash", {"command": "echo a\necho $(date)"}, project)
    assert "only --allowed-tools Bash or --permission-mode bypassPermissions would" in decision.message


# ------------------------------------------------------------------------ prompting


def test_yes_runs_once_and_asks_again_next_time(project: Path) -> None:
    recorder = Recorder(Answer.yes())
    gate = Gate(prompter=recorder)
    assert check(gate, "Bash", {"command": "git diff HEAD~1", "description": "Show changes"}, project).allowed
    request = recorder.requests[0]
    assert (request.title, request.subject, request.note) == ("Bash command", "git diff HEAD~1", "Show changes")
    assert request.suggestion is not None and request.suggestion.rules == ("Bash(git diff:*)",)
    assert [o.key for o in request.options()] == ["1", "2", "3"]
    assert check(gate, "Bash", {"command": "git diff"}, project).allowed
    assert len(recorder.requests) == 2


def test_always_saves_a_bash_rule_and_stops_asking(project: Path) -> None:
    local = project / ".agentcli" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"model": "m", "permissions": {"allow": ["Read"]}}))
    recorder = Recorder()
    recorder.answers.append(Answer.always(["Bash(git diff:*)"]))
    notices: list[str] = []
    gate = Gate(prompter=recorder, local_settings=local, on_notice=notices.append)
    assert check(gate, "Bash", {"command": "git diff HEAD~1"}, project).allowed
    assert check(gate, "Bash", {"command": "git diff --stat"}, project).allowed
    assert len(recorder.requests) == 1
    assert json.loads(local.read_text()) == {"model": "m", "permissions": {"allow": ["Read", "Bash(git diff:*)"]}}
    assert notices == [f"Saved Bash(git diff:*) to {local}."]
    # Still sound: the saved prefix does not let a compound through.
    assert not check(Gate(rules(allow=("Bash(git diff:*)",))), "Bash", {"command": "git diff; rm x"}, project).allowed


def test_always_for_an_edit_lasts_for_the_session_only(project: Path) -> None:
    local = project / ".agentcli" / "settings.local.json"
    recorder = Recorder()
    gate = Gate(prompter=recorder, local_settings=local)
    edit = {"file_path": "src/m.py", "old_string": "x = 1", "new_string": "x = 2"}
    check(gate, "Edit", edit, project)
    request = recorder.requests[0]
    assert request.suggestion is not None
    assert request.suggestion.rules == ("Edit(./src/**)",) and request.suggestion.scope == "session"
    recorder.answers.append(Answer.always(request.suggestion.rules))
    recorder.requests.clear()
    assert check(gate, "Edit", edit, project).allowed
    assert check(gate, "Write", {"file_path": "src/other.py", "content": ""}, project).allowed
    assert len(recorder.requests) == 1
    assert outcome(gate, "Write", {"file_path": "top.txt", "content": ""}, project) == "ask"
    assert not local.exists()


def test_no_with_a_reason_tells_the_model(project: Path) -> None:
    gate = Gate(prompter=Recorder(Answer.no("use pytest -q instead")))
    decision = check(gate, "Bash", {"command": "pytest"}, project)
    assert not decision.allowed
    assert "The user denied permission for the Bash command `pytest`" in decision.message
    assert "The user said: use pytest -q instead" in decision.message


def test_no_without_a_reason(project: Path) -> None:
    decision = check(Gate(prompter=Recorder(Answer.no())), "Bash", {"command": "pytest"}, project)
    assert not decision.allowed and "The user said" not in decision.message


def test_the_edit_question_carries_a_diff(project: Path) -> None:
    recorder = Recorder(Answer.no())
    gate = Gate(prompter=recorder)
    check(gate, "Edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"}, project)
    request = recorder.requests[0]
    assert (request.title, request.subject) == ("Edit file", "a.txt")
    assert request.diff is not None
    assert "-beta\n" in request.diff and "+gamma\n" in request.diff and " alpha\n" in request.diff
    check(gate, "Write", {"file_path": "../outside/new.txt", "content": "hello\n"}, project)
    outside = recorder.requests[1]
    assert outside.outside and outside.diff is not None and "+hello" in outside.diff
    assert outside.reason.startswith("It touches") and "outside the project" in outside.reason


def test_an_ask_rule_offers_no_dont_ask_again(project: Path) -> None:
    recorder = Recorder()
    gate = Gate(rules(ask=("Bash(git push:*)",)), prompter=recorder)
    check(gate, "Bash", {"command": "git push"}, project)
    request = recorder.requests[0]
    assert request.suggestion is None
    assert [(o.key, o.choice) for o in request.options()] == [("1", "yes"), ("2", "no")]
    assert 'ask rule "Bash(git push:*)"' in request.reason


def test_choice_keys() -> None:
    from agentcli.permissions.prompt import PermissionRequest
    from agentcli.permissions.suggest import Suggestion

    request = PermissionRequest("Bash", {}, "bash", "Bash command", "ls", "", Suggestion(("Bash(ls:*)",), "local"))
    assert [request.choice_for(k) for k in ("1", "2", "3", "y", "YES", "n", "\x1b", "9")] == [
        "yes", "always", "no", "yes", "yes", "no", "no", None,
    ]  # fmt: skip
    assert request.answer("always") == Answer.always(["Bash(ls:*)"])
    assert request.answer("no", "because") == Answer.no("because")


# ------------------------------------------------------------------- runtime changes


def test_the_mode_can_change_at_runtime(project: Path) -> None:
    gate = Gate()
    write = ("Write", {"file_path": "n.txt", "content": ""})
    assert outcome(gate, *write, project) == "ask"
    gate.mode = "acceptEdits"
    assert outcome(gate, *write, project) == "allow"
    assert gate.cycle_mode() == "plan" and outcome(gate, *write, project) == "deny"
    assert gate.cycle_mode() == "default"
    with pytest.raises(UsageError):
        gate.mode = "yolo"


def test_temporary_rules_last_for_the_block(project: Path) -> None:
    notices: list[str] = []
    gate = Gate(rules(allow=("Bash(ls:*)",), deny=("Bash(rm:*)",)), on_notice=notices.append)
    with gate.temporary_allow(["Bash(make:*)", "Bash(rm:*)", "Bash(ls:*)", "Bash("]):
        assert check(gate, "Bash", {"command": "make test"}, project).allowed
        assert not check(gate, "Bash", {"command": "rm x"}, project).allowed
    assert not check(gate, "Bash", {"command": "make test"}, project).allowed
    assert check(gate, "Bash", {"command": "ls"}, project).allowed  # a rule it already had stays
    assert notices and 'Ignored the rule "Bash("' in notices[0]


def test_an_agent_gates_temporary_rules_hold_for_its_calls_only(project: Path) -> None:
    notices: list[str] = []
    gate = Gate(rules(deny=("Bash(rm:*)",)), on_notice=notices.append)
    mine, sibling = AgentGate(gate), AgentGate(gate)
    with mine.temporary_allow(["Bash(make:*)", "Bash(rm:*)", "Bash("], label="/build"):
        assert check(mine, "Bash", {"command": "make test"}, project).allowed
        assert not check(mine, "Bash", {"command": "rm x"}, project).allowed  # deny still wins
        assert not check(sibling, "Bash", {"command": "make test"}, project).allowed
        assert not check(gate, "Bash", {"command": "make test"}, project).allowed
    assert not check(mine, "Bash", {"command": "make test"}, project).allowed
    assert notices and 'Ignored the rule "Bash(" from /build' in notices[0]
    gate.mode = "acceptEdits"  # the session's mode is the sub-agent's too
    assert check(mine, "Write", {"file_path": "n.txt", "content": ""}, project).allowed


def test_paths_that_cannot_be_checked_are_denied_not_crashed_on(project: Path) -> None:
    (project / "loop").symlink_to(project / "loop")
    gate = Gate(rules(deny=("Read(*.pem)",)))
    for path in ("x" * 5000 + "/y", "loop/file.txt", "bad\0name"):
        decision = check(gate, "Read", {"file_path": path}, project)  # no exception escapes
        assert decision.allowed or "cannot be checked" in decision.message, path
    decision = check(gate, "Read", {"file_path": "bad\0name"}, project)
    assert not decision.allowed and "the paths of this Read call cannot be checked" in decision.message


@pytest.mark.parametrize(
    ("mode", "deny"),
    [("plan", ()), ("default", ("Edit(loop/**)",)), ("default", ())],
    ids=["plan-mode", "deny-rule", "no-prompter"],
)
def test_paths_that_cannot_be_described_in_a_denial_are_denied_not_crashed_on(
    project: Path, mode: str, deny: tuple[str, ...]
) -> None:
    """Building the denial (showing the path, suggesting a rule) hits the same errors as judging it."""
    (project / "loop").symlink_to(project / "loop")
    gate = Gate(rules(deny=deny), mode)
    for path in ("loop/x.txt", "x" * 300 + "/y.txt"):
        decision = check(gate, "Write", {"file_path": path, "content": "z"}, project)  # no exception escapes
        assert not decision.allowed, path
        if path.startswith("loop") or mode != "plan":
            assert decision.message.startswith("Permission denied: the paths of this Write call cannot be checked (")


def test_an_allowed_call_carries_the_real_paths_it_was_judged_by(project: Path) -> None:
    (project / "alias").symlink_to(project / "src")
    decision = check(
        Gate(mode="acceptEdits"), "Edit", {"file_path": "alias/m.py", "old_string": "1", "new_string": "2"}, project
    )
    assert decision.allowed
    assert decision.checked_paths == {project / "alias" / "m.py": (project / "src" / "m.py").resolve()}


def test_a_question_shows_and_previews_the_real_path_that_will_be_used(project: Path) -> None:
    (project / "alias").symlink_to(project / "src")
    recorder = Recorder()
    decision = check(
        Gate(prompter=recorder), "Edit", {"file_path": "alias/m.py", "old_string": "1", "new_string": "2"}, project
    )
    [request] = recorder.requests
    assert request.subject == "src/m.py" and request.diff is not None and "-x = 1\n+x = 2\n" in request.diff
    assert decision.allowed and decision.checked_paths == {
        project / "alias" / "m.py": (project / "src" / "m.py").resolve()
    }


def test_absurdly_nested_commands_are_not_covered_and_count_as_matching_a_deny_rule(project: Path) -> None:
    deep = "(" * 2000 + "echo hi" + ")" * 2000
    assert outcome(Gate(rules(allow=("Bash(echo:*)",))), "Bash", {"command": deep}, project) == "ask"
    gate = Gate(rules(allow=("Bash(echo:*)",), deny=("Bash(rm:*)",)))
    assert outcome(gate, "Bash", {"command": deep}, project) == "deny"
    decision = check(gate, "Bash", {"command": deep}, project)
    assert "could not be verified against the deny rule" in decision.message
    deep_rm = "(" * 2000 + "rm -rf x" + ")" * 2000
    assert outcome(gate, "Bash", {"command": deep_rm}, project) == "deny"


def test_several_calls_of_one_turn_are_asked_in_order_and_answers_reach_the_model(project: Path) -> None:
    from agentcli.contracts import ToolCall, ToolContext
    from agentcli.executor import ToolExecutor
    from agentcli.tools.registry import ToolRegistry
    from tests.permissions.helpers import TOOLS

    recorder = Recorder(Answer.yes(), Answer.no("edit a.txt instead"), Answer.yes())
    events: list[object] = []
    registry = ToolRegistry([TOOLS["Read"], TOOLS["Bash"], TOOLS["Write"], TOOLS["mcp__srv__do"]])
    calls = [
        ToolCall("t1", "Bash", {"command": "echo one"}),
        ToolCall("t2", "Read", {"file_path": "a.txt"}),
        ToolCall("t3", "Write", {"file_path": "b.txt", "content": "x"}),
        ToolCall("t4", "mcp__srv__do", {}),
    ]
    executor = ToolExecutor(registry, Gate(prompter=recorder))
    results = executor.run_all(calls, ToolContext(LocalWorkspace(project)), events.append, {})
    assert [r.subject for r in recorder.requests] == ["echo one", "b.txt", "mcp__srv__do"]
    assert results[0]["content"].startswith("one")
    assert "alpha" in results[1]["content"]
    assert results[2]["is_error"] is True and "The user said: edit a.txt instead" in results[2]["content"]


def test_the_question_about_an_mcp_call_shows_server_tool_and_arguments(project: Path) -> None:
    recorder = Recorder(Answer.yes())
    gate = Gate(prompter=recorder)

    assert check(gate, "mcp__srv__do", {"query": "select 1", "limit": 5}, project).allowed

    [request] = recorder.requests
    assert (request.title, request.subject) == ("MCP tool", "mcp__srv__do")
    assert request.note == 'server srv · tool do\narguments: {"query": "select 1", "limit": 5}'


class ServerTool(StandIn):
    """An MCP tool as the gate sees it: a name and the names its server lists (`FromMcpServer`)."""

    def __init__(self, name: str, origin: McpOrigin) -> None:
        super().__init__(name, mcp_tool(origin.server, read_only=False))
        self.origin = origin


def test_the_question_names_an_mcp_tool_as_offered_and_as_its_server_lists_it(project: Path) -> None:
    recorder = Recorder(Answer.yes())
    tool = ServerTool("mcp__my_server__get_weather_", McpOrigin("my.server", "get weather!"))

    assert Gate(prompter=recorder).check(tool, {"city": "Oslo"}, ToolContext(LocalWorkspace(project))).allowed

    [request] = recorder.requests
    assert request.subject == "mcp__my_server__get_weather_"  # what a rule names
    assert request.note == 'server my.server · tool get weather!\narguments: {"city": "Oslo"}'


def test_a_question_queued_behind_another_is_not_put_once_the_user_has_interrupted(project: Path) -> None:
    """Two sub-agents ask; the second waits while the first's question is up. Ctrl-C sets the
    turn's cancel event and then each sub-agent's in turn: the second gets the gate in between
    (here: as the first's is set), and must still see the interrupt, not put its question."""
    interrupt = Cancellation()
    first, second = interrupt.linked(), interrupt.linked()
    asked: list[str] = []
    decided: dict[str, Decision] = {}

    def prompter(request: PermissionRequest) -> Answer:
        asked.append(request.subject)
        if len(asked) == 1:
            assert request.cancel is not None
            request.cancel.wait(CEILING)  # the question stops when the turn is interrupted
        return Answer.no()

    gate = Gate(prompter=prompter)

    def ask(name: str, cancel: Cancellation) -> None:
        ctx = ToolContext(LocalWorkspace(project), cancel=cancel)
        decided[name] = gate.check(TOOLS["Bash"], {"command": f"touch {name}"}, ctx)

    asking = threading.Thread(target=ask, args=("first", first))
    asking.start()
    wait_until(lambda: bool(asked), "the first question")
    queued = threading.Thread(target=ask, args=("second", second))

    def second_takes_the_gate() -> None:
        queued.start()
        queued.join(CEILING)

    with first.when_set(second_takes_the_gate):
        interrupt.set()
    asking.join(CEILING)

    assert asked == ["touch first"]
    assert not decided["second"].allowed
    assert (
        decided["second"].message
        == "Not run: the user interrupted the turn before the Bash command `touch second` was asked about."
    )
