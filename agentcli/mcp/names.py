"""What the API accepts from an MCP server: tool names and input schemas.

A tool is offered as `mcp__<server>__<tool>`, each part with every character outside
`[a-zA-Z0-9_-]` replaced by `_` (as Claude Code does), so rules written for Claude Code match.
A name over 64 characters is shortened and given a short hash of the full one; a name already
taken (two tools that sanitise alike) gets `_2`, `_3`, ….

The API wants an input schema of `"type": "object"` with no `oneOf`/`anyOf`/`allOf` at the top.
A schema without a type is given one; `properties` and `required` that are not what JSON Schema
says are dropped; a schema that cannot be made acceptable skips its tool, with the reason.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection
from typing import Any

from agentcli.contracts import JSON

MAX_NAME = 64
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def safe_part(text: str) -> str:
    """`text` with every character the API refuses in a tool name replaced by `_`."""
    return _UNSAFE.sub("_", text) or "_"


def tool_name(server: str, tool: str, taken: Collection[str] = ()) -> str:
    """The name the model sees for `tool` of `server`: valid for the API and not in `taken`."""
    base = f"mcp__{safe_part(server)}__{safe_part(tool)}"
    if len(base) > MAX_NAME:
        digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
        base = f"{base[: MAX_NAME - 9]}_{digest}"
    name, count = base, 1
    while name in taken:
        count += 1
        suffix = f"_{count}"
        name = base[: MAX_NAME - len(suffix)] + suffix
    return name


class SchemaRejected(ValueError):
    """An input schema the API would refuse and that cannot be repaired; the message says why."""


def repaired_schema(schema: object) -> JSON:
    """`schema` as the API accepts it (a repaired copy when it needed repair); raises SchemaRejected."""
    if not isinstance(schema, dict):
        raise SchemaRejected(f"its input schema is {type(schema).__name__}, not a JSON object")
    try:
        json.dumps(schema)
    except (TypeError, ValueError) as error:
        raise SchemaRejected(f"its input schema is not JSON ({error})") from None
    kind = schema.get("type", "object")
    if kind != "object":
        raise SchemaRejected(f'its input schema has "type": {json.dumps(kind)}; tool input must be an object')
    combined = [key for key in ("oneOf", "anyOf", "allOf") if key in schema]
    if combined:
        raise SchemaRejected(f"its input schema uses {combined[0]} at the top level, which the API does not accept")
    repaired: JSON = {**schema, "type": "object"}
    properties = schema.get("properties", {})
    repaired["properties"] = (
        {key: _property(value) for key, value in properties.items()} if isinstance(properties, dict) else {}
    )
    required = schema.get("required")
    if isinstance(required, list):
        repaired["required"] = [name for name in required if isinstance(name, str)]
    elif required is not None:
        del repaired["required"]
    return repaired


def _property(schema: Any) -> Any:
    """A property's schema as an object (JSON Schema's `true` is `{}`, `false` `{"not": {}}`); anything
    that is not a schema means "any value"."""
    if schema is False:
        return {"not": {}}
    if not isinstance(schema, dict):
        return {}
    properties = schema.get("properties")
    if properties is not None:
        fixed = {key: _property(value) for key, value in properties.items()} if isinstance(properties, dict) else {}
        schema = {**schema, "properties": fixed}
    items = schema.get("items")
    if items is not None and not isinstance(items, (dict, bool, list)):
        schema = {key: value for key, value in schema.items() if key != "items"}
    return schema
