"""Optional YAML frontmatter at the top of a command, skill or agent file.

Strict YAML first (pyyaml is imported only when there is a frontmatter). Files written for
Claude Code often are not strict YAML (`argument-hint: [file] [--flag]`, `description: Use
when: …`), and Claude Code reads them anyway; so when YAML fails, the lines are read leniently
(skills/lenient.py) and `Frontmatter.warning` names the file and the line YAML stopped at.
Only an opening `---` that is never closed is an error: then where the body starts is unknown.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from agentcli.bounds import JSON_DIGITS
from agentcli.errors import UsageError
from agentcli.permissions.rules import split_rule_list
from agentcli.skills.lenient import read_leniently

BOM = "\ufeff"


class SkillFileError(UsageError):
    """A skill file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class Frontmatter:
    fields: dict[str, Any]
    body: str
    warning: str | None = None
    """Set when the frontmatter was not strict YAML and was read line by line: says where and why."""


@functools.lru_cache(maxsize=2048)
def read_frontmatter(text: str, origin: str) -> Frontmatter:
    """The fields and the body of `text`. A file not starting with a `---` line has no frontmatter.

    Files are read again before every message, so a text already parsed is not parsed again
    (the result is shared: do not change its `fields`)."""
    text = text.removeprefix(BOM)
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return Frontmatter({}, text)
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            raw = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            return _parse(raw, body, origin)
    raise SkillFileError(f"Malformed frontmatter in {origin}: the opening `---` line is never closed.")


def _parse(raw: str, body: str, origin: str) -> Frontmatter:
    if not raw.strip():
        return Frontmatter({}, body)
    import yaml

    try:
        data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml's: 20x faster
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        if where is None or where.line >= raw.count("\n"):  # ran into the end: where the unclosed thing began
            where = getattr(error, "context_mark", None) or where
        line = where.line + 2 if where is not None else 2  # + the `---` line, 1-based
        problem = getattr(error, "problem", None) or str(error)
        return _lenient(raw, body, f"{origin}, line {line}: the frontmatter is not valid YAML ({problem})")
    except ValueError:  # YAML, but with a number Python refuses to read
        why = f"{origin}: the frontmatter holds a number of more than {JSON_DIGITS:,} digits"
        return _lenient(raw, body, why)
    if data is None:
        return Frontmatter({}, body)
    if not isinstance(data, dict):
        return _lenient(
            raw, body, f"{origin}, line 2: the frontmatter is {type(data).__name__}, not `key: value` lines"
        )
    return Frontmatter({str(key): value for key, value in data.items()}, body)


def _lenient(raw: str, body: str, why: str) -> Frontmatter:
    return Frontmatter(read_leniently(raw), body, f"{why}; read each `key: value` line as written.")


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
