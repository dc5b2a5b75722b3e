"""Rule syntax: which texts are rules, what they name, and clear errors for the rest."""

from __future__ import annotations

import pytest

from agentcli.contracts import McpOrigin
from agentcli.permissions.rules import RuleError, RuleSource, parse_rule

SOURCE = RuleSource("flag", "--allowed-tools")


def test_tool_wide_and_specified_rules() -> None:
    bash = parse_rule("Bash", "allow", SOURCE)
    assert bash.tool_wide and bash.names("Bash") and not bash.names("Read")
    prefix = parse_rule("Bash(git diff:*)", "allow", SOURCE)
    assert prefix.bash is not None and prefix.bash.words == ("git", "diff") and prefix.bash.prefix
    star = parse_rule("Bash(*)", "allow", SOURCE)
    assert star.tool_wide
    edit = parse_rule("Edit(src/**)", "deny", SOURCE)
    assert edit.path is not None and edit.path.pattern == "src/**"


def test_families() -> None:
    edit = parse_rule("Edit", "allow", SOURCE)
    assert edit.names("Write") and edit.names("Edit") and not edit.names("Read")
    write = parse_rule("Write(x)", "allow", SOURCE)
    assert write.names("Write") and not write.names("Edit")
    read = parse_rule("Read(./.env)", "deny", SOURCE)
    assert read.names("Grep") and read.names("Glob") and not read.names("Bash")


def test_mcp_rules() -> None:
    server = parse_rule("mcp__srv", "allow", SOURCE)
    assert server.names("mcp__srv__do") and server.names("mcp__srv__look")
    assert not server.names("mcp__srv2__do") and not server.names("mcp__other__do")
    star = parse_rule("mcp__srv__*", "allow", SOURCE)
    assert star.names("mcp__srv__do")
    one = parse_rule("mcp__srv__do", "allow", SOURCE)
    assert one.names("mcp__srv__do") and not one.names("mcp__srv__look")


def test_a_tool_rule_names_one_tool_by_its_offered_or_its_full_listed_name() -> None:
    offered = "mcp__srv__get_a_very_long_name_of_a_tool_1a2b3c4d"
    listed = McpOrigin("srv", "get_a_very_long_name_of_a_tool_that_the_api_will_not_take_whole")
    assert parse_rule(offered, "deny", SOURCE).names(offered, listed)
    assert parse_rule(f"mcp__srv__{listed.tool}", "deny", SOURCE).names(offered, listed)
    assert not parse_rule(f"mcp__other__{listed.tool}", "deny", SOURCE).names(offered, listed)
    assert not parse_rule("mcp__srv__get_a_very_long_name", "deny", SOURCE).names(offered, listed)
    two = parse_rule("mcp__srv__a__b", "allow", SOURCE)
    assert two.names("mcp__srv__a__b") and not two.names("mcp__srv__a")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty"),
        ("Bash(git diff:*", "missing '\\)'"),
        ("Bash git diff)", "without '\\('"),
        ("Bash()", "empty parentheses"),
        ("bash(ls)", "did you mean Bash"),
        ("Grep(src/**)", "Read\\(...\\) rules cover Grep"),
        ("mcp__srv(x)", "takes no specifier"),
        ("WebFetch(example.com)", "name a host"),
        ("mcp__", "mcp__server"),
        ("mcp__*", "mcp__server"),
        ("mcp__srv__", "mcp__server"),
        ("mcp__srv__do*", "not a tool name"),
        ("mcp__srv__do__*", "mcp__server"),
        ("MCP__srv", "lower case"),
        ("Mcp__srv__do", "lower case"),
        ("mcp__srv_", "never begin or end with _"),
        ("mcp___srv", "never begin or end with _"),
        ("Bash(git * main)", "wildcard"),
        ("Read(~bob/x)", "~user"),
        ("Read(../x)", ".."),
        ("(ls)", "no tool name"),
        ("Bad Name", "not a tool name"),
    ],
)
def test_bad_rules_say_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(RuleError, match=problem):
        parse_rule(text, "allow", SOURCE)


def test_a_rule_must_be_a_string() -> None:
    with pytest.raises(RuleError, match="must be a string"):
        parse_rule(42, "allow", SOURCE)  # type: ignore[arg-type]
