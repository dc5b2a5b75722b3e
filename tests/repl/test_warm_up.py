"""The REPL draws its prompt before loading what only a turn needs (the streamed-answer
renderer, the HTTP client the provider uses), and loads them in the background from the first paint
on, so the first request does not wait for them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli_env

TURN_ONLY = ["agentcli.ui.markdown_stream", "markdown_it", "httpx2"]
"""Not the provider's own module: the session builds its model object at once (that import
is light); what the provider sends requests with is loaded at its first request."""

PROBE = f"""
import json, os, sys, threading
from pathlib import Path
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from agentcli.repl.app import Repl
from agentcli.session import SessionOptions

turn_only = {TURN_ONLY!r}
with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
    repl = Repl(SessionOptions(), Path.cwd())
    before_paint = [m for m in turn_only if m in sys.modules]
    if os.environ["TERM"] == "dumb":  # a plain prompt, read line by line: Ctrl-D can wait in the pipe
        keys.send_text("\\x04")
    else:  # Ctrl-D once the prompt is drawn (sent earlier, it could end the prompt before it is)
        repl.prompt.app.after_render += lambda app: keys.send_text("\\x04")
    code = repl.loop()
for thread in threading.enumerate():
    if thread is not threading.current_thread():
        thread.join(timeout=60)
after = [m for m in turn_only if m in sys.modules]
print(json.dumps({{"code": code, "before_paint": before_paint, "after": after, "sdk": "anthropic" in sys.modules}}))
"""


@pytest.mark.parametrize("term", ["xterm-256color", "dumb"])  # prompt_toolkit draws a dumb terminal's prompt apart
def test_the_prompt_is_drawn_before_what_a_turn_needs_is_loaded_and_that_loads_after(
    term: str, home: Path, project: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=project,
        env={**cli_env(home, "http://127.0.0.1:9"), "TERM": term},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == 0
    assert result["before_paint"] == []
    assert result["after"] == TURN_ONLY
    assert result["sdk"] is False  # the SDK is only for Bedrock and Vertex
