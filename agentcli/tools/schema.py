"""A small JSON-Schema checker for tool input: enough for our manifests, and it names the field.

Covers `type`, `properties`, `required`, `additionalProperties: false`, `enum`,
`minimum`/`maximum` and `items`. Unknown keywords are ignored (a real model may
send extra fields; the API's own validation is looser than ours).
"""

from __future__ import annotations

from typing import Any

from agentcli.contracts import JSON

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def _type_ok(value: Any, expected: str) -> bool:
    if expected in ("integer", "number") and isinstance(value, bool):
        return False
    if expected == "integer" and isinstance(value, float) and value.is_integer():
        return True
    return isinstance(value, _TYPES.get(expected, (object,)))


def validation_error(value: Any, schema: JSON, where: str = "") -> str | None:
    """Return a message naming the first offending field, or None if `value` fits `schema`."""
    label = f"`{where}`" if where else "the input"
    expected = schema.get("type")
    if isinstance(expected, str) and not _type_ok(value, expected):
        return f"{label} must be of type {expected}, got {type(value).__name__}"
    if "enum" in schema and value not in schema["enum"]:
        options = ", ".join(repr(option) for option in schema["enum"])
        return f"{label} must be one of {options}, got {value!r}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{label} must be >= {schema['minimum']}, got {value}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{label} must be <= {schema['maximum']}, got {value}"
    if isinstance(value, dict):
        return _object_error(value, schema, where)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            if error := validation_error(item, schema["items"], f"{where}[{index}]"):
                return error
    return None


def with_whole_numbers(value: Any, schema: JSON) -> Any:
    """`value` (valid for `schema`) with every float an `integer` field holds (`5.0`, `1e2`: JSON
    numbers as some servers write them) made an int, so that a tool gets the type its schema
    names. A new value: the call as the model made it is not changed."""
    expected = schema.get("type")
    if expected == "integer" and isinstance(value, float):
        return int(value)
    if isinstance(value, dict):
        properties: JSON = schema.get("properties", {})
        return {
            name: with_whole_numbers(item, properties[name]) if isinstance(properties.get(name), dict) else item
            for name, item in value.items()
        }
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [with_whole_numbers(item, schema["items"]) for item in value]
    return value


def _object_error(value: JSON, schema: JSON, where: str) -> str | None:
    properties: JSON = schema.get("properties", {})
    prefix = f"{where}." if where else ""
    for name in schema.get("required", []):
        if name not in value:
            return f"missing required field `{prefix}{name}`"
    if schema.get("additionalProperties") is False:
        extra = sorted(set(value) - set(properties))
        if extra:
            allowed = ", ".join(properties) or "none"
            return f"unexpected field `{prefix}{extra[0]}` (allowed: {allowed})"
    for name, item in value.items():
        if name in properties and (error := validation_error(item, properties[name], prefix + name)):
            return error
    return None
