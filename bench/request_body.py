"""CPU of building one request's body as the conversation grows, for the Anthropic and the
OpenAI-compatible providers: what agentcli does with the whole conversation every request.

A conversation of tool steps (a Read call, then its 20-line result) grows to each size in
`--sizes` (steps); at each, `--runs` more steps are taken, and each step's request body is built
as the provider builds it (`DirectRoute.body` with the cache breakpoints marked; the OpenAI
translator's body), nothing sent. Reported: the median CPU per body, and its size.

Usage: .venv/bin/python bench/request_body.py [--sizes N,N,...] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.cache import with_cache_breakpoints
from agentcli.contracts import JSON, ModelRequest
from agentcli.providers.anthropic import DirectRoute
from agentcli.providers.http import Endpoint
from agentcli.providers.openai import Translator
from agentcli.providers.timeouts import Timeouts
from bench.long_session import call_of

SYSTEM: list[JSON] = [{"type": "text", "text": "core " * 4000}, {"type": "text", "text": "project " * 400}]
TOOLS: list[JSON] = [
    {"name": f"Tool{n}", "description": "Does things. " * 60, "input_schema": {"type": "object"}} for n in range(15)
]
RESULT = "".join(f"{n:6d}\tline {n} of the file, with some words on it\n" for n in range(20))


def anthropic_body() -> Callable[[ModelRequest], bytes]:
    route = DirectRoute(Endpoint("http://127.0.0.1:9", {}, "ANTHROPIC_BASE_URL", {}), Timeouts())
    return lambda request: route.body(with_cache_breakpoints(request))


def openai_body() -> Callable[[ModelRequest], bytes]:
    translator = Translator()
    return lambda request: translator.body(request, official=False)


def grow(messages: list[JSON]) -> None:
    """One more tool step: the model's call and its result."""
    call = call_of(len(messages) // 2 + 1)
    result = {"type": "tool_result", "tool_use_id": call["id"], "content": RESULT}
    messages += [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]


def measure(build: Callable[[ModelRequest], bytes], sizes: list[int], runs: int) -> list[tuple[int, int, float]]:
    """(messages, body bytes, median CPU seconds per body) at each size."""
    messages: list[JSON] = [{"role": "user", "content": [{"type": "text", "text": "read the files"}]}]
    found = []
    for steps in sizes:
        while len(messages) < 2 * steps:
            grow(messages)
            build(ModelRequest("claude-test", SYSTEM, TOOLS, messages, 1024))
        costs = []
        for _ in range(runs):
            grow(messages)
            began = time.process_time()
            body = build(ModelRequest("claude-test", SYSTEM, TOOLS, messages, 1024))
            costs.append(time.process_time() - began)
        found.append((len(messages), len(body), statistics.median(costs)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10,500,1000,1500", help="conversation sizes, in tool steps")
    parser.add_argument("--runs", type=int, default=30, help="bodies built at each size")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    for name, build in (("anthropic", anthropic_body()), ("openai", openai_body())):
        for messages, size, cpu in measure(build, sizes, args.runs):
            print(f"{name}: {messages:,} messages, body {size / 1e6:.2f} MB, {cpu * 1e6:,.0f} µs of CPU per request")
    print(f"python {sys.version.split()[0]}, load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
