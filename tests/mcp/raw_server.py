"""A small MCP server speaking JSON-RPC over stdio by hand, for what the SDK's own server will not do.

    python raw_server.py SPEC.json

SPEC is a JSON object:

- `tools`: `[{"name": "delete.repo", "readOnly": false, "reply": ...}]`, in the order listed;
  each tool's `reply` is one of `{"text": "..."}`, `{"size": N}` (N characters of `x`; with
  `"image": M`, after an image of M characters), `{"never": true}` (the call is never
  answered);
- `log`: a file to which every line received is appended (what agentcli sent, and when);
- `noise`: lines written to stdout before each answer, which are not JSON-RPC;
- `result_first`: write `result` before `id` in answers (as the TypeScript SDK does).

It imports nothing beyond the standard library, so it starts as fast as an interpreter does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def answer(spec: dict[str, Any], request_id: object, result: str) -> None:
    """Write one answer; `result` is already JSON (a big one is never built as a Python object)."""
    for line in spec.get("noise", []):
        sys.stdout.write(line + "\n")
    ident = json.dumps(request_id)
    if spec.get("result_first"):
        sys.stdout.write(f'{{"result":{result},"jsonrpc":"2.0","id":{ident}}}\n')
    else:
        sys.stdout.write(f'{{"jsonrpc":"2.0","id":{ident},"result":{result}}}\n')
    sys.stdout.flush()


def call_result(reply: dict[str, Any]) -> str | None:
    if reply.get("never"):
        return None
    if "size" in reply:
        blocks = ['{"type":"text","text":"' + "x" * int(reply["size"]) + '"}']
        if "image" in reply:
            blocks.insert(0, '{"type":"image","data":"' + "A" * int(reply["image"]) + '","mimeType":"image/png"}')
        return '{"content":[' + ",".join(blocks) + "]}"
    return json.dumps({"content": [{"type": "text", "text": reply.get("text", "done")}]})


def handle(spec: dict[str, Any], message: dict[str, Any]) -> None:
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        return  # a notification
    if method == "initialize":
        welcome = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }
        answer(spec, request_id, json.dumps(welcome))
    elif method == "tools/list":
        tools = [
            {
                "name": tool["name"],
                "description": f"The tool {tool['name']}.",
                "inputSchema": {"type": "object", "properties": {}},
                "annotations": {"readOnlyHint": bool(tool.get("readOnly"))},
            }
            for tool in spec["tools"]
        ]
        answer(spec, request_id, json.dumps({"tools": tools}))
    elif method == "tools/call":
        tool = next(t for t in spec["tools"] if t["name"] == message["params"]["name"])
        result = call_result(tool.get("reply", {}))
        if result is not None:
            answer(spec, request_id, result)
    else:
        answer(spec, request_id, "{}")


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    log = Path(spec["log"]) if spec.get("log") else None
    for line in sys.stdin:
        if log is not None:
            with log.open("a") as file:
                file.write(line)
        handle(spec, json.loads(line))


if __name__ == "__main__":
    main()
