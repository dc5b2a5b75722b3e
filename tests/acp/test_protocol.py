"""`agentcli acp`'s side of the protocol, in-process: bad messages, what the model is sent for
each kind of prompt content, modes, the plan and reasoning, and the editor going away."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from agentcli.acp import agent
from agentcli.acp.updates import SessionUpdates
from agentcli.events import ReasoningDelta, TextDelta
from agentcli.permissions import modes
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.acp.client import Client, choose
from tests.conftest import AGENTCLI, cli_env
from tests.fake_anthropic import FakeAnthropic


def test_bad_messages_get_the_protocols_errors_and_the_connection_goes_on(
    model: ScriptedModel, in_process_env: None, project: Path
) -> None:
    client = Client(model)

    client.send(b"{not json\n")
    assert client.next_response(None)["error"]["code"] == -32700
    client.send(b"[1, 2]\n")
    assert client.next_response(None)["error"]["code"] == -32600
    early = client.request("session/new", {"cwd": str(project), "mcpServers": []})
    assert early["error"]["code"] == -32600 and "initialize" in early["error"]["message"]
    assert client.request("initialize", {"protocolVersion": 1})["result"]["protocolVersion"] == 1
    assert client.request("session/frobnicate")["error"]["code"] == -32601
    relative = client.request("session/new", {"cwd": "project", "mcpServers": []})
    assert relative["error"]["code"] == -32602 and "absolute" in relative["error"]["message"]
    missing = client.request("session/prompt", {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]})
    assert missing["error"]["code"] == -32002
    unknown = client.request("session/load", {"sessionId": "0" * 36, "cwd": str(project), "mcpServers": []})
    assert unknown["error"]["code"] == -32002 and "No session" in unknown["error"]["message"]
    client.close()
    assert model.requests == []


def test_links_and_embedded_files_reach_the_model_as_paths_and_contents(
    model: ScriptedModel, in_process_env: None, project: Path
) -> None:
    model.script(reply(text("Seen.")))
    client = Client(model)
    session = client.start(project)

    done = client.request(
        "session/prompt",
        {
            "sessionId": session,
            "prompt": [
                {"type": "text", "text": "compare"},
                {"type": "resource_link", "name": "a.py", "uri": (project / "src" / "a.py").as_uri()},
                {"type": "resource", "resource": {"uri": (project / "b.py").as_uri(), "text": "UNSAVED = 1\n"}},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            ],
        },
    )
    client.close()

    assert done["result"] == {"stopReason": "end_turn"}
    sent = json.dumps(model.requests[0].messages[-1])
    assert "compare src/a.py" in sent
    assert '<context uri=\\"b.py\\">\\nUNSAVED = 1\\n\\n</context>' in sent
    assert "'image' was left out" in sent


def test_accept_edits_mode_writes_without_asking_and_the_task_list_is_the_plan(
    model: ScriptedModel, in_process_env: None, project: Path
) -> None:
    todos = [
        {"content": "Write a.txt", "status": "in_progress", "activeForm": "Writing a.txt"},
        {"content": "Check it", "status": "pending", "activeForm": "Checking it"},
    ]
    model.script(
        reply(tool_use("TodoWrite", {"todos": todos})),
        reply(tool_use("Write", {"file_path": "a.txt", "content": "A\n"})),
        reply(text("Done.")),
    )
    client = Client(model)
    session = client.start(project)

    assert client.request("session/set_mode", {"sessionId": session, "modeId": "acceptEdits"})["result"] == {}
    done = client.request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]})
    bad_mode = client.request("session/set_mode", {"sessionId": session, "modeId": "yolo"})
    client.close()

    assert done["result"] == {"stopReason": "end_turn"}
    assert client.asked == [] and (project / "a.txt").read_text() == "A\n"
    (plan,) = [update for update in client.updates if update["sessionUpdate"] == "plan"]
    assert plan["entries"] == [
        {"content": "Write a.txt", "priority": "medium", "status": "in_progress"},
        {"content": "Check it", "priority": "medium", "status": "pending"},
    ]
    assert bad_mode["error"]["code"] == -32602


def test_always_allow_saves_the_rule_where_the_repl_saves_it(
    model: ScriptedModel, in_process_env: None, project: Path
) -> None:
    model.script(
        reply(tool_use("Bash", {"command": "echo one"})),
        reply(text("One.")),
        reply(tool_use("Bash", {"command": "echo two"})),
        reply(text("Two.")),
    )
    client = Client(model)
    client.answer = choose("allow_always")
    session = client.start(project)

    for word in ("one", "two"):
        prompt = [{"type": "text", "text": f"say {word}"}]
        assert client.request("session/prompt", {"sessionId": session, "prompt": prompt})["result"] == {
            "stopReason": "end_turn"
        }
    client.close()

    assert len(client.asked) == 1  # the second echo was allowed by the rule the first answer saved
    saved = json.loads((project / ".agentcli" / "settings.local.json").read_text())
    assert "Bash(echo:*)" in saved["permissions"]["allow"]


def test_when_the_editor_goes_away_mid_question_nothing_runs_and_the_agent_ends(
    model: ScriptedModel, in_process_env: None, project: Path
) -> None:
    model.script(reply(tool_use("Bash", {"command": "touch made-anyway"})), reply(text("Not run.")))
    client = Client(model)
    client.answer = lambda params: None  # the question stays unanswered
    session = client.start(project)

    client.send_request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "touch"}]})
    client.until(lambda: bool(client.asked))
    client.close()

    assert not (project / "made-anyway").exists()
    assert model.rejected == []


def test_stdout_carries_only_protocol_messages_and_the_process_ends_with_stdin(
    fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    (project / ".agentcli").mkdir()
    (project / ".agentcli" / "settings.json").write_text("{ not json")  # a notice, on stderr
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(project), "mcpServers": []}},
    ]
    stdin = "".join(json.dumps(message) + "\n" for message in messages) + "garbage\n"

    done = subprocess.run(
        [AGENTCLI, "acp"], input=stdin, cwd=project, env=cli_env(home, fake_api.url), capture_output=True, text=True
    )

    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {answer.get("id"): answer for answer in answers}
    assert len(answers) == 3 and set(by_id) == {1, 2, None}  # session/new is answered though stdin closed
    assert by_id[None]["error"]["code"] == -32700
    assert "Traceback" not in done.stderr


def test_reasoning_streams_as_thoughts_and_a_sub_agents_work_stays_inside_its_call(project: Path) -> None:
    updates = SessionUpdates(project)

    shown = [
        *updates.of(ReasoningDelta("Thinking it over.")),
        *updates.of(TextDelta("Answer.")),
        *updates.of(TextDelta("From a sub-agent.", agent_id="agent-1")),
    ]

    assert shown == [
        {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "Thinking it over."}},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Answer."}},
    ]


def test_the_modes_offered_are_agentclis_permission_modes() -> None:
    assert agent.MODES == modes.MODES and set(agent.MODE_NAMES) == set(modes.MODES)
