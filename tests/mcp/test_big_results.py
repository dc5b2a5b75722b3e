"""A server's big answers: capped as they arrive (`agentcli.mcp.stdio`, `capped_json`), never
handed on in a form the API would refuse."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from agentcli.mcp.capped_json import JsonCapper
from agentcli.providers.scripted import ScriptedModel, reply, text, tool_use
from tests.conftest import RunAgent
from tests.mcp.helpers import raw_server, write_config

MB = 1 << 20


def capped(document: str, string_limit: int, total_limit: int, seed: int = 0) -> str:
    """`document` through a JsonCapper, fed in pieces of 1 to 7 characters."""
    pieces = random.Random(seed)
    capper = JsonCapper(string_limit, total_limit)
    at = 0
    while at < len(document):
        step = pieces.randint(1, 7)
        capper.feed(document[at : at + step])
        at += step
    return capper.text()


DOCUMENTS: list[object] = [
    {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": 'é "q" \\ \n \U0001f600'}]}},
    [1, -2.5e10, True, None, {"a": [], "b": {}}, "x", [[[]]]],
    {"data": "abc", "k": {"data": "x" * 50, "blob": "y", "text": "z" * 50}},
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_what_is_under_the_limits_comes_through_unchanged_however_it_is_split(document: object) -> None:
    for seed in range(10):
        assert json.loads(capped(json.dumps(document, indent=seed % 3 or None), 100, 10_000, seed)) == document


def random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.choice(["text", "number", "word", "list", "object"] if depth < 4 else ["text", "number", "word"])
    if kind == "text":
        return "".join(
            rng.choice(["a", "é", '"', "\\", "\n", "\u0001", "😀", "[", "{", "x" * 20])
            for _ in range(rng.randint(0, 12))
        )
    if kind == "number":
        return rng.choice([0, -3, 2.5e-7, 10**20])
    if kind == "word":
        return rng.choice([True, False, None])
    if kind == "list":
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    keys = ["data", "blob", "text", "id", "k" * 30, 'a"b']
    return {rng.choice(keys): random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def test_any_document_stays_valid_json_under_any_limits_and_whole_under_wide_ones() -> None:
    rng = random.Random(7)
    for seed in range(300):
        document = {"jsonrpc": "2.0", "result": random_value(rng), "id": seed}
        encoded = json.dumps(document, ensure_ascii=seed % 2 == 0)
        assert json.loads(capped(encoded, 10_000, 100_000, seed)) == document
        tight = json.loads(capped(encoded, rng.randint(3, 8), rng.randint(0, 200), seed))  # 3: `2.0`
        assert (tight["jsonrpc"], tight["id"]) == ("2.0", seed)


def test_long_strings_are_cut_binary_ones_emptied_and_the_envelope_kept_wherever_it_stands() -> None:
    blocks = [
        {"type": "text", "text": "x" * 100},
        {"type": "image", "data": "A" * 100, "mimeType": "image/png"},
        {"type": "text", "text": "\\" * 30},
    ]
    answer = json.dumps({"result": {"content": blocks, "isError": True}, "jsonrpc": "2.0", "id": 7})
    for seed in range(10):
        kept = json.loads(capped(answer, 10, MB, seed))
        assert (kept["id"], kept["jsonrpc"], kept["result"]["isError"]) == (7, "2.0", True)
        first, image, escapes = kept["result"]["content"]
        assert first["text"] == "x" * 10 + "\n\n[... 90 more characters were cut as they arrived ...]"
        assert image == {"type": "image", "data": "", "mimeType": "image/png"}
        assert escapes["text"] == "\\" * 10 + "\n\n[... 20 more characters were cut as they arrived ...]"


def test_past_the_total_the_rest_of_each_array_is_left_out() -> None:
    many = {"result": {"content": [{"type": "text", "text": "abcdefgh"}] * 10_000, "rows": list(range(10_000))}}
    kept = json.loads(capped(json.dumps({**many, "id": "z"}), 100, 2_000))
    assert kept["id"] == "z" and kept["result"]["rows"] == []
    assert 0 < len(kept["result"]["content"]) < 100
    assert all(block == {"type": "text", "text": "abcdefgh"} for block in kept["result"]["content"])


def test_a_result_over_the_message_limit_reaches_the_model_capped_and_an_oversized_image_left_out(
    run_agent: RunAgent, model: ScriptedModel, home: Path, tmp_path: Path
) -> None:
    """A 5.5 MB image and 7 MB of text in one answer, its `id` at the end (as the TypeScript SDK writes)."""
    big = {"name": "big", "reply": {"size": 7 * MB, "image": 5 * MB + MB // 2}}
    entry = raw_server(tmp_path / "spec.json", tools=[big], result_first=True)
    write_config(home / ".agentcli" / "mcp.json", raw=entry)
    model.script(reply(tool_use("mcp__raw__big", {}, id="toolu_1")), reply(text("ok")))

    ran = run_agent("go", allowed_tools=["mcp__raw"])

    assert ran.returncode == 0, ran.stderr
    [result] = model.requests[1].messages[-1]["content"]
    note = "[an image was left out: it was empty, or over the 5 MB the model takes of one image]\n\n"
    assert result["content"].startswith(
        note + "x" * (100_000 - len(note)) + "\n\n[... output truncated: 7,240,118 characters cut."
    )
    assert "is_error" not in result
