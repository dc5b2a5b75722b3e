"""Reading a frontmatter that is not strict YAML, the way its author meant it.

- A line `key: value` at the left margin starts a field; the value is the rest of the line.
- Lines after it that do not start a field continue its value: indented ones, ones that are
  not `key:` lines (`<commentary>`), and any line while a tag the value opened is not closed
  yet (`<example>` … `user: …` … `</example>`, as agent descriptions hold examples). They are
  joined with spaces, or kept line by line after `|` and folded after `>`, as YAML would;
  lines that are all `- item` make a list.
- A one-line value that is valid YAML on its own keeps YAML's reading (`true`, `20`,
  `["Read", "Grep"]`, `"quoted"`); any other (`[file] [--flag]`, `Use when: …`) stays the text
  as written. A `# comment` line at the margin is skipped.
"""

from __future__ import annotations

import re
from typing import Any

_FIELD = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(?P<value>.*))?")
_BLOCK = re.compile(r"[|>][+-]?")
_OPEN_TAG = re.compile(r"<([A-Za-z][\w-]*)>")  # a bare tag: `<function call omitted>` is prose
_CLOSE_TAG = re.compile(r"</([A-Za-z][\w-]*)\s*>")


def read_leniently(raw: str) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    key: str | None = None
    first = ""
    more: list[str] = []
    for line in raw.splitlines():
        match = _FIELD.fullmatch(line.rstrip())
        if match and not line[:1].isspace() and not _inside_tag(first, more):
            if key is not None:
                fields[key] = _value(first, more)
            key, first, more = match.group("key"), (match.group("value") or "").strip(), []
        elif key is not None and not line.startswith("#"):
            more.append(line)
    if key is not None:
        fields[key] = _value(first, more)
    return fields


def _inside_tag(first: str, more: list[str]) -> bool:
    """Whether the value so far opened a tag (`<example>`) it has not closed."""
    text = " ".join([first, *more])
    opened = _OPEN_TAG.findall(text)
    closed = _CLOSE_TAG.findall(text)
    return any(opened.count(tag) > closed.count(tag) for tag in set(opened))


def _value(first: str, more: list[str]) -> Any:
    lines = _dedent(more)
    while lines and not lines[-1].strip():
        lines.pop()
    if _BLOCK.fullmatch(first):
        if first.startswith("|"):
            return "\n".join(lines)
        return _fold(lines)
    if not first and lines and all(line.lstrip().startswith("- ") for line in lines if line.strip()):
        return [_scalar(line.lstrip()[2:].strip()) for line in lines if line.strip()]
    if lines:
        return " ".join(part for part in [first, *(line.strip() for line in lines)] if part)
    return _scalar(first)


def _scalar(text: str) -> Any:
    """YAML's reading of a one-line value when it has one that is not a mapping; else the text."""
    if not text:
        return None
    import yaml

    try:
        parsed = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError):  # ValueError: a number of more digits than Python reads
        return text
    return text if isinstance(parsed, dict) or parsed is None else parsed


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in lines]


def _fold(lines: list[str]) -> str:
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n".join(" ".join(p) for p in paragraphs if p)
