"""The names MCP tools go by: one per tool, valid for the API, the same whatever the order, and a
server or tool refused rather than given a name a rule could read two ways."""

from __future__ import annotations

import itertools

import pytest

from agentcli.mcp.names import NAME_PATTERN, server_parts, split_name, tool_names
from agentcli.mcp.status import ToolInfo


def tools(*names: str) -> list[ToolInfo]:
    return [ToolInfo(name, "", {"type": "object"}, read_only=False) for name in names]


def offered(server: str, *names: str) -> dict[str, str]:
    named, _ = tool_names(server, tools(*names))
    return {each.info.name: each.name for each in named}


def test_names_are_sanitised_like_claude_codes() -> None:
    parts, refused = server_parts(["github", "my server", "db.prod"])
    assert (parts, refused) == ({"github": "github", "my server": "my_server", "db.prod": "db_prod"}, [])
    assert offered("github", "search_issues", "get weather!", "run-sql") == {
        "search_issues": "mcp__github__search_issues",
        "get weather!": "mcp__github__get_weather_",
        "run-sql": "mcp__github__run-sql",
    }


@pytest.mark.parametrize(
    "name",
    ["trusted__evil", "trusted_", "_trusted", "trusted.", "trusted\u200b", "a. b", "日本", "x" * 33 + "__y"],
)
def test_a_server_whose_name_would_not_read_as_one_server_is_refused(name: str) -> None:
    parts, refused = server_parts(["trusted", name])
    assert parts == {"trusted": "trusted"}
    assert [each.name for each in refused] == [name]


def test_a_long_server_name_is_shortened_to_32_with_a_hash_of_it_never_ending_in_an_underscore() -> None:
    long, underscored = "x" * 33, "a" * 22 + "_b" * 10
    parts, refused = server_parts(["trusted", long, underscored])
    assert refused == []
    assert parts["trusted"] == "trusted" and parts[long].startswith("x" * 23 + "_")
    assert parts[underscored].startswith("a" * 22 + "_") and "__" not in parts[underscored]
    assert len(parts[long]) == 32 and len(parts[underscored]) == 31, parts  # its cut ended in "_": dropped
    named, _ = tool_names(parts[long], tools("t" * 40))
    assert NAME_PATTERN.fullmatch(named[0].name) and len(named[0].name) == 64


def test_a_shortened_server_name_never_reads_as_another_servers() -> None:
    long = "plugin:laravel-boost:laravel-boost"
    parts, refused = server_parts([long, "plugin_laravel-boost_la_b8d6640e", "plugin_laravel-boost_laravel-boost"])

    # the long one's shortened name is the second's, its full name the third's: spelled exactly, they keep theirs
    assert [server.name for server in refused] == [long]
    assert parts["plugin_laravel-boost_la_b8d6640e"] == "plugin_laravel-boost_la_b8d6640e"
    assert parts["plugin_laravel-boost_laravel-boost"].startswith("plugin_laravel-boost_la_")
    assert server_parts([long]) == ({long: "plugin_laravel-boost_la_b8d6640e"}, [])


def test_servers_that_would_read_alike_are_refused_but_one_spelled_exactly_keeps_its_name() -> None:
    for names in itertools.permutations(["a.b", "a_b", "a b"]):
        parts, refused = server_parts(names)
        assert parts == {"a_b": "a_b"}
        assert sorted(each.name for each in refused) == ["a b", "a.b"]
        assert 'its tools would be named "mcp__a_b__TOOL", as those of' in refused[0].why
    parts, refused = server_parts(["x.y", "x y"])
    assert parts == {} and len(refused) == 2
    assert server_parts(["GitHub", "github"]) == ({"GitHub": "GitHub", "github": "github"}, [])


def test_a_tool_rewritten_into_anothers_name_is_refused_whatever_the_order() -> None:
    for order in itertools.permutations(["delete.repo", "delete_repo", "list"]):
        named, refused = tool_names("clash", tools(*order))
        assert {each.info.name: each.name for each in named} == {
            "delete_repo": "mcp__clash__delete_repo",
            "list": "mcp__clash__list",
        }
        [left_out] = refused
        assert left_out.name == "delete.repo"
        assert left_out.why == 'it would be offered as "mcp__clash__delete_repo", as the tool "delete_repo" is'
    named, refused = tool_names("s", tools("get weather!", "get weather?", "twice", "twice", ""))
    assert named == []
    assert [(each.name, each.why.split(",")[0]) for each in refused] == [
        ("get weather!", 'it would be offered as "mcp__s__get_weather_"'),
        ("get weather?", 'it would be offered as "mcp__s__get_weather_"'),
        ("twice", "the server lists two tools of that name"),
        ("twice", "the server lists two tools of that name"),
        ("", "it has no name"),
    ]


def test_a_long_name_is_shortened_in_its_tool_part_only_and_stays_the_same() -> None:
    server = "s" * 32
    long_a, long_b = "a" * 80, "a" * 79 + "b"
    names = offered(server, long_a, long_b, "short")
    assert names == offered(server, "short", long_b, long_a)  # the same whatever the order
    assert len(set(names.values())) == 3
    for name in names.values():
        assert NAME_PATTERN.match(name) and split_name(name) is not None
        assert split_name(name) == (server, name.removeprefix(f"mcp__{server}__"))
    assert names["short"] == f"mcp__{server}__short"
    assert len(names[long_a]) == 64 and names[long_a].startswith(f"mcp__{server}__aaaa")


def test_every_name_offered_splits_back_into_its_server() -> None:
    hostile = ["__x", "x__", "a__b", "_", "x" * 200, "ü", "get weather!", "a\nb", "mcp__other__y"]
    parts, _ = server_parts(["srv", "my.server", "a-b"])
    for server, part in parts.items():
        for named in tool_names(part, tools(*hostile))[0]:
            assert NAME_PATTERN.match(named.name), named.name
            assert split_name(named.name) == (part, named.name.removeprefix(f"mcp__{part}__")), server
