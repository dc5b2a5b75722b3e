"""Optional YAML frontmatter at the top of a skill file (pyyaml is imported only when present)."""

from __future__ import annotations

from typing import Any

from agentcli.bounds import JSON_DIGITS
from agentcli.errors import UsageError
from agentcli.permissions.rules import split_rule_list


class SkillFileError(UsageError):
    """A skill file that cannot be used; the message names the file."""


def split_frontmatter(text: str, origin: str) -> tuple[dict[str, Any], str]:
    """(frontmatter fields, body). A file not starting with a `---` line has no frontmatter."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            raw = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            return _parse(raw, origin), body
    raise SkillFileError(f"Malformed frontmatter in {origin}: the opening `---` line is never closed.")


def _parse(raw: str, origin: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    import yaml

    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as error:
        # Where an unclosed construct began says more than the end of input it ran into.
        where = getattr(error, "context_mark", None) or getattr(error, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise SkillFileError(f"Malformed frontmatter in {origin}{line}: {problem}.") from None
    except ValueError:  # YAML, but with a number Python refuses to read
        raise SkillFileError(
            f"Malformed frontmatter in {origin}: it holds a number of more than {JSON_DIGITS:,} digits."
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SkillFileError(
            f"Malformed frontmatter in {origin}: expected `key: value` lines, not {type(data).__name__}."
        )
    return {str(key): value for key, value in data.items()}


def split_rules(value: object, origin: str) -> list[str]:
    """`allowed-tools` as a list, or a string like `Read, Bash(git diff:*)` (commas/spaces outside parentheses)."""
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        items: list[str] = value
    elif isinstance(value, str):
        items = [value]
    else:
        raise SkillFileError(f"Malformed frontmatter in {origin}: allowed-tools must be a string or a list of strings.")
    return [rule for item in items for rule in split_rule_list(item)]
