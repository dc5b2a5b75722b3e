"""Input schemas the API accepts, whatever the server sends."""

from __future__ import annotations

import pytest

from agentcli.mcp.schemas import SchemaRejected, repaired_schema


def test_schemas_are_repaired_where_they_can_be() -> None:
    assert repaired_schema({}) == {"type": "object", "properties": {}}
    fixed = repaired_schema(
        {"properties": {"a": {"type": "string"}, "b": "nonsense", "c": False}, "required": ["a", 3]}
    )
    assert fixed == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {}, "c": {"not": {}}},
        "required": ["a"],
    }


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ([], "not a JSON object"),
        ({"type": "string"}, "tool input must be an object"),
        ({"type": "object", "anyOf": [{}]}, "uses anyOf at the top level"),
    ],
)
def test_schemas_the_api_would_reject_are_refused_saying_why(schema: object, why: str) -> None:
    with pytest.raises(SchemaRejected, match=why):
        repaired_schema(schema)
