"""Rebuilding a long streamed answer from its deltas, per provider: the cost of one delta as the
answer grows (flat when assembly is linear, growing with the answer when each delta copies all
that came before).

Feeds the OpenAI-compatible and Gemini assemblers an answer of N deltas of 8 characters (text,
reasoning and a tool call's arguments for OpenAI; text and thinking for Gemini), in process, with
no server, and reports microseconds per delta at each N and the ratio of the largest N's to the
smallest's (about 1 when linear).

Usage: .venv/bin/python bench/stream_assembly.py [--sizes 10000,100000,400000]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.contracts import JSON, ModelRequest, Unwatched
from agentcli.providers.call_repair import CallIds
from agentcli.providers.gemini import _ResponseAssembler
from agentcli.providers.openai import _ChunkAssembler

DELTA = "abcdefg "
TOOLS: list[JSON] = [{"name": "Write", "description": "", "input_schema": {"type": "object"}}]


def openai_answer(deltas: int) -> float:
    request = ModelRequest("m", [], TOOLS, [], 1000)
    assembler = _ChunkAssembler(Unwatched(), request, CallIds(frozenset, "call_"))
    third = deltas // 3
    started = time.perf_counter()
    for _ in range(third):
        assembler.feed({"choices": [{"index": 0, "delta": {"reasoning_content": DELTA}}]})
    for _ in range(third):
        assembler.feed({"choices": [{"index": 0, "delta": {"content": DELTA}}]})
    assembler.feed(
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "id": "c1", "function": {"name": "Write", "arguments": '{"content": "'}}
                        ]
                    },
                }
            ]
        }
    )
    for _ in range(third):
        assembler.feed(
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": DELTA}}]}}]}
        )
    assembler.feed(
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]},
                    "finish_reason": "tool_calls",
                }
            ]
        }
    )
    assembler.finish()
    return time.perf_counter() - started


def gemini_answer(deltas: int) -> float:
    assembler = _ResponseAssembler(Unwatched(), TOOLS)
    half = deltas // 2
    started = time.perf_counter()
    for _ in range(half):
        assembler.feed({"candidates": [{"content": {"parts": [{"text": DELTA, "thought": True}]}}]})
    for _ in range(half):
        assembler.feed({"candidates": [{"content": {"parts": [{"text": DELTA}]}}]})
    assembler.feed({"candidates": [{"content": {"parts": []}, "finishReason": "STOP"}]})
    assembler.finish()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,400000")
    sizes = [int(size) for size in parser.parse_args().sizes.split(",")]
    cases: dict[str, Callable[[int], float]] = {"openai": openai_answer, "gemini": gemini_answer}
    for name, case in cases.items():
        per_delta = [min(case(size) for _ in range(3)) / size * 1e6 for size in sizes]
        shown = ", ".join(f"{size:,} deltas: {micro:.2f} µs" for size, micro in zip(sizes, per_delta, strict=True))
        print(f"{name}: {shown}; largest/smallest {per_delta[-1] / per_delta[0]:.1f}x")


if __name__ == "__main__":
    main()
