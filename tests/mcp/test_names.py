"""Tool names and input schemas the API accepts, whatever the server sends."""

from __future__ import annotations

import pytest

from agentcli.mcp.names import NAME_PATTERN, SchemaRejected, repaired_schema, tool_name


def test_names_are_sanitised_like_claude_codes() -> None:
    assert tool_name("github", "search_issues") == "mcp__github__search_issues"
    assert tool_name("my server", "get weather!") == "mcp__my_server__get_weather_"
    assert tool_name("db.prod", "run-sql") == "mcp__db_prod__run-sql"


def test_a_long_name_is_shortened_and_names_stay_distinct() -> None:
    long_a, long_b = tool_name("server", "a" * 80), tool_name("server", "a" * 79 + "b")
    assert NAME_PATTERN.match(long_a) and NAME_PATTERN.match(long_b)
    assert long_a != long_b
    first = tool_name("s", "get weather!")
    second = tool_name("s", "get weather?", taken={first})
    assert (first, second) == ("mcp__s__get_weather_", "mcp__s__get_weather__2")


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
