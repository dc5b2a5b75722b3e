"""Harness overhead per loop step, against the fake Anthropic server.

Runs one 60-step tool-using conversation (each step a Read of a 2 KB file) through the
real Agent and the real SDK, and reports for steps 1 and 50:
- wall: the whole step (request build, HTTP + SSE through the SDK, tool, result message);
- harness: the same minus the time spent inside `Model.stream` (network, SDK parsing
  and the fake server's own work), i.e. what our loop, executor and tools cost.

Usage: .venv/bin/python bench/loop_overhead.py
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.contracts import JSON, Decision, ModelRequest, ModelResponse, StreamListener, Tool, ToolContext
from agentcli.executor import ToolExecutor
from agentcli.loop import Agent, LoopConfig
from agentcli.providers.anthropic import AnthropicModel
from agentcli.tools import builtin_tools
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use

STEPS = 60


class AllowAll:
    def check(self, tool: Tool, tool_input: JSON, ctx: ToolContext) -> Decision:
        return Decision(True)


class TimedModel:
    """Wraps a Model and records when each step starts and how long the model call took."""

    def __init__(self, inner: AnthropicModel) -> None:
        self.inner = inner
        self.starts: list[float] = []
        self.model_time: list[float] = []

    def stream(self, request: ModelRequest, listener: StreamListener) -> ModelResponse:
        began = time.perf_counter()
        self.starts.append(began)
        try:
            return self.inner.stream(request, listener)
        finally:
            self.model_time.append(time.perf_counter() - began)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic(api_key="bench") as api:
        root = Path(tmp)
        (root / "data.txt").write_text("x" * 60 + "\n" * 1 + ("line of text\n" * 150))
        api.script(
            *[reply(tool_use("Read", {"file_path": "data.txt", "offset": i + 1}), chunk=64) for i in range(STEPS)],
            reply(text("done")),
        )
        model = TimedModel(AnthropicModel(api_key="bench", base_url=api.url))
        agent = Agent(
            model=model,
            executor=ToolExecutor(builtin_tools(), AllowAll()),
            config=LoopConfig(model="claude-sonnet-5-5", max_turns=STEPS + 5),
            system=[{"type": "text", "text": "bench"}],
            on_event=lambda event: None,
            ctx=ToolContext(cwd=root),
        )
        agent.run([{"type": "text", "text": "go"}])
        finished = time.perf_counter()
        ends = [*model.starts[1:], finished]
        walls = [end - start for start, end in zip(model.starts, ends, strict=True)]
        harness = [wall - spent for wall, spent in zip(walls, model.model_time, strict=True)]
        for step in (1, 10, 50):
            window = slice(max(step - 3, 0), step + 2)
            print(
                f"step {step:>2}: wall {statistics.median(walls[window]) * 1000:6.2f} ms, "
                f"harness {statistics.median(harness[window]) * 1000:6.2f} ms "
                f"(messages: {2 * step + 1})"
            )
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus")


if __name__ == "__main__":
    main()
