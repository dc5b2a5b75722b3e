"""What the API accepts as an MCP tool's input schema.

The API wants an input schema of `"type": "object"` with no `oneOf`/`anyOf`/`allOf` at the top.
A schema without a type is given one; `properties` and `required` that are not what JSON Schema
says are dropped; a schema that cannot be made acceptable skips its tool, with the reason.
"""

from __future__ import annotations

import json
from typing import Any

from agentcli.contracts import JSON


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
