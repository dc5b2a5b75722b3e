"""`agentcli acp` driven by a client nobody here wrote: the official TypeScript SDK's
(`@agentclientprotocol/sdk`, which validates every message agentcli sends against the
protocol's schema), through a whole session against the fake model server.

`tests/acp/drive.mjs` plays the editor: it prompts, answers permission questions, cancels, and
reports what it received; agentcli runs as the installed program, as an editor starts it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENTCLI, cli_env
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.npm_packages import ACP_SDK, Unavailable

DRIVER = Path(__file__).with_name("drive.mjs")


@pytest.fixture(scope="session")
def sdk() -> tuple[str, Path]:
    try:
        return ACP_SDK.install()
    except Unavailable as error:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the ACP SDK (see scripts/setup): {error}")
        pytest.skip(str(error))


def drive(sdk: tuple[str, Path], home: Path, api: FakeAnthropic, project: Path, steps: list[Any]) -> Any:
    node, entry = sdk
    scenario = json.dumps({"cwd": str(project), "steps": steps})
    done = subprocess.run(
        [node, str(DRIVER), str(entry), scenario, "--", AGENTCLI, "acp"],
        cwd=project,
        env=cli_env(home, api.url),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def kinds(turn: dict[str, Any]) -> list[str]:
    return [update["sessionUpdate"] for update in turn["updates"]]


def said(turn: dict[str, Any]) -> str:
    return "".join(u["content"]["text"] for u in turn["updates"] if u["sessionUpdate"] == "agent_message_chunk")


def test_a_whole_session_from_an_editor(
    sdk: tuple[str, Path], fake_api: FakeAnthropic, home: Path, project: Path
) -> None:
    fake_api.script(
        reply(text("Hello from agentcli.")),
        reply(tool_use("Write", {"file_path": "notes.txt", "content": "kept\n"}, id="toolu_write")),
        reply(text("Wrote notes.txt.")),
        reply(tool_use("Bash", {"command": "rm notes.txt"}, id="toolu_rm")),
        reply(text("I left it alone.")),
        reply(text("A long answer that never ends " * 20), chunk=20, stall_after=2),
        reply(text("Back again.")),
    )

    report = drive(
        sdk,
        home,
        fake_api,
        project,
        [
            {"prompt": "hello"},
            {"prompt": "write notes.txt", "answer": "allow_once"},
            {"prompt": "remove it", "answer": "reject_once"},
            {"prompt": "tell me a long story", "cancelAfterChunk": True},
            {"prompt": "are you there?"},
            {"load": "$session"},
        ],
    )

    assert report["initialize"]["protocolVersion"] == 1
    assert report["initialize"]["agentCapabilities"]["loadSession"] is True
    assert report["modes"]["currentModeId"] == "default"
    hello, write, remove, cancelled, again = report["turns"]

    assert hello["response"] == {"stopReason": "end_turn"} and said(hello) == "Hello from agentcli."

    assert write["response"] == {"stopReason": "end_turn"}
    (asked,) = write["permissions"]
    assert asked["toolCall"]["toolCallId"] == "toolu_write"
    assert [option["kind"] for option in asked["options"]] == ["allow_once", "allow_always", "reject_once"]
    call = next(u for u in write["updates"] if u["sessionUpdate"] == "tool_call")
    assert call["toolCallId"] == "toolu_write" and call["kind"] == "edit" and call["status"] == "pending"
    assert call["locations"] == [{"path": str(project / "notes.txt")}]
    finished = [u for u in write["updates"] if u["sessionUpdate"] == "tool_call_update" and u.get("status")]
    assert [u["status"] for u in finished] == ["in_progress", "completed"]
    assert finished[-1]["content"][0] == {
        "type": "diff",
        "path": str(project / "notes.txt"),
        "oldText": None,
        "newText": "kept\n",
    }
    assert said(write) == "Wrote notes.txt."
    assert (project / "notes.txt").read_text() == "kept\n"

    assert remove["response"] == {"stopReason": "end_turn"} and len(remove["permissions"]) == 1
    rejected = [u for u in remove["updates"] if u["sessionUpdate"] == "tool_call_update" and u.get("status")]
    assert [u["status"] for u in rejected] == ["failed"]
    assert (project / "notes.txt").exists()  # rejected: nothing ran

    assert cancelled["response"] == {"stopReason": "cancelled"}
    assert again["response"] == {"stopReason": "end_turn"} and said(again) == "Back again."
    # the conversation stayed valid through the cancel (the fake server rejects any other)
    last = fake_api.requests[-1].body["messages"]
    assert "[Request interrupted by user]" in json.dumps(last)

    assert report["firstExit"] == {"code": 0, "signal": None}
    loaded = report["loaded"]
    assert loaded["response"]["modes"]["currentModeId"] == "default"
    replayed = [u["content"]["text"] for u in loaded["updates"] if u["sessionUpdate"] == "user_message_chunk"]
    assert replayed[:3] == ["hello", "write notes.txt", "remove it"] and "are you there?" in replayed
    assert report["secondExit"] == {"code": 0, "signal": None}
